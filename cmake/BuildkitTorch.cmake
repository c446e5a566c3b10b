# PyTorch C++/CUDA extensions: `include(BuildkitTorch)` after project().
#
# buildkit_torch_extension(<target> [MODULE | LIBRARY] [NAME <module name>]
#                          [USE_SABI <3.X>] [NO_SOABI] SOURCES <file>...)
#
#   MODULE (the default): a Python extension module in pybind11 style, what
#     CppExtension/CUDAExtension build: PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { ... }.
#     Named <NAME or target><Python's extension suffix>; links torch and torch_python.
#     USE_SABI 3.X: built for the stable ABI of Python 3.X (Py_LIMITED_API, named .abi3.so),
#     what cpp_extension's py_limited_api=True builds: torch_python is not linked (it uses
#     more than the limited API). NO_SOABI: named <name>.so, without Python's ABI tag
#     (cpp_extension's BuildExtension.with_options(no_python_abi_suffix=True)).
#   LIBRARY: a shared library of TORCH_LIBRARY registrations, loaded with
#     torch.ops.load_library(); links torch only (no Python).
#
# Install the target yourself (install(TARGETS <target> DESTINATION ...)). After the
# first call TORCH_INSTALL_PREFIX and Torch_VERSION are set, and buildkit::torch /
# buildkit::torch_python are targets other targets may link.
#
# What it does that every torch-extension CMakeLists otherwise does by hand:
#  * CUDA (the CUDA language is enabled and USE_CUDA is not off): find_package(Torch)
#    runs inside a function, so torch's public/cuda.cmake neither overrides
#    CMAKE_CUDA_ARCHITECTURES (it sets it OFF) nor leaves its own -gencode flags in
#    CMAKE_CUDA_FLAGS (from TORCH_CUDA_ARCH_LIST or its "Common" list, sm_50 included,
#    which CUDA 13 rejects): buildkit's architecture list stays. A find_package(Torch)
#    of your own before the first call is repaired in your scope the same way.
#  * ${TORCH_LIBRARIES} names CUDA_nvrtc_LIBRARY, NOTFOUND when the toolkit has no
#    NVRTC: NOTFOUND entries are dropped, nothing requires NVRTC.
#  * CPU only (no CUDA language, or USE_CUDA off): torch's CMake config is not run at
#    all, because a CUDA build of torch would look for a CUDA toolkit there and stop
#    without one. The extension compiles and links against torch's headers and
#    libraries (c10, torch, torch_cpu) as CppExtension does, and needs no toolkit.
#  * libtorch.so of a CUDA build is only there to pull in torch_cpu and torch_cuda, and a
#    linker with --as-needed would drop it: the torch libraries are linked --no-as-needed.
#  * torch_python (for MODULE) comes from ${TORCH_INSTALL_PREFIX}/lib.
#  * the C++ standard torch's own config asks for, applied to CUDA sources too (torch's
#    config names no CUDA standard, yet its headers need the same one under nvcc): read
#    from the config's text in every spelling torch has used (CXX_STANDARD on its torch
#    target up to 2.14, the cxx_std_20 compile feature from 2.15, a -std=c++NN flag);
#    a config naming none stops the configure unless BUILDKIT_TORCH_CXX_STANDARD is set,
#    which also overrides the config. A target's own higher standard is kept. And
#    _GLIBCXX_USE_CXX11_ABI when torch's config states it (TORCH_CXX_FLAGS; torch 2.13's
#    does not: it is built with the compiler's default).
#  * TORCH_EXTENSION_NAME=<NAME or target> and TORCH_API_INCLUDE_EXTENSION_H, as
#    cpp_extension defines them, and for .cu files cpp_extension's nvcc flags.
#  * A precompiled header of torch's headers for the C++ sources (never CUDA: nvcc cannot
#    use one): <torch/extension.h> for a MODULE, <torch/all.h> and <torch/library.h> for a
#    LIBRARY and a USE_SABI module (torch's Python API is more than the limited API),
#    compiled once for every target of the same headers (the first one's, reused by the
#    others) and force-included into each C++ source, which then parses torch's headers
#    in a fraction of a second. target_precompile_headers makes it
#    a build step of its own whose dependencies (torch's headers, the flags) ninja tracks:
#    a changed define or header rebuilds the header and every object. Off with
#    -DBUILDKIT_TORCH_PCH=OFF (buildkit passes its torch-precompiled-headers option as
#    that). A source with a #define or #undef before its first #include is compiled
#    without it (the force-included header would come before that macro), said by name.
#    With clang, CMake also compiles the header with -fpch-instantiate-templates, so the
#    template instantiations torch's headers ask for are made once in the header instead of
#    in every source; GCC's header keeps only the parse (docs/benchmarks.md measures both).
#    Compiler caches: ccache gets CCACHE_SLOPPINESS=pch_defines,time_macros on top of its
#    own sloppiness for these targets, and with clang -Xclang -fno-pch-timestamp (what its
#    manual asks of precompiled headers); a target's C++ sources skip sccache, which
#    cannot cache them (sccache issue 615), also said by name.
#
# torch must be installed where the build runs: buildkit puts that environment's
# site-packages (mirrored into build/build-env) on CMAKE_PREFIX_PATH.

