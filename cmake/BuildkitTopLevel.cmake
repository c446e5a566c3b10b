# Included by buildkit at the first project() call of every configure it runs
# (through CMAKE_PROJECT_TOP_LEVEL_INCLUDES), so projects get these without
# editing their CMakeLists.txt.

# `include(Buildkit)` finds buildkit's helper module.
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")

# Binaries must not embed the absolute source or build folder: wheels built in two
# folders stay byte-identical and leak no local paths. Only for compilers that
# understand the flag; nvcc forwards it to its host compiler.
if(NOT BUILDKIT_KEEP_PATHS)
  foreach(_buildkit_lang C CXX)
    if(CMAKE_${_buildkit_lang}_COMPILER_ID MATCHES "GNU|Clang")
      add_compile_options(
        "$<$<COMPILE_LANGUAGE:${_buildkit_lang}>:-ffile-prefix-map=${CMAKE_SOURCE_DIR}=.>"
        "$<$<COMPILE_LANGUAGE:${_buildkit_lang}>:-ffile-prefix-map=${CMAKE_BINARY_DIR}=build>")
    endif()
  endforeach()
endif()
