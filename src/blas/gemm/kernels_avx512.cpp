// AVX-512 GEMM kernels: 32x12 (f32) and 16x12 (f64) register tiles, 24 accumulators of 32 zmm.
#include "kernel_instance.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::blas::detail {

GemmKernel<float> gemm_f32_avx512() {
  return KernelInstance<tile::KernelF32>::entry();
}
GemmKernel<double> gemm_f64_avx512() {
  return KernelInstance<tile::KernelF64>::entry();
}

}  // namespace strata::blas::detail