include_guard(GLOBAL)

# cpp_extension's COMMON_NVCC_FLAGS: torch's headers are written for them.
set(_BUILDKIT_TORCH_NVCC_FLAGS
  -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__
  -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr)

function(buildkit_torch_extension target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "MODULE;LIBRARY;NO_SOABI" "NAME;USE_SABI" "SOURCES")
  if(ARG_MODULE AND ARG_LIBRARY)
    message(FATAL_ERROR "buildkit_torch_extension(${target}): MODULE and LIBRARY exclude each other.")
  endif()
  if(ARG_LIBRARY AND (ARG_USE_SABI OR ARG_NO_SOABI))
    message(FATAL_ERROR "buildkit_torch_extension(${target}): USE_SABI and NO_SOABI name a Python module; "
                        "a LIBRARY is none.")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "buildkit_torch_extension(${target}): SOURCES is missing.")
  endif()
  set(name "${target}")
  if(ARG_NAME)
    set(name "${ARG_NAME}")
  endif()

  _buildkit_load_torch()
  if(ARG_LIBRARY)
    add_library(${target} SHARED ${ARG_SOURCES})
    target_link_libraries(${target} PRIVATE buildkit::torch)
  else()
    set(soabi WITH_SOABI)
    if(ARG_NO_SOABI)
      set(soabi "")
    endif()
    if(ARG_USE_SABI)
      if(CMAKE_VERSION VERSION_LESS 3.26)
        message(FATAL_ERROR "buildkit_torch_extension(${target} USE_SABI): CMake 3.26 or newer builds for "
                            "Python's stable ABI; this is CMake ${CMAKE_VERSION}.")
      endif()
      find_package(Python REQUIRED COMPONENTS Interpreter Development.SABIModule)
      Python_add_library(${target} MODULE USE_SABI ${ARG_USE_SABI} ${soabi} ${ARG_SOURCES})
      target_link_libraries(${target} PRIVATE buildkit::torch)
    else()
      find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
      Python_add_library(${target} MODULE ${soabi} ${ARG_SOURCES})
      target_link_libraries(${target} PRIVATE buildkit::torch buildkit::torch_python)
    endif()
  endif()
  if(ARG_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME "${name}")
  endif()
  target_compile_definitions(${target} PRIVATE TORCH_EXTENSION_NAME=${name} TORCH_API_INCLUDE_EXTENSION_H)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${_BUILDKIT_TORCH_NVCC_FLAGS}>")
  if(ARG_LIBRARY OR ARG_USE_SABI)  # torch/extension.h is torch's Python API, beyond the limited one
    _buildkit_torch_precompiled_headers(${target} "${ARG_USE_SABI}" torch/all.h torch/library.h)
  else()
    _buildkit_torch_precompiled_headers(${target} "" torch/extension.h)
  endif()

  get_target_property(standard buildkit::torch BUILDKIT_CXX_STANDARD)
  foreach(language CXX CUDA)
    get_target_property(own ${target} ${language}_STANDARD)
    if(NOT own OR own LESS standard)
      set_target_properties(${target} PROPERTIES ${language}_STANDARD ${standard}
                                                 ${language}_STANDARD_REQUIRED ON)
    endif()
  endforeach()
  if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND standard EQUAL 20 AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    # CMake before 3.25.2 knows no nvcc flag for CUDA C++20 (torch's standard since 2.10) and
    # refuses the target ("requires the language dialect CUDA20"): the flag CMake 3.25.2 gives
    # nvcc 12 and later, for this folder's targets (the generator reads it from there).
    foreach(kind STANDARD EXTENSION)
      set(CMAKE_CUDA20_${kind}_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_${kind}_COMPILE_OPTION "-std=c++20" PARENT_SCOPE)
    endforeach()
    message(STATUS "buildkit: ${target}: CMake ${CMAKE_VERSION} knows no nvcc flag for CUDA C++20 (3.25.2 "
                   "and later do): buildkit gives it, -std=c++20")
  endif()
  get_target_property(abi buildkit::torch BUILDKIT_CXX11_ABI)
  if(NOT abi STREQUAL "")
    target_compile_definitions(${target} PRIVATE _GLIBCXX_USE_CXX11_ABI=${abi})
  endif()

  # torch's public/cuda.cmake set CMAKE_CUDA_ARCHITECTURES to OFF where the caller ran
  # find_package(Torch) itself: the target keeps the list CMake was configured with.
  get_target_property(architectures ${target} CUDA_ARCHITECTURES)
  if(architectures STREQUAL "OFF" AND DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES})
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
  endif()

  _buildkit_repair_torch_scope()
  get_target_property(prefix buildkit::torch BUILDKIT_INSTALL_PREFIX)
  get_target_property(version buildkit::torch BUILDKIT_VERSION)
  set(TORCH_INSTALL_PREFIX "${prefix}" PARENT_SCOPE)
  set(Torch_VERSION "${version}" PARENT_SCOPE)
  if(DEFINED CMAKE_CUDA_FLAGS)
    set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}" PARENT_SCOPE)
  endif()
  if(DEFINED CUDA_NVCC_FLAGS)
    set(CUDA_NVCC_FLAGS "${CUDA_NVCC_FLAGS}" PARENT_SCOPE)
  endif()
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "OFF")
    unset(CMAKE_CUDA_ARCHITECTURES PARENT_SCOPE)  # uncovers the cache value again
  endif()
