// Turns one MicroKernel instantiation into a GemmKernel entry. Included only by the
// kernels_<isa>.cpp files, after they define STRATA_KERNEL_ISA through their compile flags.
#pragma once
#include <optional>
#include <string>

#include "gemm_kernels.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/env.hpp"
#include "strata/tile/epilogue.hpp"
#include "strata/tile/gemm.hpp"
#include "strata/tile/kernel_configs.hpp"
#include "strata/tile/microkernel.hpp"

namespace strata::blas::detail {

template <class Kernel>
struct KernelInstance {
  using T = typename Kernel::T;

  static const tile::BlockSizes& blocks() {
    static const tile::BlockSizes bs = [] {
      const CpuFeatures& f = cpu_features();
      tile::BlockSizes b =
          tile::derive_block_sizes(Kernel::mr, Kernel::nr, sizeof(T), f.l1d_bytes, f.l2_bytes, f.l3_bytes);
      // Tuning overrides (documented in docs/tile.md); rounded to whole micro-tiles.
      b.mc = tile::round_down_to(env_int("STRATA_GEMM_MC", b.mc), Kernel::mr);
      b.kc = std::max<int64_t>(1, env_int("STRATA_GEMM_KC", b.kc));
      b.nc = tile::round_down_to(env_int("STRATA_GEMM_NC", b.nc), Kernel::nr);
      return b;
    }();
    return bs;
  }

  template <class SA, class SB = SA>
  static void run_typed(const GemmCall<T>& c) {
    tile::GemmArgs<T, SA, SB> g;
    g.m = c.m, g.n = c.n, g.k = c.k, g.alpha = c.alpha, g.beta = c.beta, g.c = c.c, g.ldc = c.ldc;
    g.a = {static_cast<const SA*>(c.a), c.a_rs, c.a_cs};
    g.b = {static_cast<const SB*>(c.b), c.b_rs, c.b_cs};
    std::optional<tile::PackPolicy> policy;
    using P = typename GemmCall<T>::Packing;
    if (c.packing == P::pack_both) policy = tile::PackPolicy{true, true};
    if (c.packing == P::stream_b) policy = tile::PackPolicy{true, false};
    if (c.packing == P::stream_a) policy = tile::PackPolicy{false, true};
    if (c.epilogue_count == 0) {
      tile::gemm<Kernel, tile::NoEpilogue, SA, SB>(g, c.threads, blocks(), tile::NoEpilogue{}, policy);
    } else {
      tile::EpilogueProgram<T> program{c.epilogue, c.epilogue_count};
      tile::gemm<Kernel, tile::EpilogueProgram<T>, SA, SB>(g, c.threads, blocks(), program, policy);
    }
  }

  static void run(const GemmCall<T>& c) {
    if constexpr (std::is_same_v<T, float>) {
      // Mixed precision: narrow inputs are widened to f32 while packing (exact for all of these).
      if (c.a_type == DType::bf16) return run_typed<bf16>(c);
      if (c.a_type == DType::f16) return run_typed<f16>(c);
      if (c.a_type == DType::u8) return run_typed<uint8_t, int8_t>(c);
      if (c.a_type == DType::i8) return run_typed<int8_t, int8_t>(c);
    }
    run_typed<T>(c);
  }

  // The registry entry; its name ("avx2 f32 16x6") is derived from the kernel itself.
  static GemmKernel<T> entry() {
    GemmKernel<T> k;
    k.run = &run;
    k.info = [] {
      static const std::string name = std::string(tile::kernel_isa_name) + (sizeof(T) == 4 ? " f32 " : " f64 ") +
                                      std::to_string(Kernel::mr) + "x" + std::to_string(Kernel::nr);
      const tile::BlockSizes& bs = blocks();
      return GemmKernelInfo{name.c_str(), Kernel::mr, Kernel::nr, bs.mc, bs.kc, bs.nc};
    };
    return k;
  }
};

}  // namespace strata::blas::detail
