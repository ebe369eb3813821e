// Turns one MicroKernel instantiation into a GemmKernel entry. Included only by the
// kernels_<isa>.cpp files, after they define STRATA_KERNEL_ISA through their compile flags.
#pragma once
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gemm_kernels.hpp"
#include "transposed_product.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/env.hpp"
#include "strata/core/log.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/tile/epilogue.hpp"
#include "strata/tile/gemm.hpp"
#include "strata/tile/int8_gemm.hpp"
#include "strata/tile/kernel_configs.hpp"
#include "strata/tile/microkernel.hpp"

namespace strata::blas::detail {

// Block sizes with the tuning overrides STRATA_GEMM_MC/KC/NC applied (docs/tile.md), rounded
// to whole micro-tiles and kc to a multiple of kc_unit (the k depth of one packed slot).
// Static: this header is compiled once per ISA, and a copy built with wider vectors must not
// be the one the linker keeps for the portable path.
static inline tile::BlockSizes with_tuning_overrides(tile::BlockSizes b, int mr, int nr, int64_t kc_unit) {
  b.mc = tile::round_down_to(env_int("STRATA_GEMM_MC", b.mc), mr);
  b.kc = std::max<int64_t>(kc_unit, env_int("STRATA_GEMM_KC", b.kc) / kc_unit * kc_unit);
  b.nc = tile::round_down_to(env_int("STRATA_GEMM_NC", b.nc), nr);
  return b;
}

// The k blocks of the narrow kernels (int8 quads and pairs, bf16 pairs; not AMX's tiles): at
// least 512 slot steps (2048 bytes of depth for quads, 1024 values for pairs), where the
// derived ones keep A's and B's micro-panels in L1 (640 and 320 on Zen 4's 32 KB). A slot step
// does 2-4 times the arithmetic of an f32 step on the same bytes, so the micro-panels stream
// from L2 in its shadow, and what a short block costs is the extra passes over C (int32 or f32,
// 4 bytes an entry): the product whose C outgrows L2 had run a pass every 320 steps (kc 1280,
// streaming_blocks' doubled block) at 87-89% of the int8 peak. In-process against the derived
// blocks, 1 thread, Zen 4: u8s8s32 2048^3 1.04x, 3000^3 1.04x, 4096^3 1.10x, 4096 x 1024 x 4096
// 1.11x, 1024^3 and short depths alike; 2 threads 1.02-1.11x; bf16 2048^3 1.05x, 3000^3 1.06x,
// 4096^3 1.04x, 16 x 4096 x 4096 1.04x, the rest alike.
static inline tile::BlockSizes with_narrow_depth(tile::BlockSizes b, int64_t kc_unit) {
  b.kc = std::max<int64_t>(b.kc, 512 * kc_unit);
  return b;
}

// The batch helpers below are compiled in every kernels_<isa>.cpp: the inline namespace named
// after the ISA keeps the copies apart (an AVX-512 one must not serve the portable path).
inline namespace STRATA_KERNEL_ISA {

// Entry i of a batch call (GemmCall::batch): its operands at a + i * stride_a, b + i * stride_b
// (in elements of their stored types SA, SB) and C at c + i * stride_c, or at a_array[i],
// b_array[i], c_array[i] where those are given.
template <class SA, class SB, class T>
struct BatchEntries {
  const GemmCall<T>& call;
  const SA* a(int64_t i) const {
    return call.a_array ? static_cast<const SA*>(call.a_array[i]) : static_cast<const SA*>(call.a) + i * call.stride_a;
  }
  const SB* b(int64_t i) const {
    return call.b_array ? static_cast<const SB*>(call.b_array[i]) : static_cast<const SB*>(call.b) + i * call.stride_b;
  }
  T* c(int64_t i) const { return call.c_array ? call.c_array[i] : call.c + i * call.stride_c; }
};

// range(lo, hi, threads) over a batch's entries: in chunks claimed by the call's threads as
// they come free, each entry run on one (split_batch; parallel_chunks: a slowed thread takes
// fewer), or all in one range, each entry with every thread.
template <class T, class Range>
void for_batch_ranges(const GemmCall<T>& c, Range&& range) {
  if (c.split_batch && c.threads > 1)
    parallel_chunks(c.batch, c.threads, [&](int64_t lo, int64_t hi, int) { range(lo, hi, 1); });
  else
    range(0, c.batch, c.threads);
}

// A call's entries (one, or a batch's) through products(lo, hi, entry) on ranges of entries as
// for_batch_ranges makes them, entry(i, a, b, c) naming entry i's operands: the small-product
// paths that take whole ranges at a time (tile/amx_small_products.hpp,
// tile/vnni_small_products.hpp).
template <class SA, class SB, class T, class Products>
void run_entry_ranges(const GemmCall<T>& c, Products&& products) {
  const BatchEntries<SA, SB, T> at{c};
  for_batch_ranges(c, [&](int64_t lo, int64_t hi, int) {
    products(lo, hi, [&](int64_t i, auto& a, auto& b, T*& out) { a = at.a(i), b = at.b(i), out = at.c(i); });
  });
}

// What a kernel keeps configured on a thread across its calls there (AMX's tiles), or nothing.
struct NoThreadState {};
template <class Kernel>
struct ThreadStateOf {
  using type = NoThreadState;
};
template <class Kernel>
  requires requires { typename Kernel::ThreadState; }
struct ThreadStateOf<Kernel> {
  using type = typename Kernel::ThreadState;
};

// A batch call run as single-product calls run_one(entry), each thread holding a Hold over its
// range of entries (AMX: the tiles configured once per range, not once per entry).
template <class SA, class SB, class Hold = NoThreadState, class T, class RunOne>
void run_batch_as_calls(const GemmCall<T>& c, RunOne&& run_one) {
  const BatchEntries<SA, SB, T> at{c};
  for_batch_ranges(c, [&](int64_t lo, int64_t hi, int threads) {
    [[maybe_unused]] Hold hold;
    GemmCall<T> e = c;
    e.batch = 1, e.a_array = nullptr, e.b_array = nullptr, e.c_array = nullptr, e.threads = threads;
    for (int64_t i = lo; i < hi; ++i) {
      e.a = at.a(i), e.b = at.b(i), e.c = at.c(i), e.route = i == 0 ? c.route : nullptr, e.quiet = i > 0;
      run_one(e);
    }
  });
}

template <class T>
bool is_batch(const GemmCall<T>& c) {
  return c.batch != 1 || c.c_array;
}

// A batch call's first entry as a call of its own (its operands' addresses as the call names
// them), for the shape rules that take single products.
template <class T>
GemmCall<T> first_entry(const GemmCall<T>& c) {
  GemmCall<T> e = c;
  if (c.a_array) e.a = c.a_array[0];
  if (c.b_array) e.b = c.b_array[0];
  if (c.c_array) e.c = c.c_array[0];
  e.batch = 1, e.a_array = nullptr, e.b_array = nullptr, e.c_array = nullptr;
  return e;
}

}  // namespace STRATA_KERNEL_ISA

template <class Kernel>
struct KernelInstance {
  using T = typename Kernel::T;

