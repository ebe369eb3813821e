// The device level: one GEMM C = alpha * op(A) op(B) + beta * C (column-major C) split among
// threads, each thread running the mainloop on its rectangle. Kernel = a MicroKernel
// instantiation; Epilogue = NoEpilogue or a composition from epilogue.hpp.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "strata/core/cpu.hpp"
#include "strata/core/load_balance.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/tile/blocking.hpp"
#include "strata/tile/depth_split.hpp"
#include "strata/tile/dot_gemm.hpp"
#include "strata/tile/epilogue_none.hpp"
#include "strata/tile/fetch_ahead.hpp"
#include "strata/tile/mainloop.hpp"
#include "strata/tile/operand.hpp"
#include "strata/tile/scheduler.hpp"
#include "strata/tile/small_gemm.hpp"
#include "strata/tile/tiny_gemm.hpp"

STRATA_TILE_NS_BEGIN

// T: compute/output type; TA/TB: stored operand types (converted while packing).
template <class T, class TA = T, class TB = T>
struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  T alpha{1};
  MatrixView<TA> a;
  MatrixView<TB> b;
  T beta{0};
  T* c = nullptr;
  int64_t ldc = 1;
  Triangle triangle = Triangle::none;  // m == n: only this triangle of C (mainloop.hpp)
  Triangle a_triangle = Triangle::none, b_triangle = Triangle::none;  // triangular op(A) / op(B) (matrix.hpp)
  // The next product's operands (a batch's next entry), fetched while this one computes on
  // the one-block path; the tiled path's products are large enough to need no help.
  FetchAhead* fetch_ahead = nullptr;
  // blas::MathMode::fast: the depth may be split among threads where the split of C leaves
  // some idle (depth_split.hpp); the sums' rounding then depends on the thread count.
  bool split_depth = false;
};

// C := beta * C (beta == 0 writes zeros without reading C) on g.triangle of C, then the
// epilogue.
template <class T, class TA, class TB, class Epilogue>
void scale_c(const GemmArgs<T, TA, TB>& g, const Epilogue& epi) {
  for (int64_t j = 0; j < g.n; ++j) {
    T* cj = g.c + j * g.ldc;
    int64_t lo, hi;
    triangle_rows(g.triangle, g.m, j, lo, hi);
    if (g.beta == T(0)) {
      for (int64_t i = lo; i < hi; ++i) cj[i] = T(0);
    } else if (g.beta != T(1)) {
      for (int64_t i = lo; i < hi; ++i) cj[i] *= g.beta;
    }
  }
  if constexpr (!Epilogue::is_identity) epi(g.c, g.ldc, 0, 0, g.m, g.n);
}

// Rows one A block may hold: MC, or more when the depth is shorter than KC — the block's
// budget is MC x KC elements (sized for L2), so a short-depth product keeps all its rows in
// one block and each B panel is used by all of them while it is in L1.
template <class Kernel>
int64_t a_block_rows(int64_t k, const BlockSizes& bs) {
  if (k >= bs.kc) return bs.mc;
  return std::max(bs.mc, bs.mc * bs.kc / std::max<int64_t>(k, 1) / Kernel::mr * Kernel::mr);
}

// How many A blocks' worth of rows still read a contiguous-column B in place
// (choose_pack_policy, below).
inline int64_t streamed_b_blocks() {
  static const int64_t blocks = cpu_features().vendor == "AuthenticAMD" ? 4 : 1;
  return blocks;
}

