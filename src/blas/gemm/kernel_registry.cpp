// The one place where GEMM kernels are registered per ISA.
#include "gemm_kernels.hpp"

namespace strata::blas::detail {

const IsaTable<GemmKernel<float>>& gemm_kernels_f32() {
  static const IsaTable<GemmKernel<float>> t{gemm_f32_portable(), gemm_f32_avx2(), gemm_f32_avx512()};
  return t;
}

const IsaTable<GemmKernel<double>>& gemm_kernels_f64() {
  static const IsaTable<GemmKernel<double>> t{gemm_f64_portable(), gemm_f64_avx2(), gemm_f64_avx512()};
  return t;
}

// No AVX-512 (VNNI) integer kernel yet: AVX-512 machines run the AVX2 one.
const IsaTable<GemmKernel<int32_t>>& gemm_kernels_i8() {
  static const IsaTable<GemmKernel<int32_t>> t{gemm_i8_portable(), gemm_i8_avx2(), {}};
  return t;
}

}  // namespace strata::blas::detail
