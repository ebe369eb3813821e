// The one place where GEMM kernels are registered per ISA.
#include "gemm_kernels.hpp"
#include "strata/core/cpu.hpp"

namespace strata::blas::detail {

const IsaTable<GemmKernel<float>>& gemm_kernels_f32() {
  static const IsaTable<GemmKernel<float>> t{gemm_f32_portable(), gemm_f32_avx2(), gemm_f32_avx512()};
  return t;
}

const IsaTable<GemmKernel<double>>& gemm_kernels_f64() {
  static const IsaTable<GemmKernel<double>> t{gemm_f64_portable(), gemm_f64_avx2(), gemm_f64_avx512()};
  return t;
}

// The AVX-512 integer kernel needs VNNI (vpdpbusd); AVX-512 CPUs without it run the AVX2 one.
const IsaTable<GemmKernel<int32_t>>& gemm_kernels_i8() {
  static const IsaTable<GemmKernel<int32_t>> t{gemm_i8_portable(), gemm_i8_avx2(),
                                               cpu_features().avx512_vnni ? gemm_i8_avx512_vnni() : GemmKernel<int32_t>{}};
  return t;
}

const IsaTable<GemmKernel<float>>& gemm_kernels_bf16() {
  static const IsaTable<GemmKernel<float>> t{{}, {}, cpu_features().avx512_bf16 ? gemm_bf16_avx512() : GemmKernel<float>{}};
  return t;
}

}  // namespace strata::blas::detail
