// The cache level of the tile hierarchy: MC x KC blocks of A (L2), KC x NC blocks of B (L3),
// KC x NR micro-panels of B (L1), derived from the detected cache sizes.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/core/cpu.hpp"
#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

struct BlockSizes {
  int64_t mc, kc, nc;
};

// L1d bytes every x86 core of the last decade has at least: what "fits in L1" means for the
// shape-based choices (pack policy, software prefetch), which must not depend on the machine
// (the same shape takes the same path everywhere, so its bits do not change).
inline constexpr int64_t l1_floor_bytes = 32 * 1024;

inline int64_t round_down_to(int64_t x, int64_t unit) { return std::max(unit, x / unit * unit); }

// The step that cuts `extent` into as few blocks of at most `cap` as possible, of equal size
// in multiples of `unit` (cap, when cap is not a multiple of unit).
inline int64_t balanced_step(int64_t extent, int64_t cap, int64_t unit) {
  const int64_t pieces = (extent + cap - 1) / cap;
  const int64_t step = ((extent + pieces - 1) / pieces + unit - 1) / unit * unit;
  return std::min(step, cap);
}

// The k step for depth k under a block of kc: as few blocks as blocks up to an eighth over kc
// allow (a depth just past kc runs as one block), of equal depth in multiples of 64 (every
// kernel's k unit divides it: bf16 pairs, int8 quads, AMX's 32- and 64-deep tiles, which pad
// only a last block), the last one shorter. Cut at kc, 256 had run as 240 + 16 and 4096 as
// 17 x 240 + 16: a pass over C for 16 steps, at a fraction of the FMA rate (its C loads and
// stores against 16 steps). streaming_blocks (gemm.hpp) applies it to every call's blocks.
// In-process, 1 thread: sgemm 4096 x 4096 x 256 1.05x, 1024 x 196 x 256 1.03x, squares
// 256^3-2048^3 0.98-1.02x (NN, NT); the 1x1 convolutions res4_1x1_256_1024 1.03x and
// res3_proj_s2 1.02x (B gathered, so packed); u8s8s32 on AMX 1.00-1.01x.
inline int64_t balanced_depth(int64_t k, int64_t kc) {
  const int64_t most = kc + kc / 8, pieces = (k + most - 1) / most;
  if (pieces <= 1) return std::max<int64_t>(k, 1);
  return ((k + pieces - 1) / pieces + 63) / 64 * 64;
}

// The next A tile's slice (slice_bytes, read over kc k steps) split among the column panels
// that fetch it while the current tile computes (Mainloop::a_stationary): panel q, widths[q]
// columns wide (0: it fetches nothing), names share[q] bytes a step from offset[q] on, a share
// in proportion to its width, so that memory is asked for the slice at the rate the tile
// consumes it. The shares cover the slice (each rounded up to whole bytes a step).
inline void split_slice_fetch(const int64_t* widths, int64_t count, int64_t slice_bytes, int64_t kc, int64_t* share,
                              int64_t* offset) {
  int64_t width = 0;
  for (int64_t q = 0; q < count; ++q) width += widths[q];
  for (int64_t q = 0, from = 0; q < count; ++q) {
    share[q] = width > 0 && kc > 0 ? (slice_bytes * widths[q] + width * kc - 1) / (width * kc) : 0;
    offset[q] = from, from += share[q] * kc;
  }
}

// The width of the column panel from j0 among n columns cut into panels of up to nr: nr, except
// that a remainder of a third of nr shares the last 4/3 nr columns with the panel before it as
// two panels of 2/3 nr (64 = 4 x 12 + 8 + 8, not 5 x 12 + 4). Where B is read in place (any
// column split works), the narrow kernel's few accumulators ran a 4-column remainder at ~0.8 of
// the 12-column rate (the 32x4 f32 kernel's 8 FMA chains, no more than the FMA latency covers);
// 32x8 runs at 0.95-1.0. The same bits either way: each column's sums do not depend on the
// kernel that computes them.
inline int64_t balanced_panel_width(int64_t n, int64_t nr, int64_t j0) {
  const int64_t left = n - j0;
  if (nr % 3 == 0 && left == nr + nr / 3) return left / 2;
  return std::min(nr, left);
}