// Chooses in-place operand reads where packing would cost more than it saves:
// * B is streamed when few rows use it (M <= 2 MR, e.g. 16 x 4096 x 4096) or when it is small
//   enough to stay in L1 anyway (small problems, where packing time rivals compute time);
// * B with contiguous columns (NN, TN) is also streamed when all rows fit at most four A
//   blocks: each packed panel would then be read by few A blocks, and the transposing pack
//   costs more than it saves — its reads of B come in a burst the FMAs cannot hide, and its
//   writes miss (the packed block outgrows L2). Measured (1 thread; 2 threads alike) at
//   64 x 3136 x 256 (a 1x1 convolution): 1.5x faster streamed; 256 x 784 x 512 1.04x,
//   384 x 1024 x 1024 1.02x, 512 x 1024 x 512 1.02x. Four blocks rather than three (Zen 5,
//   in-process, 1 thread): f32 2048^3 1.04x, 1800^3 1.03x, 2176^3 1.02x, TN 2048^3 1.02x,
//   2048 x 2048 x 512 1.11x; f64 1344^3 1.04x, 1024 x 1024 x 256 1.03x; 2 threads 1.00-1.03x;
//   the res5 1x1 layer 2048 x 49 x 512 (prepared filter as A) 1.04x. Up to eight: 2560^3-4096^3
//   0.99-1.03x, so four -- but beyond them a B larger than L2 is streamed too: packed, each of its
//   blocks served the A blocks from L2 with short k blocks, a pass over C each (Zen 4, in-process,
//   1 thread: f32 4096^3 1.04x, TN 1.04x, 5000^3 1.06x, 4096 x 2048 x 4096 1.05x, 8192 x 4096 x 256
//   1.07x, 16384 x 1024 x 256 1.04x; 2 threads 1.03-1.05x, with the parts' blocks of
//   streaming_blocks), while a smaller B is cheaper packed (streamed: 16384 x 128 x 512 0.97x, 8192
//   x 64 x 1024 0.94x, 8192 x 512 x 512 0.98x). A short depth (K < KC) lets one A block hold more
//   rows (see a_block_rows): 256 x 3136 x 64 streams in one block (1.04x over packing). On Intel
//   cores, whose L3 feeds a streamed B's lines more slowly, one block: on an Emerald Rapids
//   VM, in-process against four, f32 NN 1024^3 1.15x, 2048^3 1.20x, TN 1024^3 1.12x, while
//   256^3-512^3 (one block either way) lost 4-6% when packed (streamed_b_blocks).
//   Above 4 MR rows where B's columns overflow an L1 set (in_place_columns_fit_l1: ldb a
//   multiple of 4 KB on Zen 4's 32 KB 8-way L1), each column panel is copied just before its
//   tiles (PackPolicy::copy_b_panels): read in place there, the columns evicted each other
//   (packing had beaten that by 1.04-1.05x at 1024^3-2048^3), while packing B whole, its
//   blocks sized for a packed B, left the kernel at 90% of the peak at 2048^3 where ldb 2064
//   streamed at 95%. In-process against packing, 1 thread, Zen 4: f32 NN 2048^3 1.04-1.07x,
//   1024^3 1.02-1.04x, 4096^3 0.99-1.01x, 128 x 2048 x 2048 1.05x, 256 x 1024 x 1024 1.05x,
//   512 x 2048 x 2048 1.05x, 2048 x 2048 x 512 1.01x, TN 1024^3-2048^3 1.02-1.03x; 2 threads
//   1.00-1.02x; f64 1.00-1.01x; the 1x1 convolutions on 1024 and 2048 channels (prepared
//   filter as A) 0.97-1.16x, the fifteen ResNet-50 1x1 layers summed 1.00-1.01x.
// * A is streamed (unit row stride only) when one column panel uses it (N <= NR) or when it is
//   that small and its columns lie close together, or when few rows and columns meet a long
//   depth: A's packing, m x k values, then serves only N / NR column panels (up to 4 MR rows and
//   8 NR columns, in-process against packing, 1 thread, AVX-512: 16x16x20000 1.37x,
//   32x32x100000 1.41x, 64x64x20000 1.12x, 64x16x20000 1.25x, 128x24x50000 1.26x, 64x72x20000
//   1.09x, 16x48x20000 1.06x; beyond, packing won: 16x256x20000 0.93x, 64x3136x256 0.97x,
//   1000x16x20000 0.65x). Columns far apart (an operand inside a
//   larger matrix, as trsm's and LAPACK's blocks are) share a few L1 sets: 64 columns a page
//   apart fall in the same four and evict each other at every tile, so A came from L2 for each
//   of the N / NR column panels (64 x 1024 x 64 with lda 1024: packed, 1.4x; trsm's blocks).
template <class Kernel, class T, class TA, class TB>
PackPolicy choose_pack_policy(const GemmArgs<T, TA, TB>& g, const BlockSizes& bs) {
  PackPolicy p;
  const bool small_b = g.k * g.n * int64_t(sizeof(T)) <= l1_floor_bytes;
  const bool small_a = g.m * g.k * int64_t(sizeof(T)) <= l1_floor_bytes && g.a.cs <= 2 * g.m + 16;
  const bool b_fits_l1 = g.m <= 4 * Kernel::mr || in_place_columns_fit_l1(g.b.cs * int64_t(sizeof(TB)), Kernel::nr);
  const bool b_outgrows_l2 = g.k * g.n * int64_t(sizeof(T)) > int64_t(cpu_features().l2_bytes);
  const bool few_a_blocks_read_b = g.b.rs == 1 && (g.m <= streamed_b_blocks() * a_block_rows<Kernel>(g.k, bs) ||
                                                   (streamed_b_blocks() > 1 && b_outgrows_l2));
  p.pack_b = g.m > 2 * Kernel::mr && !small_b && !few_a_blocks_read_b;
  // Few columns (2 to 12 column panels) against an A beyond L2: A's next block fetched into L2
  // as each block computes (PackPolicy::fetch_next_a), B packed once per k block for all the
  // row blocks. One panel cannot fetch a block in its steps (4096 x 16 x 4096 on 2 threads:
  // 0.84x with these blocks unfetched); past 12 the pack's share is small (2000 x 192 x 2000
  // 0.98-1.05x, 2000 x 384 x 2000 0.98x). Only with L1's and L2's sizes known (the blocks
  // derive from them).
  const int64_t l2 = int64_t(cpu_features().l2_bytes);
  p.fetch_next_a = g.n >= 2 * Kernel::nr && g.n <= 12 * Kernel::nr && g.m > 4 * Kernel::mr && !small_b && l2 > 0 &&
                   cpu_features().l1d_bytes > 0 && g.m * g.k * int64_t(sizeof(T)) > l2;
  if (p.fetch_next_a) p.pack_b = true;
  p.copy_b_panels = !p.pack_b && !b_fits_l1;
  const bool few_rows_and_columns = g.m <= 4 * Kernel::mr && g.n <= 8 * Kernel::nr && g.a.cs <= 2 * g.m + 16;
  p.pack_a = !((g.n <= Kernel::nr || small_a || few_rows_and_columns) && g.a.rs == 1);
  return p;
}

