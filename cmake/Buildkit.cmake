# Helpers for projects built by buildkit: `include(Buildkit)` after project().

include_guard(GLOBAL)

# buildkit_python_binding_library(<name> SOURCES ... [LINK ...])
#
# The shared library that holds a package's Python bindings. The `_C` module that
# buildkit's build_ext compiles is a one-line stub linking it, so the bindings are
# built (and rebuilt incrementally) by CMake and Ninja, not by setuptools.
function(buildkit_python_binding_library name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;LINK")
  if(NOT TARGET Python::Module)
    find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
  endif()
  add_library(${name} SHARED ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE Python::Module ${ARG_LINK})
  # The interpreter provides the Python symbols at run time; never link libpython.
  if(APPLE)
    target_link_options(${name} PRIVATE "LINKER:-undefined,dynamic_lookup")
  endif()
  set_target_properties(${name} PROPERTIES C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden)
endfunction()

# buildkit_relative_rpath(<target> [<path relative to the target's install dir>])
#
# Installed libraries find their siblings (and an optional relative folder) through
# $ORIGIN / @loader_path, never through an absolute build path.
function(buildkit_relative_rpath target)
  set(relative "${ARGN}")
  if(APPLE)
    set(origin "@loader_path")
  else()
    set(origin "$ORIGIN")
  endif()
  set(paths "${origin}")
  if(relative)
    list(APPEND paths "${origin}/${relative}")
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${paths}")
endfunction()