  static const tile::BlockSizes& blocks() {
    static const tile::BlockSizes bs = [] {
      const CpuFeatures& f = cpu_features();
      tile::BlockSizes b =
          tile::derive_block_sizes(Kernel::mr, Kernel::nr, sizeof(T), f.l1d_bytes, f.l2_bytes, f.l3_bytes);
      return with_tuning_overrides(b, Kernel::mr, Kernel::nr, 1);
    }();
    return bs;
  }

  template <class SA, class SB = SA>
  static void run_typed(const GemmCall<T>& c) {
    tile::GemmArgs<T, SA, SB> g;
    g.m = c.m, g.n = c.n, g.k = c.k, g.alpha = c.alpha, g.beta = c.beta, g.c = c.c, g.ldc = c.ldc;
    g.triangle = c.triangle;
    g.a_triangle = c.a_triangle, g.b_triangle = c.b_triangle;
    g.split_depth = c.split_depth;
    g.a = {static_cast<const SA*>(c.a), c.a_rs, c.a_cs};
    g.b = {static_cast<const SB*>(c.b), c.b_rs, c.b_cs};
    std::optional<tile::PackPolicy> policy;
    using P = typename GemmCall<T>::Packing;
    if (c.packing == P::pack_both) policy = tile::PackPolicy{true, true};
    if (c.packing == P::stream_b) policy = tile::PackPolicy{true, false};
    if (c.packing == P::stream_a) policy = tile::PackPolicy{false, true};
    auto one = [&](const tile::GemmArgs<T, SA, SB>& e, int threads, tile::GemmRoute* route) {
      if (c.epilogue_count == 0) {
        tile::gemm<Kernel, tile::NoEpilogue, SA, SB>(e, threads, blocks(), tile::NoEpilogue{}, policy, route);
      } else {
        tile::EpilogueProgram<T> program{c.epilogue, c.epilogue_count};
        tile::gemm<Kernel, tile::EpilogueProgram<T>, SA, SB>(e, threads, blocks(), program, policy, route);
      }
    };
    if (!is_batch(c)) return one(g, c.threads, c.route);
    run_batch(c, g, one);
  }

