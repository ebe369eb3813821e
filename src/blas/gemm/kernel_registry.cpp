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

}  // namespace strata::blas::detail
