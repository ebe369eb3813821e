// AVX-512 dot-product instructions: the integer GEMM with VNNI on 32x12 zmm tiles (byte quads
// through vpdpbusd for u8 A, int16 pairs through vpmaddwd for s8 A), and bf16 x bf16 -> f32
// with AVX512_BF16 (vdpbf16ps, 32x12). Compiled with -mavx512vnni -mavx512bf16; each entry is
// registered only on CPUs that have its instructions (kernel_registry.cpp).
#include "kernel_instance.hpp"
#include "strata/tile/bf16_gemm.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::blas::detail {

GemmKernel<int32_t> gemm_i8_avx512_vnni() {
  return Int8KernelInstance<tile::KernelI8, tile::KernelU7>::entry();
}

GemmKernel<float> gemm_bf16_avx512() {
  return Bf16KernelInstance<tile::MicroKernelBf16Avx512<2, 12>, tile::Bf16PairOperand, tile::Bf16PairOperand, 2>::entry();
}

}  // namespace strata::blas::detail