// Blocks for the tile-stationary walk of a prepacked A (PackPolicy::stationary_a): all rows in
// one block, k blocks of equal depth within two thirds of L1 for an A tile (MR x kc) -- the
// tile stays there while it meets every column panel of the block -- and blocks of as many
// column panels as the walk takes (stationary_block_panels, mainloop.hpp: 192 columns on 6-wide
// panels, 96 KB of B at kc 128, from L2). Shape and cache sizes only, so thread-count
// independent. Why this walk, and where: dnn's channels-last 1x1 layers (implicit_gemm_kernel.hpp).
template <class Kernel>
BlockSizes stationary_blocks(int64_t m, int64_t k) {
  using T = typename Kernel::T;
  const int64_t per_step = Kernel::mr * int64_t(sizeof(T));
  const int64_t kc = std::max<int64_t>(64, int64_t(cpu_features().l1d_bytes) * 2 / 3 / per_step / 16 * 16);
  BlockSizes b;
  b.mc = std::max<int64_t>(Kernel::mr, (m + Kernel::mr - 1) / Kernel::mr * Kernel::mr);
  b.kc = balanced_depth(k, kc);
  b.nc = stationary_block_panels * Kernel::nr;
  return b;
}

// Blocks of an A whose next block is fetched into L2 while one computes (PackPolicy::
// fetch_next_a): k blocks whose packed B micro-panel takes half of L1 (A's packed tiles stream
// past it from L2; f32 341 steps, f64 170, where the kernel's KC would be 160 and 128: fewer
// passes over C) and rows for 30% of L2 a block, so that the packed block, the next one being
// fetched and B's few packed columns stay there together. In-process, 1 thread, Zen 4, against
// other blocks around 300 KB: f32 alike with the fetch; without it (A's columns a multiple of
// 4 KB apart, columns_fit_l2_sets) 192 x 384 kept the old route's speed (NN 2048 x 64 x 2048,
// 4096 x 64 x 4096, 4096 x 32 x 4096: 0.98-1.01x) where 256 x 256 lost 2-4%; f64 at depth 192
// 1.00-1.20x against the old route, at 320 0.92-1.10x. Shape and cache sizes only.
template <class Kernel>
BlockSizes fetched_a_blocks(int64_t m, int64_t k, const BlockSizes& bs) {
  using T = typename Kernel::T;
  const CpuFeatures& f = cpu_features();
  const int64_t depth = std::max<int64_t>(64, int64_t(f.l1d_bytes) / 2 / (Kernel::nr * int64_t(sizeof(T))));
  BlockSizes b = bs;
  b.kc = balanced_depth(k, depth);
  b.mc = round_down_to(int64_t(f.l2_bytes) * 3 / 10 / (depth * int64_t(sizeof(T))), Kernel::mr);
  // Shorter k blocks (down to half) where that lets the block of an A stored without padding
  // (columns m apart) stay in L2's sets: m = 1536 floats, 6 KB a column, fits at 256 (in-process
  // sgemm NN 1536 x 64 x 1536 1.08-1.09x, 1536 x 96 x 4096 1.06-1.09x); page strides (2048, 3072,
  // 4096 floats) fit at none of them and keep the longest. m, not lda: the blocks, and with them
  // the bits, follow the shape alone.
  const int64_t e = int64_t(sizeof(T));
  for (const int64_t d : {depth, depth * 3 / 4, depth / 2}) {
    const int64_t kc = balanced_depth(k, d);
    if (columns_fit_this_l2(m * e, b.mc * e, kc)) {
      b.kc = kc;
      break;
    }
  }
  return b;
}

