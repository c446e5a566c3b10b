# Included by buildkit at the first project() call of every configure it runs
# (through CMAKE_PROJECT_TOP_LEVEL_INCLUDES), so projects get these without
# editing their CMakeLists.txt. CMake includes it *before* that project() enables
# its languages, so nothing here may test CMAKE_<LANG>_COMPILER_ID directly: the
# flags are generator expressions, evaluated per compile, and what needs to know
# the CUDA compiler runs deferred, at the end of the top-level CMakeLists.txt
# (after a later enable_language(CUDA) too).

# `include(Buildkit)` finds buildkit's helper module.
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")

# Binaries must not embed the absolute source or build folder: wheels built in two
# folders stay byte-identical and leak no local paths.
if(NOT BUILDKIT_KEEP_PATHS)
  # The build folder is usually inside the source folder: its map comes last, and
  # GCC and Clang let the last matching map win.
  set(_buildkit_path_maps "${CMAKE_SOURCE_DIR}=." "${CMAKE_BINARY_DIR}=build")
  foreach(_buildkit_map IN LISTS _buildkit_path_maps)
    add_compile_options(
      "$<$<COMPILE_LANG_AND_ID:C,GNU,Clang,AppleClang>:-ffile-prefix-map=${_buildkit_map}>"
      "$<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang>:-ffile-prefix-map=${_buildkit_map}>"
      "$<$<COMPILE_LANG_AND_ID:CUDA,Clang>:-ffile-prefix-map=${_buildkit_map}>")
    if(NOT CMAKE_HOST_WIN32)
      # nvcc hands it to the host compiler, which preprocesses the device code too:
      # __FILE__ (assert) in host and device code and host debug info are mapped.
      add_compile_options("$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:-Xcompiler=-ffile-prefix-map=${_buildkit_map}>")
    endif()
  endforeach()
  unset(_buildkit_map)
  unset(_buildkit_path_maps)
  # The build-tree RPATH (absolute by default) is part of what the linker hashes
  # into .note.gnu.build-id, and the install step rewrites the RPATH but not the
  # build-id: $ORIGIN-relative build RPATHs keep installed libraries identical.
  set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _buildkit_reproducible_cuda)
endif()

# nvcc's output differs between two folders (and between two runs) unless:
#  * -objtemp (documented since CUDA 12.4): nvcc names its intermediate files
#    after the object, not /tmp/tmpxft_<pid>_...; the host object records that
#    name as its STT_FILE symbol, which ends up in the library's .symtab.
#  * -Xcudafe=--orig_src_path_name=<project name>/<path in the project>: cudafe++ hashes
#    the absolute source path into the module id, which names every anonymous
#    namespace (_GLOBAL__N__<hash>_...) and so the kernels in one, in the host
#    symbols and in the device code. nvcc passes the absolute path first; cudafe++
#    takes the last one given. Per source file, so every target's CUDA sources are
#    visited once all of them exist.
function(_buildkit_reproducible_cuda)
  if(NOT CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA")
    return()  # CUDA not enabled, or clang (only the path maps above apply)
  endif()
  if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.4)
    set(objtemp "$<$<COMPILE_LANGUAGE:CUDA>:-objtemp>")
  endif()
  _buildkit_all_targets(targets "${CMAKE_SOURCE_DIR}")
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(imported ${target} IMPORTED)
    if(imported)
      continue()
    endif()
    get_target_property(source_dir ${target} SOURCE_DIR)
    get_target_property(binary_dir ${target} BINARY_DIR)
    get_target_property(sources ${target} SOURCES)
    set(has_cuda OFF)
    foreach(source IN LISTS sources)
      if(source MATCHES "\\$<")
        continue()  # a generator expression: its files are only known at generation
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}" NORMALIZE OUTPUT_VARIABLE path)
      if(NOT EXISTS "${path}")
        cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${binary_dir}" NORMALIZE OUTPUT_VARIABLE path)
      endif()
      get_source_file_property(language "${path}" TARGET_DIRECTORY ${target} LANGUAGE)
      if(NOT language STREQUAL "CUDA" AND NOT (path MATCHES "\\.cu$" AND NOT language))
        continue()
      endif()
      set(has_cuda ON)
      # Named as the path maps name it: build/<...> for generated files, else
      # relative to the project; files outside both keep nvcc's default.
      cmake_path(IS_PREFIX CMAKE_BINARY_DIR "${path}" NORMALIZE in_build)
      cmake_path(IS_PREFIX CMAKE_SOURCE_DIR "${path}" NORMALIZE in_source)
      if(in_build)
        cmake_path(RELATIVE_PATH path BASE_DIRECTORY "${CMAKE_BINARY_DIR}" OUTPUT_VARIABLE relative)
        set(relative "build/${relative}")
      elseif(in_source)
        cmake_path(RELATIVE_PATH path BASE_DIRECTORY "${CMAKE_SOURCE_DIR}" OUTPUT_VARIABLE relative)
      else()
        continue()
      endif()
      if(relative MATCHES "[, ;\"]")
        continue()  # -X options split their value at commas; keep it simple
      endif()
      set(option "-Xcudafe=--orig_src_path_name=${PROJECT_NAME}/${relative}")
      get_source_file_property(options "${path}" TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
      if(NOT options OR NOT option IN_LIST options)  # a file shared by two targets
        set_property(SOURCE "${path}" TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS "${option}")
      endif()
    endforeach()
    if(has_cuda AND objtemp)
      set_property(TARGET ${target} APPEND PROPERTY COMPILE_OPTIONS "${objtemp}")
    endif()
  endforeach()
endfunction()

function(_buildkit_all_targets out directory)
  get_property(found DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirectories DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    _buildkit_all_targets(more "${subdirectory}")
    list(APPEND found ${more})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
