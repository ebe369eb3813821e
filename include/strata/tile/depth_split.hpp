// The scheduler's one non-deterministic option (blas::MathMode::fast, GemmArgs::split_depth):
// where the split of C among threads (scheduler.hpp) leaves threads idle or uneven -- too few
// rows and columns for a micro-tile or two each, over a long depth -- the depth is cut into one
// piece per thread instead. Each piece's product goes to a buffer of its own (the first piece's straight
// into C, with beta), the pieces are added into C in piece order, and the epilogue runs on the
// finished sums. Each sum's rounding then depends on the thread count, so deterministic mode
// (the default) never takes it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>

#include "strata/core/thread_pool.hpp"
#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/scheduler.hpp"

STRATA_TILE_NS_BEGIN

// Pieces shallower than one k block of the kernels (256 and more) would repack more than they
// save; pieces also carry the scheduler's least work per thread (min_part_flops).
inline constexpr int64_t min_piece_depth = 256;

// How many depth pieces a product runs in on `threads` threads: 1 (no split) where the split
// of C keeps its busiest thread within 1.25x of an even share (a grid from four parts on always
// does), else as many as the threads, the depth (min_piece_depth each) and the work allow.
// Splits of C fall on whole micro-tiles: 16 columns on 12-wide tiles go 12 + 4, one thread
// doing three times the other's work, where two depth pieces do half each.
inline int depth_pieces(int64_t m, int64_t n, int64_t k, int mr, int nr, int threads) {
  if (threads < 2) return 1;
  const Partition part = plan_partition(m, n, k, mr, nr, threads);
  if (part.grid()) return 1;
  const int64_t len = part.split_n ? n : m;
  int64_t busiest = 0;
  for (int p = 0; p < part.parts; ++p) {
    int64_t lo, hi;
    part.range(len, p, lo, hi);
    busiest = std::max(busiest, hi - lo);
  }
  if (4 * busiest * threads <= 5 * len) return 1;
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const int64_t by_work = int64_t(flops / min_part_flops);
  return int(std::clamp<int64_t>(std::min({int64_t(threads), k / min_piece_depth, by_work}), 1, threads));
}

// C = alpha * op(A) op(B) + beta * C, then the epilogue, over `pieces` depth pieces run in
// parallel by run_piece(args) on one thread each (args: the piece's shape and operands, and its
// output). Then each thread adds the other pieces' sums into a range of C's columns and runs
// the epilogue there. Args is GemmArgs (gemm.hpp).
template <class T, class Args, class Epilogue, class RunPiece>
void run_depth_pieces(const Args& g, int pieces, int threads, const Epilogue& epi, RunPiece&& run_piece) {
  const int64_t m = g.m, n = g.n, ldc = g.ldc;
  // Every value is written by its piece (beta 0) before it is read: no zeroing.
  const auto sums = std::make_unique_for_overwrite<T[]>(std::size_t(pieces - 1) * std::size_t(m * n));
  parallel_run(pieces, [&](int p) {
    int64_t k0, k1;
    piece_range(g.k, 8, p, pieces, k0, k1);
    Args e = g;
    e.k = k1 - k0;
    e.a.data += k0 * g.a.cs;
    e.b.data += k0 * g.b.rs;
    e.split_depth = false;
    if (p > 0) e.beta = T(0), e.c = sums.get() + std::size_t(p - 1) * std::size_t(m * n), e.ldc = m;
    run_piece(e);
  });
  parallel_for(n, threads, [&](int64_t j0, int64_t j1, int) {
    for (int64_t j = j0; j < j1; ++j) {
      T* __restrict cj = g.c + j * ldc;
      for (int p = 1; p < pieces; ++p) {
        const T* __restrict s = sums.get() + std::size_t(p - 1) * std::size_t(m * n) + j * m;
        for (int64_t i = 0; i < m; ++i) cj[i] += s[i];
      }
    }
    if constexpr (!Epilogue::is_identity) epi(g.c + j0 * ldc, ldc, 0, j0, m, j1 - j0);
  });
}

STRATA_TILE_NS_END