// Block sizes for this call. When B is read in place (streamed), its micro-panel (kc x NR)
// stays in L1 while the A block streams past it, so the k block grows until that panel alone
// would fill L1 (bs.kc sized A's and B's micro-panels together to 7/8 of it): for k up to
// ~1000 (f32) C is written in one pass instead of three or four, in equal pieces beyond (a
// strided column of B sits a page apart from the next, so fewer pieces also mean fewer TLB
// walks). On one thread all rows make one A block up to three blocks' worth (the policy streams
// B only while they are at most four; four make two: as fast as one, 0.999-1.008x at
// 1800^3-2176^3), read from L3 once per column panel: one core's share of L3 bandwidth
// feeds the kernel, and B is read once per k block -- unless the depth is shorter than KC:
// then the block keeps to A's L2 budget (a_block_rows) and B, as short, is read once per block
// (4096 x 4096 x 64, 2048 x 2048 x 128: 1.03x; a 4096-row block of depth 64 had filled L2, and
// the C panels written past it pushed it out). With more parts the cores would share
// that bandwidth, so the rows split into equal blocks within about L2 (1.5 x bs.mc x bs.kc
// elements) -- unless a part's slice of B outgrows L2: each smaller block then re-reads it from L3
// or memory, which cost more than the one block's A from L3 (Zen 4, 2 threads, in-process: f32 NN
// 768^3-3072^3 1.01-1.07x, 2048 x 512 x 2048 1.07x, TN 2048^3 1.07x, f64 768^3-1536^3 1.02-1.03x;
// with few columns the one block lost: 3072 x 64 x 1024 and 3072 x 128 x 1024 0.95x, 3072 x 512 x
// 512 0.97x). Measured interleaved: the 1x1 convolution 256 x 196 x 1024 (prepared filter as A)
// 0.93 -> 0.97x oneDNN on 1 thread; 512 x 196 x 1024 on 2 threads 0.80x with one block, 0.96x
// within the budget; 49 x 512 x 2048 (NCHW res5, 2 threads) 0.67-0.85x when the
// budget left a last block of one row, 0.96x with equal blocks. nc shrinks to keep a packed
// B block (narrow B types are packed even then) within its budget. kc depends only on the
// whole problem and the shape-chosen policy — not on the thread split or on B's stored type —
// so results stay thread-count independent and gemm_ex(bf16) equals sgemm of the widened
// inputs bitwise (mc changes no sum).
// A prepacked B under at most four row panels (Winograd's transformed filter against a block of
// few tiles, a prepared filter against a small image) is also read once per k block, from
// memory, so it takes the same longer k blocks: its panels hold the whole depth, and with one
// k block each is read end to end, one sequential stream for the hardware prefetcher, where KC
// pieces jumped by the rest of the depth at every panel. Measured in-process, Winograd
// res5_3x3 (sixteen 16 x 512 x 512 products against 16 MB of U) at batch 1 and 8: 1.23-1.34x.
template <class Kernel>
BlockSizes streaming_blocks(int64_t m, int64_t n, int64_t k, const BlockSizes& bs, PackPolicy policy,
                            const Partition& part, bool b_prepacked) {
  BlockSizes b = bs;
  if (policy.stationary_a) return stationary_blocks<Kernel>(m, k);
  if (policy.fetch_next_a) return fetched_a_blocks<Kernel>(m, k, bs);
  if (!policy.pack_b || (b_prepacked && m <= 4 * Kernel::mr)) {
    const int64_t kmax = bs.kc * (Kernel::mr + Kernel::nr) / Kernel::nr;
    const int64_t pieces = (k + kmax - 1) / kmax;
    b.kc = std::max(bs.kc, (k + pieces - 1) / pieces);
    b.nc = std::max<int64_t>(Kernel::nr, bs.kc * bs.nc / b.kc / Kernel::nr * Kernel::nr);
    const int64_t all_rows = (m + Kernel::mr - 1) / Kernel::mr * Kernel::mr;
    const int64_t part_b_bytes = k * part.part_columns(n) * int64_t(sizeof(typename Kernel::T));
    if (part.parts == 1 || part_b_bytes > int64_t(cpu_features().l2_bytes)) {
      b.mc = std::max(bs.mc, std::min(all_rows, (k < bs.kc ? 1 : 3) * a_block_rows<Kernel>(k, bs)));
    } else {  // equal row blocks of at most 1.5 x A's L2 budget (a last block of one row would re-read all of B)
      const int64_t budget_rows = std::max<int64_t>(Kernel::mr, 3 * bs.mc * bs.kc / 2 / b.kc / Kernel::mr * Kernel::mr);
      const int64_t blocks = (all_rows + budget_rows - 1) / budget_rows;
      b.mc = ((all_rows + blocks - 1) / blocks + Kernel::mr - 1) / Kernel::mr * Kernel::mr;
    }
  } else if (k >= 2 * bs.kc && m * n * int64_t(sizeof(typename Kernel::T)) > int64_t(cpu_features().l2_bytes)) {
    // A packed product whose C outgrows L2 reads and writes C from L3 or memory once per k
    // block: k blocks twice as long (half as many passes over C; B's micro-panel then comes
    // from L2 while A's passes through L1) and row blocks half as tall keep A's block within
    // L2. C beyond L3 (Zen 5): 4096^3 f32 1.03x (NN and NT; 2 threads 1.02x), 3000^3 1.02x,
    // dgemm 4096^3 117 -> 122 GFLOPS. C within L3 but beyond L2 (Zen 4: 1 MB L2, 32 KB L1,
    // whose short derived kc of 160 cost a C pass every 192 steps), in-process: f32 NN 1024^3
    // 1.034x, 2048^3 1.035x, NT 1.02x, TN 1.035x, 2 threads 1.02-1.04x, 768^3 and 1500^3
    // (B in place) 1.00x; f64 1.01-1.03x. Zen 5 had measured 0.99x at 2048^3 then.
    b.kc = 2 * bs.kc;
    b.mc = std::max<int64_t>(Kernel::mr, bs.mc / 2 / Kernel::mr * Kernel::mr);
  }
  b.kc = balanced_depth(k, b.kc);
  return b;
}