endfunction()

# The precompiled header of torch's ``headers`` for the C++ sources of ``target`` (see the
# top), ``sabi`` the stable-ABI version it is built for (empty: none).
function(_buildkit_torch_precompiled_headers target sabi)
  if(DEFINED BUILDKIT_TORCH_PCH AND NOT BUILDKIT_TORCH_PCH)
    message(STATUS "buildkit: ${target}: no precompiled torch headers (BUILDKIT_TORCH_PCH is ${BUILDKIT_TORCH_PCH})")
    return()
  endif()

  # A macro a source defines before its includes would reach torch's headers without the
  # precompiled header, and come after it with one: such a source goes without.
  get_target_property(sources ${target} SOURCES)
  set(skipped "")
  set(using "")
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" OUTPUT_VARIABLE path)
    if(NOT source MATCHES "\\.(cpp|cc|cxx|c\\+\\+|C)$" OR NOT EXISTS "${path}")
      continue()
    endif()
    list(APPEND using "${source}")
    file(READ "${path}" text)
    string(FIND "${text}" "#include" first)
    if(first GREATER -1)
      string(SUBSTRING "${text}" 0 ${first} text)
    endif()
    string(REGEX REPLACE "//[^\n]*" "" text "${text}")  # a commented-out #define is none
    if(text MATCHES "(^|\n)[ \t]*#[ \t]*(define|undef)[ \t]")
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      list(APPEND skipped "${source}")
      list(REMOVE_ITEM using "${source}")
    endif()
  endforeach()
  if(skipped)
    message(STATUS "buildkit: ${target}: compiled without the precompiled torch headers, which would come "
                   "before the macro each defines ahead of its first #include: ${skipped}")
  endif()
  if(NOT using)  # no C++ source would use it (CUDA sources never do)
    return()
  endif()

  # One precompiled header per set of headers and stable-ABI version: a project of many
  # one-file extensions (torch_scatter's shape) compiles torch's headers once, not once per
  # target, where each such compile costs as much as the source itself. The first target of
  # a set has its own; from the second one on, the set's header is compiled in a target of
  # its own that defines no target's macros (GCC refuses a header compiled with a macro,
  # such as <target>_EXPORTS, that a compile lacks), and every target of the set uses it
  # (REUSE_FROM). GCC and Clang check that the header fits each compile's flags and macros
  # (-Winvalid-pch says so) and parse the headers instead where it does not: a target whose
  # own flags differ is slower, never wrong. REUSE_FROM is set only at the end of the
  # configure, once it is known to stay: CMake before 3.28 can neither unset it (3.25 aborts
  # on a property set to nothing, refuses an empty one) nor set it beside a PRECOMPILE_HEADERS
  # that was set to "" (only one unset counts as none).
  list(TRANSFORM ARGN PREPEND "$<$<COMPILE_LANGUAGE:CXX>:<" OUTPUT_VARIABLE headers)
  list(TRANSFORM headers APPEND ">>")
  string(MD5 key "${ARGN}|${sabi}")
  get_property(first GLOBAL PROPERTY _BUILDKIT_TORCH_PCH_FIRST_${key})
  get_property(shared GLOBAL PROPERTY _BUILDKIT_TORCH_PCH_SHARED_${key})
  list(LENGTH using count)
  set_property(GLOBAL APPEND PROPERTY _BUILDKIT_TORCH_PCH_SOURCES_${key} ${count})
  set_property(GLOBAL APPEND PROPERTY _BUILDKIT_TORCH_PCH_USERS_${key} ${target})
  if(NOT first)
    target_precompile_headers(${target} PRIVATE ${headers})
    set_property(GLOBAL PROPERTY _BUILDKIT_TORCH_PCH_FIRST_${key} ${target})
    # The targets' language standard and extensions may still be set after this call (a
    # generated buildkit.torch project sets CXX_EXTENSIONS OFF, as cpp_extension passes
    # -std=c++NN), and how many sources use the header is known once every target is:
    # both are settled at the end of the configure. (A deferred call's arguments are read
    # when it runs: the values are written into it.)
    list(JOIN ARGN " " listed)
    cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY [[${CMAKE_SOURCE_DIR}]] CALL \
                              _buildkit_torch_pch_settle ${key} ${listed})")
  elseif(NOT shared)
    string(SUBSTRING "${key}" 0 8 short)
    set(shared buildkit_torch_pch_${short})
    set(source "${CMAKE_BINARY_DIR}/buildkit_torch_pch/${short}.cpp")
    file(CONFIGURE OUTPUT "${source}" CONTENT "// compiled so that its precompiled torch headers exist\n")
    # CMake compiles a target's header only for a source that uses it: its one source, empty,
    # is compiled too, which with GCC costs about one source (the header's pending template
    # instantiations), beside the targets' own sources.
    add_library(${shared} OBJECT EXCLUDE_FROM_ALL "${source}")
    target_link_libraries(${shared} PRIVATE buildkit::torch)
    if("torch/extension.h" IN_LIST ARGN)  # torch's Python API: Python.h
      target_link_libraries(${shared} PRIVATE Python::Module)
    endif()
    target_compile_definitions(${shared} PRIVATE TORCH_API_INCLUDE_EXTENSION_H)
    get_target_property(standard buildkit::torch BUILDKIT_CXX_STANDARD)
    set_target_properties(${shared} PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_STANDARD ${standard})
    target_precompile_headers(${shared} PRIVATE ${headers})
    _buildkit_torch_pch_launcher(${shared})
    set_property(GLOBAL PROPERTY _BUILDKIT_TORCH_PCH_SHARED_${key} ${shared})
  endif()
  _buildkit_torch_pch_launcher(${target})