  // The entries of a batch (GemmCall::batch): shape, kernel and blocks resolved once. Each
  // entry fetches the next one's A, B and C a few lines per k step (tile/fetch_ahead.hpp): the
  // entries of a large batch of small products come from L3 or memory.
  template <class SA, class SB, class One>
  static void run_batch(const GemmCall<T>& c, const tile::GemmArgs<T, SA, SB>& g, One&& one) {
    const BatchEntries<SA, SB, T> at{c};
    // Worth its k-loop instructions only for batches beyond half the L3 (it is shared) and
    // entries of 8 KB or more: 16^3 entries' k steps are few FMAs (0.78-0.83x with the fetch),
    // f32 32^3 x 1000 (12 MB, L3) 0.97x.
    const int64_t entry_bytes =
        c.m * c.k * int64_t(sizeof(SA)) + c.k * c.n * int64_t(sizeof(SB)) + c.m * c.n * int64_t(sizeof(T));
    const bool fetch = entry_bytes >= 8192 && entry_bytes * c.batch > int64_t(cpu_features().l3_bytes / 2);
    for_batch_ranges(c, [&](int64_t lo, int64_t hi, int threads) {
      tile::GemmArgs<T, SA, SB> e = g;
      for (int64_t i = lo; i < hi; ++i) {
        e.a.data = at.a(i), e.b.data = at.b(i), e.c = at.c(i);
        std::optional<tile::FetchAhead> ahead;  // built only where it is used
        e.fetch_ahead = nullptr;
        if (fetch && i + 1 < hi) {
          ahead.emplace();
          ahead->add(tile::MatrixView<SA>{at.a(i + 1), g.a.rs, g.a.cs}, c.m, c.k);
          ahead->add(tile::MatrixView<SB>{at.b(i + 1), g.b.rs, g.b.cs}, c.k, c.n);
          ahead->add(tile::MatrixView<T>{at.c(i + 1), 1, c.ldc}, c.m, c.n, true);
          e.fetch_ahead = &*ahead;
        }
        one(e, threads, i == 0 ? c.route : nullptr);
      }
    });
  }

  static void run(const GemmCall<T>& c) {
    const bool batch = is_batch(c);
    if (batch ? batch_entries_transpose(c) && transposed_product_pays(first_entry(c), Kernel::mr, sizeof(T))
              : transposed_product_pays(c, Kernel::mr, sizeof(T))) {
      auto transposed = [](const GemmCall<T>& e) { run_transposed_product(e, run_as_given); };
      if (!batch) return transposed(c);
      // A batch of such products: entry by entry (transposed_product_pays asks for one type).
      if constexpr (std::is_same_v<T, float>) {
        if (c.a_type == DType::bf16) return run_batch_as_calls<bf16, bf16>(c, transposed);
        if (c.a_type == DType::f16) return run_batch_as_calls<f16, f16>(c, transposed);
      }
      return run_batch_as_calls<T, T>(c, transposed);
    }
    run_as_given(c);
  }