// Parts under this many flops (~20 us at this machine's rate) are not timed for the thread
// speeds (core/load_balance.hpp): their times are mostly wake-up and timer noise, and timing
// them cost 2-7% at 64^3-128^3 on 2 threads (in-process against untimed equal strips).
inline constexpr double min_timed_flops = 4e6;

// The engine on explicit operands (operand.hpp): C = alpha * op(A) op(B) + beta * C, split among
// threads. `policy` says which operands may be read in place (ignored for operands that
// cannot be).
template <class Kernel, class Epilogue, class AOp, class BOp>
void gemm_operands(int64_t m, int64_t n, int64_t k, typename Kernel::T alpha, const AOp& a, const BOp& b,
                   typename Kernel::T beta, typename Kernel::T* c, int64_t ldc, int threads, const BlockSizes& bs,
                   const Epilogue& epi, PackPolicy policy, Triangles tris = {}, bool one_block_parts = false,
                   GemmRoute* route = nullptr) {
  const Triangle tri = tris.c;
  // One operand prepacked (a convolution's prepared filter) and the other gathered into
  // panels per call (an implicit-GEMM image operand: no in-place read exists). A plain matrix
  // the policy chose to pack copies cheaply, and splitting across it would make every thread
  // read all of the prepacked operand: those keep the longer-side split.
  using Loop = Mainloop<Kernel, Epilogue, AOp, BOp>;
  const GatheredAlone gathered = is_prepacked<AOp> && !Loop::b_in_place_ok   ? GatheredAlone::b
                                 : is_prepacked<BOp> && !Loop::a_in_place_ok ? GatheredAlone::a
                                                                             : GatheredAlone::neither;
  const PartPacks packs = policy.stationary_a                                           ? PartPacks::neither
                          : is_prepacked<AOp> && Loop::b_in_place_ok && policy.pack_b ? PartPacks::b_only
                                                                                      : PartPacks::both;
  Partition part = plan_partition(m, n, k, Kernel::mr, Kernel::nr, threads, gathered, packs);
  if (tri != Triangle::none) part.split_n = true, part.unit = Kernel::nr, part.grid_m = part.grid_n = 1;
  const BlockSizes blocks = streaming_blocks<Kernel>(m, n, k, bs, policy, part, is_prepacked<BOp>);
  if (policy.fetch_next_a) policy.fetch_next_a = Loop::a_block_fits_l2_sets(a, blocks);
  // One part's rectangle of C: the mainloop, or the one-block path where the caller allows it
  // (plain matrices, no forced policy) and the rectangle is one block (the same bits either way).
  std::atomic<bool> ran_one_block{false};
  auto rectangle = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    if (m0 >= m1 || n0 >= n1) return;
    using T = typename Kernel::T;
    if constexpr (std::is_same_v<AOp, ViewOperand<T>> && std::is_same_v<BOp, ViewOperand<T>>)
      if (one_block_parts && tiny_gemm_fits<Kernel>(m1 - m0, n1 - n0, k, bs)) {
        ran_one_block.store(true, std::memory_order_relaxed);
        return tiny_gemm<Kernel>(m1 - m0, n1 - n0, k, alpha, a.shifted(m0).v, b.shifted(n0).v.transposed(), beta,
                                 c + m0 + n0 * ldc, ldc, epi, m0, n0);
      }
    Mainloop<Kernel, Epilogue, AOp, BOp>::run(m1 - m0, n1 - n0, k, alpha, a.shifted(m0), b.shifted(n0), beta,
                                              c + m0 + n0 * ldc, ldc, blocks, policy, epi, m0, n0, tris);
  };
  // Strips of C (columns, or rows) split in proportion to the pool threads' speeds, learnt from
  // the times of earlier parts (core/load_balance.hpp): the borders stay on whole micro-tiles, so
  // every tile's arithmetic, and every bit of C, is what equal strips give, and a thread slowed
  // by a busy neighbour stops holding the others up. A grid and a triangle keep equal parts.
  double shares[kMaxBalancedParts];
  int64_t borders[kMaxBalancedParts + 1];
  const bool balanced =
      part.parts > 1 && part.parts <= kMaxBalancedParts && tri == Triangle::none && !part.grid() && load_balancing();
  if (balanced) {
    balanced_shares(part.parts, shares);
    share_borders(part.split_n ? n : m, part.unit, part.parts, shares, borders);
  }
  auto run_part = [&](int p) {
    int64_t lo, hi;
    if (tri != Triangle::none) {
      // Columns in parts of equal triangle area (column j of the upper triangle holds j + 1
      // entries), borders on multiples of NR so that every micro-tile, and with it every
      // entry's arithmetic, is the same for any thread count.
      // A triangular-output product takes no epilogue (its callers pass none; an epilogue
      // would visit entries outside the triangle).
      if constexpr (!Epilogue::is_identity) __builtin_trap();
      triangle_columns(tri, n, Kernel::nr, p, part.parts, lo, hi);
      if (lo >= hi) return;
      Mainloop<Kernel, Epilogue, AOp, BOp>::run(m, hi - lo, k, alpha, a, b.shifted(lo), beta, c + lo * ldc, ldc,
                                                blocks, policy, epi, 0, lo, tris);
    } else if (part.grid()) {
      int64_t m0, m1, n0, n1;
      piece_range(m, Kernel::mr, p / part.grid_n, part.grid_m, m0, m1);
      piece_range(n, Kernel::nr, p % part.grid_n, part.grid_n, n0, n1);
      rectangle(m0, m1, n0, n1);
    } else {
      if (balanced) lo = borders[p], hi = borders[p + 1];
      else part.range(part.split_n ? n : m, p, lo, hi);
      if (part.split_n) rectangle(0, m, lo, hi);
      else rectangle(lo, hi, 0, n);
    }
  };
  if (part.parts == 1) run_part(0);
  else if (balanced && 2.0 * double(m) * double(n) * double(k) >= min_timed_flops * part.parts)
    parallel_run_timed(part.parts, shares, run_part);
  else parallel_run(part.parts, run_part);
  if (route) {
    *route = {GemmRoute::Path::tiled, part.parts, ran_one_block.load(std::memory_order_relaxed), blocks.mc, blocks.kc,
              blocks.nc};
    if (balanced) route->split_n = part.split_n, route->second_part_at = borders[1];
    route->b_in_place = Loop::reads_b_in_place(policy);
    route->b_copied = route->b_in_place && policy.copy_b_panels;
    route->a_fetched = policy.fetch_next_a;
  }
}