endfunction()

# At the end of the configure, for the precompiled header of ``key`` (torch's headers ARGN):
# where fewer C++ sources would use it than BUILDKIT_TORCH_PCH_MIN_SOURCES (buildkit sets it
# for a wheel build: there compiling it first costs more than it saves), none, said by name.
# Otherwise a shared header is compiled with the C++ standard and extensions of the first
# target that uses it, and every target of the same settings reuses it; a target whose own
# differ (GCC would refuse the header for it) gets a header of its own instead, said by name.
function(_buildkit_torch_pch_settle key)
  get_property(shared GLOBAL PROPERTY _BUILDKIT_TORCH_PCH_SHARED_${key})
  get_property(users GLOBAL PROPERTY _BUILDKIT_TORCH_PCH_USERS_${key})
  get_property(counts GLOBAL PROPERTY _BUILDKIT_TORCH_PCH_SOURCES_${key})
  list(GET users 0 first)
  list(JOIN users ", " named)
  set(sources 0)
  foreach(count IN LISTS counts)
    math(EXPR sources "${sources} + ${count}")
  endforeach()
  if(BUILDKIT_TORCH_PCH_MIN_SOURCES AND sources LESS BUILDKIT_TORCH_PCH_MIN_SOURCES)
    set_property(TARGET ${first} PROPERTY PRECOMPILE_HEADERS)  # no value: unset
    foreach(user IN LISTS users)
      # Without the header, a compiler cache caches these sources as any other.
      set_property(TARGET ${user} PROPERTY CXX_COMPILER_LAUNCHER "${CMAKE_CXX_COMPILER_LAUNCHER}")
    endforeach()
    if(shared)  # built by no target now
      set_property(TARGET ${shared} PROPERTY PRECOMPILE_HEADERS)
    endif()
    message(STATUS "buildkit: ${named}: no precompiled torch headers in this build: ${sources} C++ sources "
                   "would use them, fewer than ${BUILDKIT_TORCH_PCH_MIN_SOURCES}, where compiling them first "
                   "costs more than it saves (a develop build keeps them for the edit loop)")
    return()
  endif()
  if(NOT shared)
    return()
  endif()
  # The header is compiled as the first target compiles: its C++ standard and extensions, its
  # compile options (torch_scatter's -DAT_PARALLEL_OPENMP, which torch's headers read), its
  # definitions less TORCH_EXTENSION_NAME (each target's own; torch's headers never read it,
  # and GCC refuses a header compiled with a macro a compile defines otherwise) and its
  # include folders. A target that differs in any of these gets a header of its own.
  foreach(property CXX_STANDARD CXX_EXTENSIONS COMPILE_OPTIONS INCLUDE_DIRECTORIES)
    get_target_property(value ${first} ${property})
    if(NOT value STREQUAL "value-NOTFOUND")
      set_property(TARGET ${shared} PROPERTY ${property} "${value}")
    endif()
  endforeach()
  _buildkit_torch_pch_flags(${first} flags_of_first)
  get_target_property(definitions ${first} COMPILE_DEFINITIONS)
  list(FILTER definitions EXCLUDE REGEX "^TORCH_EXTENSION_NAME=")
  set_property(TARGET ${shared} PROPERTY COMPILE_DEFINITIONS "${definitions}")
  list(TRANSFORM ARGN PREPEND "$<$<COMPILE_LANGUAGE:CXX>:<" OUTPUT_VARIABLE headers)
  list(TRANSFORM headers APPEND ">>")
  set_property(TARGET ${first} PROPERTY PRECOMPILE_HEADERS)  # no value: unset; it reuses the shared one
  set(sharing "")
  foreach(user IN LISTS users)
    _buildkit_torch_pch_flags(${user} flags)
    if(flags STREQUAL flags_of_first)
      target_precompile_headers(${user} REUSE_FROM ${shared})
      list(APPEND sharing ${user})
    else()
      target_precompile_headers(${user} PRIVATE ${headers})
      message(STATUS "buildkit: ${user}: precompiled torch headers of its own (its C++ standard, extensions, "
                     "compile options, definitions or include folders differ from ${first}'s)")
    endif()
  endforeach()
  list(JOIN sharing ", " sharing)
  message(STATUS "buildkit: ${sharing}: one precompiled header of torch's headers, in ${shared}")
