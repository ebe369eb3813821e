// The one place where GEMM kernels are registered per ISA.
#include "gemm_kernels.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/peak.hpp"

namespace strata::blas::detail {

const IsaTable<GemmKernel<float>>& gemm_kernels_f32() {
  static const IsaTable<GemmKernel<float>> t{gemm_f32_portable(), gemm_f32_avx2(), gemm_f32_avx512()};
  return t;
}

const IsaTable<GemmKernel<double>>& gemm_kernels_f64() {
  static const IsaTable<GemmKernel<double>> t{gemm_f64_portable(), gemm_f64_avx2(), gemm_f64_avx512()};
  return t;
}

// The AVX-512 integer kernel needs VNNI (vpdpbusd); AVX-512 CPUs without it run the AVX2 one,
// which itself takes AVX_VNNI's 256-bit vpdpbusd where the CPU has it (Alder Lake on, Zen 5).
// AMX's tiles take the AVX-512 slot where the process may use them.
const IsaTable<GemmKernel<int32_t>>& gemm_kernels_i8() {
  static const IsaTable<GemmKernel<int32_t>> t{gemm_i8_portable(),
                                               cpu_features().avx_vnni ? gemm_i8_avx2_vnni() : gemm_i8_avx2(), [] {
                                                 const CpuFeatures& f = cpu_features();
                                                 if (f.amx_int8 && f.avx512_vnni && amx_ready()) return gemm_i8_amx();
                                                 if (f.avx512_vnni) return gemm_i8_avx512_vnni();
                                                 return GemmKernel<int32_t>{};
                                               }()};
  return t;
}

// AMX's tiles where the process may use them; else AVX512_BF16's dot product only where it
// clearly outruns the f32 FMAs of the widened route: an Emerald Rapids VM measured 0.50x (the
// native kernel ran at 0.4-0.7x of widening there), Zen 5 2.00x (2026-12-04).
const IsaTable<GemmKernel<float>>& gemm_kernels_bf16() {
  static const IsaTable<GemmKernel<float>> t{{}, {}, [] {
    if (cpu_features().amx_bf16 && cpu_features().avx512_bf16 && amx_ready()) return gemm_bf16_amx();
    if (cpu_features().avx512_bf16 && bf16_dot_speedup() >= 1.25) return gemm_bf16_avx512();
    return GemmKernel<float>{};
  }()};
  return t;
}

}  // namespace strata::blas::detail