  static void run_as_given(const GemmCall<T>& c) {
    if constexpr (std::is_same_v<T, float>) {
      // Mixed precision: narrow inputs are widened to f32 while packing (exact for all of these).
      if (c.a_type == DType::bf16) return run_typed<bf16>(c);
      if (c.a_type == DType::f16) return run_typed<f16>(c);
      if (c.a_type == DType::u8) return run_typed<uint8_t, int8_t>(c);
      if (c.a_type == DType::i8) return run_typed<int8_t, int8_t>(c);
    }
    run_typed<T>(c);
  }

  static bool run_small(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
                        int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t ldc) {
    if (!tile::small_gemm_serves<Kernel>(m, n, k, a_rs)) return false;
    const tile::MatrixView<T> av{a, a_rs, a_cs}, bv{b, b_rs, b_cs};
    tile::small_gemm<Kernel>(m, n, k, alpha, av, bv, beta, c, ldc, tile::NoEpilogue{});
    return true;
  }

  // The registry entry; its name ("avx2 f32 16x6") is derived from the kernel itself.
  static GemmKernel<T> entry() {
    GemmKernel<T> k;
    k.run = &run;
    k.run_small = &run_small;
    k.info = [] {
      static const std::string name = std::string(tile::kernel_isa_name) + (sizeof(T) == 4 ? " f32 " : " f64 ") +
                                      std::to_string(Kernel::mr) + "x" + std::to_string(Kernel::nr);
      const tile::BlockSizes& bs = blocks();
      bool dot = false;
      if constexpr (requires { typename Kernel::Vec; }) dot = tile::dot_gemm_pays<typename Kernel::Vec>();
      const int64_t small_rows = tile::small_gemm_max_vectors<Kernel>() * Kernel::Vec::lanes;
      return GemmKernelInfo{name.c_str(), Kernel::mr, Kernel::nr, bs.mc, bs.kc, bs.nc, dot, small_rows};
    };
    return k;
  }
};

// The integer GEMM entry: u8/s8 x s8 -> s32 on a kernel over int16 pairs, or, when A is u8
// and the ISA has one, the denser byte-quad kernel: with VNNI for every u8 A, without it only
// when every A value is below 128 (all exact; tile/int8_gemm.hpp).
template <class PairKernel, class QuadKernel>
struct Int8KernelInstance {
  template <class Kernel, int ElemBytes>
  static const tile::BlockSizes& blocks() {
    static const tile::BlockSizes bs = [] {
      const CpuFeatures& f = cpu_features();
      // Packed data is ElemBytes per element; kc stays a multiple of the slot depth so that
      // no pair or quad straddles two k blocks.
      tile::BlockSizes b =
          tile::derive_block_sizes(Kernel::mr, Kernel::nr, ElemBytes, f.l1d_bytes, f.l2_bytes, f.l3_bytes);
      return with_tuning_overrides(with_narrow_depth(b, 4 / ElemBytes), Kernel::mr, Kernel::nr, 4 / ElemBytes);
    }();
    return bs;
  }

  // Whether every element of the m x k view is below 128 (stops at the first that is not).
  static bool seven_bit(const GemmCall<int32_t>& c) {
    const auto* a = static_cast<const uint8_t*>(c.a);
    const bool rows_inner = c.a_rs == 1;
    const int64_t outer = rows_inner ? c.k : c.m, inner = rows_inner ? c.m : c.k;
    const int64_t os = rows_inner ? c.a_cs : c.a_rs, is = rows_inner ? c.a_rs : c.a_cs;
    for (int64_t o = 0; o < outer; ++o) {
      const uint8_t* run = a + o * os;
      uint64_t any = 0;
      int64_t i = 0;
      if (is == 1)  // eight bytes at a time (bytewise, the scan was ~3% of a 128^3 call)
        for (uint64_t w; i + 8 <= inner; i += 8) std::memcpy(&w, run + i, 8), any |= w;
      for (; i < inner; ++i) any |= run[i * is];
      if (any & 0x8080808080808080u) return false;
    }
    return true;
  }