endfunction()

# What of ``target``'s compile settings a shared precompiled header must match, as one string.
function(_buildkit_torch_pch_flags target out)
  set(flags "")
  foreach(property CXX_STANDARD CXX_EXTENSIONS COMPILE_OPTIONS INCLUDE_DIRECTORIES COMPILE_DEFINITIONS)
    get_target_property(value ${target} ${property})
    if(property STREQUAL "COMPILE_DEFINITIONS")
      list(FILTER value EXCLUDE REGEX "^TORCH_EXTENSION_NAME=")
    endif()
    string(APPEND flags "${property}=${value}|")
  endforeach()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# A compiler cache and the precompiled torch headers of ``target`` (see the top).
function(_buildkit_torch_pch_launcher target)
  get_target_property(launcher ${target} CXX_COMPILER_LAUNCHER)
  if(NOT launcher)
    return()
  endif()
  # The cache is the first word, or the one after `env NAME=VALUE` (a distributed build's own sccache server).
  set(name "")
  foreach(word IN LISTS launcher)
    cmake_path(GET word STEM stem)
    if(stem STREQUAL "sccache" OR stem STREQUAL "ccache")
      set(program "${word}")
      set(name "${stem}")
      break()
    endif()
  endforeach()
  if(name STREQUAL "sccache")
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "")
    message(STATUS "buildkit: ${target}: C++ sources compiled without sccache, which cannot cache "
                   "precompiled headers (sccache issue 615); -DBUILDKIT_TORCH_PCH=OFF keeps sccache instead")
    if(BUILDKIT_LOCAL_JOB_POOL)
      # A distributed build runs more jobs than this machine has cores: these compile here, in its pool.
      set_target_properties(${target} PROPERTIES JOB_POOL_COMPILE "${BUILDKIT_LOCAL_JOB_POOL}")
    endif()
  elseif(name STREQUAL "ccache")
    execute_process(COMMAND ${program} --get-config sloppiness OUTPUT_VARIABLE sloppiness
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
    if(failed)
      set(sloppiness "")
    endif()
    string(REGEX REPLACE "[ ,]+" ";" sloppiness "${sloppiness}")
    list(APPEND sloppiness pch_defines time_macros)
    list(REMOVE_DUPLICATES sloppiness)
    list(REMOVE_ITEM sloppiness "")
    list(JOIN sloppiness "," sloppiness)
    set_target_properties(${target} PROPERTIES
      CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=${sloppiness};${launcher}")
    set(timestamp "")
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      # clang stamps the times of the header's inputs into it, so the header compiled in another
      # build folder differs and every source through it misses (ccache's manual, "Precompiled
      # headers"); ninja's depfile, not the stamp, is what rebuilds a header gone stale.
      target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-Xclang -fno-pch-timestamp>")
      set(timestamp " and -Xclang -fno-pch-timestamp")
    endif()
    message(STATUS "buildkit: ${target}: ccache runs with CCACHE_SLOPPINESS=${sloppiness}${timestamp} for the "
                   "precompiled torch headers")
  endif()
endfunction()

# torch's -gencode flags out of this scope's CMAKE_CUDA_FLAGS and CUDA_NVCC_FLAGS (a
# find_package(Torch) of the caller's own put them there).
macro(_buildkit_repair_torch_scope)
  string(REGEX REPLACE "(-gencode|--generate-code)[= ]+arch=[^ ;]+" "" CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}")
  string(REGEX REPLACE "  +" " " CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}")
  list(FILTER CUDA_NVCC_FLAGS EXCLUDE REGEX "^(-gencode|--generate-code|arch=)")
endmacro()

# buildkit::torch (what every extension links) and buildkit::torch_python, once per
# directory; torch's standard, ABI, prefix and version are properties of buildkit::torch.
function(_buildkit_load_torch)
  if(TARGET buildkit::torch)
    return()
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(cuda OFF)
  if("CUDA" IN_LIST languages AND (NOT DEFINED USE_CUDA OR USE_CUDA))
    set(cuda ON)
  endif()

  if(TARGET torch AND TORCH_INSTALL_PREFIX)
    set(prefix "${TORCH_INSTALL_PREFIX}")  # the caller ran find_package(Torch) itself
    set(libraries ${TORCH_LIBRARIES})
  elseif(cuda)
    find_package(Torch REQUIRED)  # in this function: its CUDA settings end with it
    set(prefix "${TORCH_INSTALL_PREFIX}")
    set(libraries ${TORCH_LIBRARIES})
  else()
    _buildkit_torch_config_dir(config_dir)
    cmake_path(GET config_dir PARENT_PATH prefix)  # <prefix>/share/cmake/Torch
    cmake_path(GET prefix PARENT_PATH prefix)
    cmake_path(GET prefix PARENT_PATH prefix)
    foreach(library IN ITEMS torch torch_cpu c10)
      _buildkit_torch_library(path "${prefix}" ${library})
      list(APPEND libraries "${path}")
    endforeach()
  endif()
  list(FILTER libraries EXCLUDE REGEX "-NOTFOUND$")
  if(NOT config_dir)
    set(config_dir "${prefix}/share/cmake/Torch")
  endif()

  add_library(buildkit::torch INTERFACE IMPORTED)
  set_target_properties(buildkit::torch PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${prefix}/include;${prefix}/include/torch/csrc/api/include"
    BUILDKIT_INSTALL_PREFIX "${prefix}" BUILDKIT_CUDA "${cuda}")
  _buildkit_no_as_needed(link "${libraries}")
  target_link_libraries(buildkit::torch INTERFACE ${link})
  _buildkit_torch_library(python "${prefix}" torch_python)
  add_library(buildkit::torch_python INTERFACE IMPORTED)
  target_link_libraries(buildkit::torch_python INTERFACE "${python}")

  # What torch's own config asks of its users, read from it (the CPU path never runs it).
  file(READ "${config_dir}/TorchConfig.cmake" config)
  _buildkit_torch_cxx_standard(standard "${config}")
  if(standard STREQUAL "")
    message(FATAL_ERROR
      "buildkit: ${config_dir}/TorchConfig.cmake names no C++ standard (no CXX_STANDARD, "
      "cxx_std_NN or -std=c++NN), so buildkit cannot tell which one torch's headers need. "
      "Set it yourself before buildkit_torch_extension: set(BUILDKIT_TORCH_CXX_STANDARD 20) "
      "(the standard that torch release's documentation names).")
  endif()
  set(abi "")
  if(config MATCHES "_GLIBCXX_USE_CXX11_ABI=([01])")
    set(abi "${CMAKE_MATCH_1}")
  endif()
  set(version "")
  if(EXISTS "${config_dir}/TorchConfigVersion.cmake")
    file(STRINGS "${config_dir}/TorchConfigVersion.cmake" line REGEX "set\\(PACKAGE_VERSION \"")
    string(REGEX REPLACE ".*PACKAGE_VERSION \"([^\"]*)\".*" "\\1" version "${line}")
  endif()
  set_target_properties(buildkit::torch PROPERTIES
    BUILDKIT_CXX_STANDARD "${standard}" BUILDKIT_CXX11_ABI "${abi}" BUILDKIT_VERSION "${version}")
  message(STATUS "buildkit: torch ${version} at ${prefix}: CUDA ${cuda}, C++${standard}")
endfunction()

# The C++ standard a TorchConfig.cmake's text asks its users for, in every spelling torch
# has used: the CXX_STANDARD property of its torch target (`CXX_STANDARD 14` up to torch
# 2.14), the compile feature (`cxx_std_20` from 2.15) and the flag its fallback passes
# (`-std=c++20`, `/std:c++20`). The highest one named wins; "" when none is named.
# BUILDKIT_TORCH_CXX_STANDARD, where set, overrides the config.
function(_buildkit_torch_cxx_standard out config)
  if(DEFINED BUILDKIT_TORCH_CXX_STANDARD AND NOT BUILDKIT_TORCH_CXX_STANDARD STREQUAL "")
    set(${out} "${BUILDKIT_TORCH_CXX_STANDARD}" PARENT_SCOPE)
    return()
  endif()
  # Comments name standards too ("forcing C++20"): only code lines count.
  string(REGEX REPLACE "#[^\n]*" "" code "${config}")
  string(REGEX MATCHALL
    "CXX_STANDARD[ \t\n]+\"?[0-9]+|cxx_std_[0-9]+|[-/]std[=:](c|gnu)\\+\\+[0-9]+" spellings "${code}")
  set(standard "")
  foreach(spelling IN LISTS spellings)
    string(REGEX MATCH "[0-9]+$" number "${spelling}")
    if(standard STREQUAL "" OR number GREATER standard)
      set(standard "${number}")
    endif()
  endforeach()
  set(${out} "${standard}" PARENT_SCOPE)
endfunction()

# The folder of TorchConfig.cmake, found where find_package(Torch) would look first:
# Torch_DIR, then <prefix>/share/cmake/Torch and <prefix>/torch/share/cmake/Torch for
# each CMAKE_PREFIX_PATH entry (a site-packages folder is such a prefix).
function(_buildkit_torch_config_dir out)
  set(candidates "${Torch_DIR}" "$ENV{Torch_DIR}")
  foreach(prefix IN LISTS CMAKE_PREFIX_PATH)
    list(APPEND candidates "${prefix}/share/cmake/Torch" "${prefix}/torch/share/cmake/Torch")
  endforeach()
  foreach(candidate IN LISTS candidates)
    if(candidate AND EXISTS "${candidate}/TorchConfig.cmake")
      set(${out} "${candidate}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR
    "buildkit: PyTorch was not found: no TorchConfig.cmake under Torch_DIR or CMAKE_PREFIX_PATH "
    "(${CMAKE_PREFIX_PATH}). Install torch into the environment the build runs in: build with "
    "--no-build-isolation against the installed torch, or add torch to [build-system] requires.")
endfunction()

function(_buildkit_torch_library out prefix name)
  if(WIN32)
    set(path "${prefix}/lib/${name}${CMAKE_IMPORT_LIBRARY_SUFFIX}")
  else()
    set(path "${prefix}/lib/${CMAKE_SHARED_LIBRARY_PREFIX}${name}${CMAKE_SHARED_LIBRARY_SUFFIX}")
  endif()
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "buildkit: ${path} does not exist; the torch at ${prefix} is incomplete. "
                        "Reinstall torch (pip install --force-reinstall torch==<its version>).")
  endif()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()

# The link items for ``libraries`` with --as-needed off around them (GNU ld, gold, lld,
# mold); elsewhere the libraries themselves.
function(_buildkit_no_as_needed out libraries)
  set(paths "")
  set(others "")
  foreach(library IN LISTS libraries)
    if(IS_ABSOLUTE "${library}" AND NOT library MATCHES ",")
      list(APPEND paths "${library}")
    else()
      list(APPEND others "${library}")  # targets (torch's own wrap themselves) and flags
    endif()
  endforeach()
  if(paths AND NOT APPLE AND NOT WIN32)
    list(JOIN paths "," joined)
    set(paths "-Wl,--push-state,--no-as-needed,${joined},--pop-state")
  endif()
  set(${out} ${paths} ${others} PARENT_SCOPE)
endfunction()
