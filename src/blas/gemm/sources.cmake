# The GEMM family and its engine glue (owned by the tile/GEMM work; included by src/blas/CMakeLists.txt).
set(_gemm ${CMAKE_CURRENT_LIST_DIR})
strata_isa_sources(avx2 ${_gemm}/kernels_avx2.cpp)
strata_isa_sources(avxvnni ${_gemm}/kernels_avx2_vnni.cpp)  # AVX2 + AVX_VNNI flags
strata_isa_sources(avx512 ${_gemm}/kernels_avx512.cpp)
strata_isa_sources(avx512bf16 ${_gemm}/kernels_avx512_dot.cpp)  # AVX512_BF16 + AVX512_VNNI flags
strata_isa_sources(amx ${_gemm}/kernels_amx.cpp)  # AVX-512 (BF16, VNNI) + AMX tile flags
strata_isa_sources(portable ${_gemm}/kernels_portable.cpp)
set(STRATA_BLAS_GEMM_SOURCES
  ${_gemm}/gemm.cpp
  ${_gemm}/gemm_dispatch.cpp
  ${_gemm}/kernel_registry.cpp
  ${_gemm}/kernels_portable.cpp
  ${_gemm}/kernels_avx2.cpp
  ${_gemm}/kernels_avx2_vnni.cpp
  ${_gemm}/kernels_avx512.cpp
  ${_gemm}/kernels_avx512_dot.cpp
  ${_gemm}/kernels_amx.cpp)
list(APPEND STRATA_BLAS_GEMM_SOURCES ${_gemm}/../lt/lt.cpp)
list(APPEND STRATA_BLAS_GEMM_SOURCES ${_gemm}/gemm_ex.cpp)