  // The engine on A as given and B packed as Operand<int8_t> slots -- or, on the byte quads with
  // B's columns in whole quads, B read in place where the rows fit one A block or the depth is
  // short. In-process against packing B, 1 thread: 16 x 4096 x 4096 2.08x, 64 x 1024 x 1024
  // 1.17x (after the kernel's in-place addressing), 100^3-512^3 1.05-1.09x, 1024^3 1.03x,
  // 4096 x 4096 x 64 1.11x, depth 256-512 1.00-1.03x; but several A blocks over a long depth
  // lost (1536^3-4096^3 0.81-0.85x, 2048 x 512 x 2048 0.81x, 1280^3 0.98x), B's in-place panel
  // then coming back from L3 for every A block as twelve short column streams.
  template <class Kernel, template <class> class Operand, class AOp>
  static void run_on(const GemmCall<int32_t>& c, const AOp& a, const tile::BlockSizes& bs) {
    const auto bv = tile::MatrixView<int8_t>{static_cast<const int8_t*>(c.b), c.b_rs, c.b_cs}.transposed();
    auto run = [&](const auto& b, tile::PackPolicy policy) {
      tile::gemm_operands<Kernel>(c.m, c.n, c.k, c.alpha, a, b, c.beta, c.c, c.ldc, c.threads, bs, tile::NoEpilogue{},
                                  policy);
    };
    if constexpr (std::is_same_v<Operand<int8_t>, tile::QuadOperand<int8_t>>) {
      if ((c.m <= bs.mc || c.k <= 512) && tile::QuadColumnsOperand::fits(bv, c.k)) {
        tile::PackPolicy policy;
        policy.pack_b = false;
        return run(tile::QuadColumnsOperand::of(bv), policy);
      }
    }
    run(Operand<int8_t>{bv}, tile::PackPolicy{});
  }

  template <class Kernel, template <class> class Operand, class SA>
  static void run_with(const GemmCall<int32_t>& c, const tile::BlockSizes& bs) {
    run_on<Kernel, Operand>(c, Operand<SA>{{static_cast<const SA*>(c.a), c.a_rs, c.a_cs}}, bs);
  }

  // Requires m, n, k > 0 (gemm_ex handles the quick returns). A batch's entries each choose
  // their kernel (the 7-bit scan looks at each entry's A).
  static void run(const GemmCall<int32_t>& c) {
    if (is_batch(c)) return run_batch_as_calls<uint8_t, int8_t>(c, run_one);
    run_one(c);
  }

  static void run_one(const GemmCall<int32_t>& c) {
    if constexpr (!std::is_void_v<QuadKernel>) {
      if (c.a_type == DType::u8 && (quads_for_any_u8() || seven_bit(c))) {
        if (verbose(1) && !c.quiet)
          verbose_write("blas", quads_for_any_u8() ? "gemm_ex: u8 A: byte-quad kernel (vpdpbusd, exact for every u8)"
                                                   : "gemm_ex: every A value < 128: byte-quad kernel (vpmaddubsw, exact)");
        return run_with<QuadKernel, tile::QuadOperand, uint8_t>(c, blocks<QuadKernel, 1>());
      }
      // Above depth 64: at 4096 x 4096 x 64 the correction pass over C cost as much as the
      // quads saved (1.17x on 1 thread, 0.96x on 2); at depth 96 1.41-1.56x, 128 1.59-1.71x.
      if (c.a_type == DType::i8 && quads_for_any_u8() && c.k > 64) {
        if (verbose(1) && !c.quiet) verbose_write("blas", "gemm_ex: s8 A shifted to u8 (+128): byte-quad kernel, B's column sums subtracted");
        return run_shifted(c);
      }
    }
    if (c.a_type == DType::u8) run_with<PairKernel, tile::PairOperand, uint8_t>(c, blocks<PairKernel, 2>());
    else run_with<PairKernel, tile::PairOperand, int8_t>(c, blocks<PairKernel, 2>());
  }

