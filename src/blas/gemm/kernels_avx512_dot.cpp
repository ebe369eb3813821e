// AVX-512 dot-product instructions: the integer GEMM with VNNI on 32x12 zmm tiles (byte quads
// through vpdpbusd for u8 A, int16 pairs through vpmaddwd for s8 A), and bf16 x bf16 -> f32
// with AVX512_BF16 (vdpbf16ps, 32x12). Compiled with -mavx512vnni -mavx512bf16; each entry is
// registered only on CPUs that have its instructions (kernel_registry.cpp).
#include "kernel_instance.hpp"
#include "strata/tile/bf16_gemm.hpp"
#include "strata/tile/kernel_configs.hpp"
#include "strata/tile/vnni_small_products.hpp"

namespace strata::blas::detail {

namespace {

// The integer GEMM on VNNI: u8 A's small products without the engine
// (tile/vnni_small_products.hpp), single calls and a batch's entries divided among the threads
// or all on one; everything else on the tiled engine.
struct Int8VnniInstance {
  using Tiled = Int8KernelInstance<tile::KernelI8, tile::KernelU7>;

  static void run(const GemmCall<int32_t>& c) {
    if (c.a_type != DType::u8 || c.epilogue_count > 0 ||
        !tile::vnni_small_products_serve(c.m, c.n, c.k, c.a_rs, c.b_rs))
      return Tiled::run(c);
    if (verbose(1) && !c.quiet)
      verbose_write("blas", "gemm_ex: u8 A: small products on VNNI (A's quads made in registers, B read in place)");
    run_entry_ranges<uint8_t, int8_t>(c, [&](int64_t lo, int64_t hi, auto&& entry) {
      tile::vnni_small_products(lo, hi, c.m, c.n, c.k, c.alpha, c.beta, c.a_cs, c.b_cs, c.ldc, entry);
    });
  }

  static GemmKernel<int32_t> entry() {
    GemmKernel<int32_t> k = Tiled::entry();
    k.run = &run;
    return k;
  }
};

}  // namespace

GemmKernel<int32_t> gemm_i8_avx512_vnni() { return Int8VnniInstance::entry(); }

GemmKernel<float> gemm_bf16_avx512() {
  return Bf16KernelInstance<tile::MicroKernelBf16Avx512<2, 12>, tile::Bf16PairOperand, tile::Bf16PairOperand, 2,
                            tile::Bf16PairColumnsRoute>::entry();
}

}  // namespace strata::blas::detail