// Whether nr columns `col_bytes` apart put more lines into one L1 set than the set has ways
// (an L1 of `l1_bytes`, `ways`-way, `line`-byte lines): the lines a k step reads of them then
// evict each other before the next steps use them, and each step's B values come from L2.
// Column strides of a multiple of 4 KB (lda 1024 or 2048 floats; a channels-last image of
// 1024 or 2048 channels) put all twelve columns of a 12-wide panel into one set: more than the
// 8 ways of Zen 4's 32 KB L1, within the 12 of a 48 KB one.
inline bool columns_overflow_l1_set(int64_t col_bytes, int64_t nr, int64_t l1_bytes, int64_t ways, int64_t line) {
  const int64_t sets = std::max<int64_t>(1, l1_bytes / (line * ways));
  int64_t same = 0;  // columns in the first column's set
  for (int64_t j = 0; j < nr; ++j) same += (j * col_bytes / line) % sets == 0;
  return same > ways;
}

// Whether this machine's L1 holds the lines of NR columns `col_bytes` apart read in place
// (columns_overflow_l1_set; an L1 of unknown associativity counted as 8-way).
inline bool in_place_columns_fit_l1(int64_t col_bytes, int64_t nr) {
  const CpuFeatures& f = cpu_features();
  const int64_t ways = f.l1d_ways ? int64_t(f.l1d_ways) : 8;
  return !columns_overflow_l1_set(col_bytes, nr, int64_t(f.l1d_bytes), ways, int64_t(f.cache_line));
}

// Whether `cols` column segments of `rows_bytes` each, `col_bytes` apart, put at most half the
// ways of any set of an L2 of `l2_bytes` (`ways`-way, `line`-byte lines) into it: a block of A
// fetched into L2 ahead of its pack must stay there beside the packed block (PackPolicy::
// fetch_next_a). Columns a multiple of 4 KB apart fall into few of a 1 MB 8-way L2's 2048 sets
// (lda 2048 floats: 16 of them for each line of a column), and the fetched lines evict each
// other and the packed block instead. Each segment counted one line longer (its start within a
// line is not known here).
inline bool columns_fit_l2_sets(int64_t col_bytes, int64_t rows_bytes, int64_t cols, int64_t l2_bytes, int64_t ways,
                                int64_t line) {
  const int64_t sets = l2_bytes / (line * ways), lines = (rows_bytes + line - 1) / line + 1;
  if (sets <= 0 || lines >= sets) return false;
  std::vector<int> per_set(std::size_t(sets), 0);
  for (int64_t j = 0; j < cols; ++j) {
    const int64_t first = (j * col_bytes / line) % sets;
    for (int64_t l = 0; l < lines; ++l)
      if (2 * ++per_set[std::size_t((first + l) % sets)] > ways) return false;
  }
  return true;
}

// columns_fit_l2_sets on this machine's L2 (an L2 of unknown associativity counted as 8-way).
inline bool columns_fit_this_l2(int64_t col_bytes, int64_t rows_bytes, int64_t cols) {
  const CpuFeatures& f = cpu_features();
  return columns_fit_l2_sets(col_bytes, rows_bytes, cols, int64_t(f.l2_bytes), f.l2_ways ? int64_t(f.l2_ways) : 8,
                             int64_t(f.cache_line));
}

// The KC x NC block of B takes a quarter of L3 (shared), or 4 MiB when L3 is unknown.
inline int64_t l3_block_columns(int nr, int64_t e, int64_t kc, std::size_t l3) {
  const int64_t l3_share = l3 ? int64_t(l3) / 4 : (int64_t(4) << 20);
  return std::clamp<int64_t>(round_down_to(l3_share / (kc * e), nr), nr, 4096 / nr * nr);
}

