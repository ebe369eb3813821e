// AVX-512 GEMM kernels: 32x12 (f32) and 16x12 (f64) register tiles, 24 accumulators of 32 zmm.
#include "kernel_instance.hpp"
#include "strata/tile/simd.hpp"

namespace strata::blas::detail {

GemmKernel<float> gemm_f32_avx512() {
  return KernelInstance<tile::MicroKernel<tile::VecAvx512F32, 2, 12>>::entry("avx512 f32 32x12");
}
GemmKernel<double> gemm_f64_avx512() {
  return KernelInstance<tile::MicroKernel<tile::VecAvx512F64, 2, 12>>::entry("avx512 f64 16x12");
}

}  // namespace strata::blas::detail
