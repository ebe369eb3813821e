// AMX tile kernels: bf16 x bf16 -> f32 on TDPBF16PS (tile/amx_bf16_gemm.hpp) and u8/s8 x s8 ->
// s32 on TDPBSUD/TDPBSSD (tile/amx_int8_gemm.hpp). Compiled with the AVX-512 (BF16, VNNI) and
// AMX flags; registered only where amx_ready() (kernel_registry.cpp).
#include "kernel_instance.hpp"
#include "strata/tile/amx_bf16_gemm.hpp"
#include "strata/tile/amx_int8_gemm.hpp"
#include "strata/tile/amx_small_products.hpp"
#include "strata/tile/amx_stream_b.hpp"

namespace strata::blas::detail {

namespace {

// Small products, single or a batch's entries, on tiles shaped to them
// (tile/amx_small_products.hpp), where they serve: a batch's entries divided among the threads
// or all on one (each is a few hundred cycles). In-process against the routes before, 1 thread,
// single calls: u8s8s32 32^3 1.21-1.27x (VNNI before), 16^3 1.7x, 32 x 32 x 64 1.4-1.5x; bf16
// 32^3 1.07-1.13x (B in place before), 16^3 1.37x.
template <class Kernel, class SA, class SB, class T>
bool run_small_products(const GemmCall<T>& c) {
  if (c.epilogue_count > 0 || !tile::amx_small_products_serve<Kernel>(c.m, c.n, c.k, c.a_rs, c.b_rs)) return false;
  run_entry_ranges<SA, SB>(c, [&](int64_t lo, int64_t hi, auto&& entry) {
    tile::amx_small_products<Kernel>(lo, hi, c.m, c.n, c.k, c.alpha, c.beta, c.a_cs, c.b_cs, c.ldc, entry);
  });
  return true;
}

// bf16 on AMX: products within one tile on shaped tiles (above); products of few rows, or of a
// small B, with B not transposed read B in place (tile/amx_stream_b.hpp, the kernel's
// stream_b_pays); the others run the tiled engine with both operands packed.
struct Bf16AmxInstance {
  using Kernel = tile::MicroKernelBf16Amx;
  using Tiled = Bf16KernelInstance<Kernel, tile::Bf16PairOperandOf<16>, tile::Bf16AmxColumnsOperand, 32>;

  static void run_one(const GemmCall<float>& c) {
    // (An epilogue program runs on the tiled route's finished tiles.)
    if (c.epilogue_count > 0 || !tile::amx_stream_b_serves<Kernel>(c.m, c.n, c.k, c.b_rs)) return Tiled::run_one(c);
    const tile::Bf16PairOperandOf<16> a{{static_cast<const bf16*>(c.a), c.a_rs, c.a_cs}};
    tile::amx_gemm_stream_b<Kernel>(c.m, c.n, c.k, c.alpha, a, c.b, c.b_cs * 2, c.beta, c.c, c.ldc, c.threads);
  }

  // Requires m, n, k > 0 (gemm_ex checks and returns early).
  static void run(const GemmCall<float>& c) {
    if (run_small_products<Kernel, bf16, bf16>(c)) return;
    if (is_batch(c)) return run_batch_as_calls<bf16, bf16, tile::AmxTiles>(c, run_one);
    run_one(c);
  }

  static GemmKernel<float> entry() {
    GemmKernel<float> k = Tiled::entry();
    k.run = &run;
    return k;
  }
};

// The integer GEMM on AMX: A's bytes in quads as the tiles' second operand (unsigned or signed
// as A is u8 or s8: no shift or range check needed), B's as the first. Blocks are derived for
// one byte per element, kc a multiple of 64 (whole tiles; zero padding only in the last block).
struct Int8AmxInstance {
  static const tile::BlockSizes& blocks() {
    static const tile::BlockSizes bs = [] {
      const CpuFeatures& f = cpu_features();
      tile::BlockSizes b = tile::derive_block_sizes(32, 32, 1, f.l1d_bytes, f.l2_bytes, f.l3_bytes, true);
      return with_tuning_overrides(b, 32, 32, 64);
    }();
    return bs;
  }

  template <class SA>
  static void run_typed(const GemmCall<int32_t>& c) {
    const tile::SlotOperand<SA, 4, 16> a{{static_cast<const SA*>(c.a), c.a_rs, c.a_cs}};
    if (tile::amx_stream_b_serves<tile::MicroKernelI8Amx<SA>>(c.m, c.n, c.k, c.b_rs))  // B in place: amx_stream_b.hpp
      return tile::amx_gemm_stream_b<tile::MicroKernelI8Amx<SA>>(c.m, c.n, c.k, c.alpha, a, c.b, c.b_cs, c.beta, c.c,
                                                                 c.ldc, c.threads);
    const tile::Int8AmxColumnsOperand b{
        tile::MatrixView<int8_t>{static_cast<const int8_t*>(c.b), c.b_rs, c.b_cs}.transposed()};
    tile::gemm_operands<tile::MicroKernelI8Amx<SA>>(c.m, c.n, c.k, c.alpha, a, b, c.beta, c.c, c.ldc, c.threads,
                                                    blocks(), tile::NoEpilogue{}, tile::PackPolicy{});
  }

  static void run_one(const GemmCall<int32_t>& c) {
    if (c.a_type == DType::u8) run_typed<uint8_t>(c);
    else run_typed<int8_t>(c);
  }

  // Requires m, n, k > 0 (gemm_ex handles the quick returns). Small products take tiles shaped
  // to them (above). Other products below 2^17 multiply-adds
  // (about 50^3) run on the VNNI kernel: a 32^3 one padded to a 32 x 32 x 64 tile pass, with
  // the tile configuration per call, took 0.80x of it in-process (64^3 on AMX 1.44x).
  static void run(const GemmCall<int32_t>& c) {
    if (c.a_type == DType::u8 ? run_small_products<tile::MicroKernelI8Amx<uint8_t>, uint8_t, int8_t>(c)
                              : run_small_products<tile::MicroKernelI8Amx<int8_t>, int8_t, int8_t>(c))
      return;
    static const GemmKernel<int32_t> vnni = gemm_i8_avx512_vnni();
    if (c.m * c.n * c.k < (int64_t(1) << 17)) return vnni.run(c);
    if (is_batch(c)) return run_batch_as_calls<uint8_t, int8_t, tile::AmxTiles>(c, run_one);
    run_one(c);
  }

  static GemmKernel<int32_t> entry() {
    GemmKernel<int32_t> k;
    k.run = &run;
    k.info = [] {
      const tile::BlockSizes& bs = blocks();
      static constexpr const char* name =
          "avx512-amx i8 32x32 (AMX byte-quad tiles, shaped to products within one tile; else VNNI below 2^17 "
          "multiply-adds)";
      return GemmKernelInfo{name, 32, 32, bs.mc, bs.kc, bs.nc};
    };
    return k;
  }
};

}  // namespace

GemmKernel<float> gemm_bf16_amx() { return Bf16AmxInstance::entry(); }
GemmKernel<int32_t> gemm_i8_amx() { return Int8AmxInstance::entry(); }

}  // namespace strata::blas::detail