  // s8 x s8 on the u8 x s8 quads: C = alpha (A + 128) B + beta C, then C -= alpha 128 colsum(B)
  // per column (all in wrap-around int32: exact). The sums cost O(kn), the correction O(mn).
  static void run_shifted(const GemmCall<int32_t>& c) {
    const auto* bp = static_cast<const int8_t*>(c.b);
    std::vector<uint32_t> shift(std::size_t(c.n));
    for (int64_t j = 0; j < c.n; ++j) {
      uint32_t sum = 0;
      for (int64_t p = 0; p < c.k; ++p) sum += uint32_t(int32_t(bp[p * c.b_rs + j * c.b_cs]));
      shift[std::size_t(j)] = sum * 128u * uint32_t(c.alpha);
    }
    run_on<QuadKernel, tile::QuadOperand>(c, tile::ShiftedQuadOperand{{{static_cast<const int8_t*>(c.a), c.a_rs, c.a_cs}}},
                                          blocks<QuadKernel, 1>());
    // Split by columns among the call's threads: with a short depth this pass over C costs as
    // much as the products (4096 x 4096 x 64).
    const int parts = int(std::min<int64_t>(c.threads, std::max<int64_t>(1, c.m * c.n / (64 * 1024))));
    parallel_for(c.n, parts, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        int32_t* col = c.c + j * c.ldc;
        for (int64_t i = 0; i < c.m; ++i) col[i] = int32_t(uint32_t(col[i]) - shift[std::size_t(j)]);
      }
    });
  }

  static constexpr bool quads_for_any_u8() {
    if constexpr (std::is_void_v<QuadKernel>) return false;
    else return QuadKernel::any_u8;
  }

  static GemmKernel<int32_t> entry() {
    GemmKernel<int32_t> k;
    k.run = &run;
    k.info = [] {
      static const std::string name = std::string(tile::kernel_isa_name) + " i8 " + std::to_string(PairKernel::mr) +
                                      "x" + std::to_string(PairKernel::nr) +
                                      (std::is_void_v<QuadKernel> ? " (int16 pairs)"
                                       : quads_for_any_u8() ? " (int16 pairs; byte quads for u8 A)"
                                                            : " (int16 pairs; byte quads for 7-bit u8 A)");
      const tile::BlockSizes& bs = blocks<PairKernel, 2>();
      return GemmKernelInfo{name.c_str(), PairKernel::mr, PairKernel::nr, bs.mc, bs.kc, bs.nc};
    };
    return k;
  }
};

// bf16 x bf16 -> f32 on a kernel of pair slots (tile/bf16_gemm.hpp, tile/amx_bf16_gemm.hpp),
// op(A) packed by AOperand and op(B) by BOperand. Blocks are derived for two bytes per
// element; kc stays a multiple of KcUnit (even: no pair straddles two k blocks; AMX: whole
// 32-deep tiles, zero padding only in the last block).
// InPlace, where given: the operands of the route that reads B's pairs where they lie
// (tile::Bf16PairColumnsRoute: A and B, B with fits() and of()), for few rows.
template <class Kernel, class AOperand, class BOperand, int KcUnit, class InPlace = void>
struct Bf16KernelInstance {
  static const tile::BlockSizes& blocks() {
    static const tile::BlockSizes bs = [] {
      const CpuFeatures& f = cpu_features();
      constexpr bool b_panel_only = requires { Kernel::packed_depth(1); };  // AMX's tiles
      tile::BlockSizes b =
          tile::derive_block_sizes(Kernel::mr, Kernel::nr, 2, f.l1d_bytes, f.l2_bytes, f.l3_bytes, b_panel_only);
      if (!b_panel_only) b = with_narrow_depth(b, KcUnit);
      return with_tuning_overrides(b, Kernel::mr, Kernel::nr, KcUnit);
    }();
    return bs;
  }

  // Requires a_type == b_type == bf16 and m, n, k > 0 (gemm_ex checks and returns early).
  static void run(const GemmCall<float>& c) {
    using Hold = typename ThreadStateOf<Kernel>::type;
    if (is_batch(c)) return run_batch_as_calls<bf16, bf16, Hold>(c, batch_entries_transpose(c) ? run_entry : run_one);
    run_entry(c);
  }

  // Few columns as the transposed few-row product (transposed_product.hpp), where that one
  // reads the many-row operand's pairs in place.
  static void run_entry(const GemmCall<float>& c) {
    if constexpr (!std::is_void_v<InPlace>) {
      const tile::MatrixView<bf16> rows_as_b{static_cast<const bf16*>(c.a), c.a_rs, c.a_cs};
      if (transposed_product_pays(c, Kernel::mr, 2) && c.n <= blocks().mc && InPlace::B::fits(rows_as_b, c.k))
        return run_transposed_product(c, run_one);
    }
    run_one(c);
  }