// The AMX kernels' blocks. A 32 x 32 tile holds its four accumulators for one k block, then
// stores them and loads the next tile's C: the tile unit drains between tiles (the stores wait
// for the last products, the next products for the loads), so the longer the k block, the less
// that costs; both operands' panels then stream from L2 (a tile load takes a 64-byte row per
// cycle from there). kc: B's 32-column panel in 1/32 of L2 (bf16 1024, int8 2048 on a 2 MB L2;
// 64 KB, more than L1); A's block half of L2. Stand-alone on packed operands in the host's fast
// AMX phase (docs/PERFORMANCE.md, thirty-fifth session), bf16 2048^3 against B's panel in 2/3
// of L1 (kc 512) with a 512 KB A block: 1.12-1.22x, 4096^3 1.24x, 512^3 1.02x; an A block of
// 1.5 MB lost (0.77-0.78x of the 1 MB one).
inline BlockSizes amx_block_sizes(int mr, int nr, int64_t e, std::size_t l2, std::size_t l3) {
  const int64_t kc = std::clamp<int64_t>(round_down_to(int64_t(l2) / 32 / (nr * e), 64), 256, 4096);
  const int64_t mc = std::clamp<int64_t>(round_down_to(int64_t(l2) / 2 / (kc * e), mr), mr, 1024 / mr * mr);
  return {mc, kc, l3_block_columns(nr, e, kc, l3)};
}

// l1/l2/l3: bytes of L1d and L2 per core, and of L3 (0 if unknown). amx_tiles: the blocks of
// the AMX kernels (32 x 32 tiles), whose operands both stream from L2 (below).
inline BlockSizes derive_block_sizes(int mr, int nr, std::size_t elem_bytes, std::size_t l1, std::size_t l2,
                                     std::size_t l3, bool amx_tiles = false) {
  const int64_t e = int64_t(elem_bytes);
  if (amx_tiles) return amx_block_sizes(mr, nr, e, l2, l3);
  // A KC x NR panel of B plus an MR x KC panel of A fill 7/8 of L1 (the C tile lives in
  // registers; A streams from L2 anyway, so only B's panel must stay). Longer k blocks mean
  // fewer passes over C: measured interleaved at 1024^3-2048^3, f32 16x6, KC 320 (MC 192) ran
  // 2-4% faster than half of L1 (KC 176, MC 368).
  int64_t kc = int64_t(l1) * 7 / 8 / ((mr + nr) * e);
  // Byte quads (e 1) take their derived kc up to 1024 (AVX-512 976 on 48 KB of L1: 512 had made
  // a B panel of 6 KB).
  kc = std::clamp<int64_t>(round_down_to(kc, 16), 128, std::max<int64_t>(512, 1024 / e));
  // The MC x KC block of A takes about half of L2, and at most 512 KB: on an Emerald Rapids VM
  // (2 MB L2, its two vCPUs one core's hyperthreads) f32 MC 384 (480 KB) against the 800 of
  // half of L2: 4096^3 1.22-1.29x, 2048^3 1.00-1.24x, below 1.00-1.10x; f64 1024^3-2048^3
  // 1.08-1.27x. Zen 5's 1 MB L2 derives the same as before.
  // Byte quads keep the rows of a 512-deep block (a 1 MB block at kc 976; with half the rows
  // 4096 x 4096 x 64 and x 128, one k block either way, had lost 6%).
  const int64_t a_depth = std::min<int64_t>(kc, 512);
  int64_t mc = round_down_to(std::min<int64_t>(int64_t(l2) / 2, int64_t(512) << 10) / (a_depth * e), mr);
  mc = std::clamp<int64_t>(mc, mr, 1024 / mr * mr);
  return {mc, kc, l3_block_columns(nr, e, kc, l3)};
}

STRATA_TILE_NS_END
