// AVX2 + FMA GEMM kernels: 16x6 (f32) and 8x6 (f64) register tiles, 12 accumulators of 16 ymm.
#include "kernel_instance.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::blas::detail {

GemmKernel<float> gemm_f32_avx2() {
  return KernelInstance<tile::KernelF32>::entry();
}
GemmKernel<double> gemm_f64_avx2() {
  return KernelInstance<tile::KernelF64>::entry();
}

GemmKernel<int32_t> gemm_i8_avx2() {
  return Int8KernelInstance<tile::KernelI8, tile::KernelU7>::entry();
}

}  // namespace strata::blas::detail
