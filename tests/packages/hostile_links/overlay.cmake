# hostile_links: tests/packages/minimal plus one option (tests/test_outside_links.py,
# tests/test_hostile_corpus.py):
#   HOSTILE_INSTALLED_LINK  a file the build links to and installs the link of (share/hostile/leak.txt)
set(HOSTILE_INSTALLED_LINK "" CACHE FILEPATH "Target of the symbolic link installed as share/hostile/leak.txt")
if(HOSTILE_INSTALLED_LINK)
  file(CREATE_LINK "${HOSTILE_INSTALLED_LINK}" "${PROJECT_BINARY_DIR}/leak.txt" SYMBOLIC)
  install(FILES "${PROJECT_BINARY_DIR}/leak.txt" DESTINATION share/hostile)
endif()
