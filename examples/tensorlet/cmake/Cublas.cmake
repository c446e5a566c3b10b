# USE_CUBLAS: cuBLAS and cuBLASLt for libtensorlet_cuda's float GEMMs. They come from
# NVIDIA's nvidia-cublas wheel, a buildkit library dependency whose `when` holds in such a
# build (pyproject.toml, README.md "cuBLAS"): buildkit hands FindCUDAToolkit the wheel's
# libraries as CUDA_cublas_LIBRARY and CUDA_cublasLt_LIBRARY, so CUDA::cublas is the
# wheel's whichever toolkit compiles. A toolkit without cuBLAS headers (the machine's, when
# cuBLAS is not installed with it) gets them from the same wheel: its include/ beside the
# lib/ CMake links. USE_SYSTEM_CUBLAS=ON leaves the wheel out: the toolkit's own cuBLAS.
function(tensorlet_link_cublas target)
  if((NOT TARGET CUDA::cublas OR NOT TARGET CUDA::cublasLt) AND USE_SYSTEM_CUBLAS)
    message(FATAL_ERROR "USE_CUBLAS=ON and USE_SYSTEM_CUBLAS=ON, but the CUDA toolkit FindCUDAToolkit found "
                        "has no cuBLAS library. Build without USE_SYSTEM_CUBLAS (cuBLAS then comes from NVIDIA's "
                        "nvidia-cublas wheel, README.md \"cuBLAS\"), or with USE_CUBLAS=OFF.")
  elseif(NOT TARGET CUDA::cublas OR NOT TARGET CUDA::cublasLt)
    message(FATAL_ERROR "USE_CUBLAS=ON, but FindCUDAToolkit has no cuBLAS library: buildkit gives CMake the "
                        "nvidia-cublas wheel's (CUDA_cublas_LIBRARY) when pyproject.toml's library dependency "
                        "holds, and CUDA_cublas_LIBRARY is '${CUDA_cublas_LIBRARY}'. Build through buildkit with "
                        "USE_CUDA=ON USE_CUBLAS=ON set in the environment (README.md \"cuBLAS\"), or with "
                        "USE_SYSTEM_CUBLAS=ON for the toolkit's own cuBLAS.")
  endif()
  get_target_property(cublas_library CUDA::cublas IMPORTED_LOCATION)
  get_filename_component(cublas_lib_dir "${cublas_library}" DIRECTORY)
  find_path(TENSORLET_CUBLAS_INCLUDE_DIR cublas_v2.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} "${cublas_lib_dir}/../include" NO_DEFAULT_PATH)
  if(NOT TENSORLET_CUBLAS_INCLUDE_DIR)
    message(FATAL_ERROR "USE_CUBLAS=ON: cublas_v2.h is neither in the CUDA toolkit's headers "
                        "(${CUDAToolkit_INCLUDE_DIRS}) nor beside ${cublas_library}: a cuBLAS "
                        "installation without its headers. Reinstall nvidia-cublas, or build with USE_CUBLAS=OFF.")
  endif()
  set(gemm ${CSRC}/ops/cuda/CublasGemm.cpp)
  target_sources(${target} PRIVATE ${gemm})
  target_include_directories(${target} PRIVATE ${TENSORLET_CUBLAS_INCLUDE_DIR})
  target_link_libraries(${target} PRIVATE CUDA::cublas CUDA::cublasLt)
  # Only the GEMM dispatch changes: toggling USE_CUBLAS recompiles one file, not the library.
  set_property(SOURCE ${CSRC}/ops/cuda/LinearKernels.cu ${gemm} APPEND PROPERTY COMPILE_DEFINITIONS TENSORLET_USE_CUBLAS)
  message(STATUS "cuBLAS: ${cublas_library} (headers: ${TENSORLET_CUBLAS_INCLUDE_DIR})")
  set(TENSORLET_HAVE_CUBLAS ON PARENT_SCOPE)
endfunction()
