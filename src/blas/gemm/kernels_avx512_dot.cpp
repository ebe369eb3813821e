// AVX-512 dot-product instructions: the integer GEMM with VNNI on 32x12 zmm tiles (byte quads
// through vpdpbusd for u8 A, int16 pairs through vpmaddwd for s8 A), and bf16 x bf16 -> f32
// with AVX512_BF16 (vdpbf16ps, 32x12). Compiled with -mavx512vnni -mavx512bf16; each entry is
// registered only on CPUs that have its instructions (kernel_registry.cpp).
#include "kernel_instance.hpp"
#include "strata/tile/bf16_gemm.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::blas::detail {

// bf16 x bf16 -> f32 on a pair-slot kernel (tile/bf16_gemm.hpp). Blocks are derived for two
// bytes per element; kc stays even so that no pair straddles two k blocks.
template <class Kernel>
struct Bf16KernelInstance {
  static const tile::BlockSizes& blocks() {
    static const tile::BlockSizes bs = [] {
      const CpuFeatures& f = cpu_features();
      tile::BlockSizes b = tile::derive_block_sizes(Kernel::mr, Kernel::nr, 2, f.l1d_bytes, f.l2_bytes, f.l3_bytes);
      return with_tuning_overrides(b, Kernel::mr, Kernel::nr, 2);
    }();
    return bs;
  }

  // Requires a_type == b_type == bf16 and m, n, k > 0 (gemm_ex checks and returns early).
  static void run(const GemmCall<float>& c) {
    const tile::Bf16PairOperand a{{static_cast<const bf16*>(c.a), c.a_rs, c.a_cs}};
    const tile::Bf16PairOperand b{tile::MatrixView<bf16>{static_cast<const bf16*>(c.b), c.b_rs, c.b_cs}.transposed()};
    tile::gemm_operands<Kernel>(c.m, c.n, c.k, c.alpha, a, b, c.beta, c.c, c.ldc, c.threads, blocks(),
                                tile::NoEpilogue{}, tile::PackPolicy{});
  }

  static GemmKernel<float> entry() {
    GemmKernel<float> k;
    k.run = &run;
    k.info = [] {
      static const std::string name = std::string(tile::kernel_isa_name) + " bf16 " + std::to_string(Kernel::mr) +
                                      "x" + std::to_string(Kernel::nr) + " (bf16 pairs, f32 accumulators)";
      const tile::BlockSizes& bs = blocks();
      return GemmKernelInfo{name.c_str(), Kernel::mr, Kernel::nr, bs.mc, bs.kc, bs.nc};
    };
    return k;
  }
};

GemmKernel<int32_t> gemm_i8_avx512_vnni() {
  return Int8KernelInstance<tile::KernelI8, tile::KernelU7>::entry();
}

GemmKernel<float> gemm_bf16_avx512() {
  return Bf16KernelInstance<tile::MicroKernelBf16Avx512<2, 12>>::entry();
}

}  // namespace strata::blas::detail