  // With an epilogue program (the Lt matmul's), each finished tile takes it while in cache.
  static void run_one(const GemmCall<float>& c) {
    const tile::MatrixView<bf16> av{static_cast<const bf16*>(c.a), c.a_rs, c.a_cs};
    const tile::MatrixView<bf16> bv =
        tile::MatrixView<bf16>{static_cast<const bf16*>(c.b), c.b_rs, c.b_cs}.transposed();
    auto run = [&](const auto& a, const auto& b, tile::PackPolicy policy) {
      auto go = [&](const auto& epilogue) {
        tile::gemm_operands<Kernel>(c.m, c.n, c.k, c.alpha, a, b, c.beta, c.c, c.ldc, c.threads, blocks(), epilogue,
                                    policy);
      };
      if (c.epilogue_count == 0) go(tile::NoEpilogue{});
      else go(tile::EpilogueProgram<float>{c.epilogue, c.epilogue_count});
    };
    // B's pairs read in place where all rows make one A block (each B panel then serves them
    // all while in L1): in-process against packing B, 1 thread, NN 16 x 4096 x 4096 1.46x (TN
    // 1.45x), 32 x 4096 x 4096 1.32x, 64 x 4096 x 4096 1.12x (TN 1.11x), 128 x 2048 x 2048
    // 0.98-1.03x, 256 x 1024 x 1024 1.05x, 512^3 1.03x; 2 threads (alternating runs) 16 rows
    // 1.59-1.64x, 64 rows 1.09-1.16x. Several A blocks re-read B's panels from L3 once per block:
    // 2048^3 0.90x, 2048 x 512 x 2048 0.78x, 4096 x 4096 x 64 0.89x, so not there.
    if constexpr (!std::is_void_v<InPlace>) {
      if (c.m <= blocks().mc && InPlace::B::fits(bv, c.k)) {
        const typename InPlace::A a{av};
        const auto b = InPlace::B::of(bv);
        // A small product (up to 128^3, on one thread) that is one block: the mainloop's walk
        // of it without the blocking set-up (Mainloop::run_one_block).
        using OneBlock = tile::Mainloop<Kernel, tile::NoEpilogue, typename InPlace::A, typename InPlace::B>;
        const double flops = 2.0 * double(c.m) * double(c.n) * double(c.k);
        const bool one_part = c.threads == 1 || flops < 2 * tile::min_part_flops;
        if (one_part && c.m * c.n * c.k <= 128 * 128 * 128 && c.k <= blocks().kc && c.n <= blocks().nc &&
            OneBlock::one_block_covers(c.n)) {
          if (c.epilogue_count == 0)
            return OneBlock::run_one_block(c.m, c.n, c.k, c.alpha, a, b, c.beta, c.c, c.ldc, {});
          const tile::EpilogueProgram<float> program{c.epilogue, c.epilogue_count};
          return tile::Mainloop<Kernel, tile::EpilogueProgram<float>, typename InPlace::A, typename InPlace::B>::
              run_one_block(c.m, c.n, c.k, c.alpha, a, b, c.beta, c.c, c.ldc, program);
        }
        tile::PackPolicy policy;
        policy.pack_b = false;
        return run(a, b, policy);
      }
    }
    run(AOperand{av}, BOperand{bv}, tile::PackPolicy{});
  }


  static GemmKernel<float> entry() {
    GemmKernel<float> k;
    k.run = &run;
    k.info = [] {
      static const std::string name = std::string(tile::kernel_isa_name) + " bf16 " + std::to_string(Kernel::mr) +
                                      "x" + std::to_string(Kernel::nr) + " (" + Kernel::description + ")";
      const tile::BlockSizes& bs = blocks();
      return GemmKernelInfo{name.c_str(), Kernel::mr, Kernel::nr, bs.mc, bs.kc, bs.nc};
    };
    return k;
  }
};

}  // namespace strata::blas::detail