// `forced`: operand handling chosen by the caller (an Lt algorithm); default: by shape.
// Streaming A in place needs op(A) with unit row stride and is ignored otherwise. `route`, if
// given, says which way the product ran (for traces).
template <class Kernel, class Epilogue = NoEpilogue, class TA = typename Kernel::T, class TB = typename Kernel::T>
void gemm(const GemmArgs<typename Kernel::T, TA, TB>& g, int threads, const BlockSizes& bs, const Epilogue& epi = {},
          const std::optional<PackPolicy>& forced = std::nullopt, GemmRoute* route = nullptr) {
  using T = typename Kernel::T;
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k == 0 || g.alpha == T(0)) {
    if (route) route->path = GemmRoute::Path::scale;
    scale_c(g, epi);
    return;
  }
  const bool no_triangles =
      g.triangle == Triangle::none && g.a_triangle == Triangle::none && g.b_triangle == Triangle::none;
  const bool plain = !forced && no_triangles;
  // Each piece on the path and operand handling it would take alone (a forced one included).
  if (no_triangles && g.split_depth)
    if (const int pieces = depth_pieces(g.m, g.n, g.k, Kernel::mr, Kernel::nr, threads); pieces > 1) {
      if (route) *route = {GemmRoute::Path::depth_split, pieces, false};
      return run_depth_pieces<T>(g, pieces, threads, epi, [&](const GemmArgs<T, TA, TB>& piece) {
        gemm<Kernel, NoEpilogue, TA, TB>(piece, 1, bs, NoEpilogue{}, forced);
      });
    }
  if constexpr (std::is_same_v<T, TA> && std::is_same_v<T, TB> && requires { typename Kernel::Vec; })
    if (plain && small_gemm_serves<Kernel>(g.m, g.n, g.k, g.a.rs)) {
      if (route) *route = {GemmRoute::Path::small, 1, false};
      return small_gemm<Kernel>(g.m, g.n, g.k, g.alpha, g.a, g.b, g.beta, g.c, g.ldc, epi);
    }
  if constexpr (std::is_same_v<T, TA> && std::is_same_v<T, TB> && requires { typename Kernel::Vec; })
    if constexpr (dot_gemm_pays<typename Kernel::Vec>())
      if (plain && dot_gemm_serves(g.m, g.n, g.k, g.a.cs, g.b.rs)) {
        if (route) *route = {GemmRoute::Path::dot, 1, false};
        return dot_gemm<typename Kernel::Vec>(g.m, g.n, g.k, g.alpha, g.a, g.b, g.beta, g.c, g.ldc, epi);
      }
  if constexpr (std::is_same_v<T, TA> && std::is_same_v<T, TB>)
    if (plain && tiny_gemm_serves<Kernel>(g.m, g.n, g.k, bs, threads)) {
      if (route) {
        using Tall = typename TallKernelOf<Kernel>::type;
        *route = {GemmRoute::Path::one_block, 1, false};
        if (tiny_gemm_tall<Kernel>(g.m, g.n, g.k)) route->tall_mr = Tall::mr, route->tall_nr = Tall::nr;
      }
      return tiny_gemm<Kernel>(g.m, g.n, g.k, g.alpha, g.a, g.b, g.beta, g.c, g.ldc, epi, 0, 0, g.fetch_ahead);
    }
  PackPolicy policy = forced ? *forced : choose_pack_policy<Kernel>(g, bs);
  if (g.a.rs != 1) policy.pack_a = true;
  gemm_operands<Kernel>(g.m, g.n, g.k, g.alpha, a_operand(g.a), b_operand(g.b), g.beta, g.c, g.ldc, threads, bs, epi,
                        policy, Triangles{g.triangle, g.a_triangle, g.b_triangle},
                        !forced && g.a_triangle == Triangle::none && g.b_triangle == Triangle::none, route);
}

STRATA_TILE_NS_END
