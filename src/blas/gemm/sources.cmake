# The GEMM family and its engine glue (owned by the tile/GEMM work; included by src/blas/CMakeLists.txt).
set(STRATA_BLAS_GEMM_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/gemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_dispatch.cpp)
