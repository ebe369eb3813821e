// Products of one block (tiny ones first: the tiled path's blocking, packing, thread planning
// and per-tile edge packing cost several times the arithmetic below ~24^3, 8x8x8 ran at 0.4x of
// OpenBLAS; and on one thread every product whose depth is one k block and whose op(A) fits
// in L2). Here op(A) is read in place (contiguous columns close together; a partial last row
// panel packed) or packed once, whole, into zero-padded MR panels (no blocks), B is read in
// place (a last, partial column panel the narrower kernels do not cover exactly packed and
// zero-padded), and every C tile is written by the same microkernels as the tiled path (the
// narrowest that cover it).
// With the depth in one k block, each element is the same sum in the same order (then
// alpha * acc + beta * C), so results equal the tiled path's bit for bit, whichever path a
// shape takes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "strata/tile/blocking.hpp"
#include "strata/tile/microkernel.hpp"
#include "strata/tile/operand.hpp"
#include "strata/tile/scheduler.hpp"
#include "strata/tile/workspace.hpp"

STRATA_TILE_NS_BEGIN

// Whether tiny_gemm fits a product or a thread's part of one (operands stored as the compute
// type; the caller checks that): one k block, at most 8 row panels and 24 column panels (op(A)
// within L2, each B panel read once). It serves a whole product that is one thread's work --
// the caller runs on one thread, or the product is too small for the tiled path to split
// (under min_part_flops); otherwise the scheduler splits the product and each part that fits
// runs here (gemm_operands). The tiled path's blocking, policy, packing and thread planning
// would only add to the arithmetic. Up to 24^3 while this path
// packed all of A (f32 16x6: 20^3 ran 1.5x faster here); reading A in place it is the faster
// path throughout (AVX-512, in-process against the tiled path, 1 thread: f32 32^3 1.09-1.15x,
// 64^3 1.02-1.03x, 96^3 1.09x, 128^3 1.05x, 256x256x240 1.03x, NT 1.05-1.14x, TN 1.00-1.03x;
// f64 100^3-128^3 1.07-1.10x; STRATA_ISA=avx2 f32 100^3-128^3 1.04-1.05x).
template <class Kernel>
bool tiny_gemm_fits(int64_t m, int64_t n, int64_t k, const BlockSizes& bs) {
  if constexpr (!std::is_floating_point_v<typename Kernel::T>) return false;
  return k <= bs.kc && m <= one_block_row_tiles * Kernel::mr && n <= one_block_col_tiles * Kernel::nr;
}
template <class Kernel>
bool tiny_gemm_serves(int64_t m, int64_t n, int64_t k, const BlockSizes& bs, int threads) {
  return tiny_gemm_fits<Kernel>(m, n, k, bs) &&
         (threads == 1 || 2.0 * double(m) * double(n) * double(k) < min_part_flops);
}

// Whether the one-block path runs a product on Kernel's tall partner (TallKernelOf: AVX-512's
// 64x6 f32 and 32x6 f64 tiles): where op(A)'s rows are whole tall tiles and op(A) stays in L1
// (l1_floor_bytes, a constant: the same shape takes the same kernel everywhere). Each column
// panel reads all of op(A) once, so half-width panels read it twice as often, from L1 for
// free; each k step loads 10 values per 24 FMAs there against 14 (measured in-process on
// AVX-512, 1 thread, tall against wide: f64 batches of 1000 32^3 products 1.12-1.13x, 128x64x32
// 1.02-1.11x, 64^3 0.99-1.00x; f32 64^3 1.00-1.02x on one product, 1.07x over 300 distinct
// ones; op(A) beyond L1 lost: f64 64x32x128 0.91x, 96^3 0.95-0.97x).
// The bits stay those of the wide kernel (and of the tiled path, and of any thread count's
// parts, which may run either kernel): the depth is one k block and full tiles keep one
// accumulator set on both, but the narrow edge kernels from chained_min_depth on rotate sets
// in numbers that differ between the two (32x1 four, 64x1 two): deeper products take the tall
// tiles only where both kernels' last columns are covered in one set.
template <class Kernel>
bool tiny_gemm_tall(int64_t m, int64_t n, int64_t k) {
  using Tall = typename TallKernelOf<Kernel>::type;
  if constexpr (std::is_same_v<Tall, Kernel>) {
    return false;
  } else {
    if (m % Tall::mr != 0 || m * k * int64_t(sizeof(typename Kernel::T)) > l1_floor_bytes) return false;
    auto one_set = [n]<class K>() { return n % K::nr == 0 || covered_in_one_set<K>(K::mr, n % K::nr); };
    return k < Kernel::chained_min_depth ||
           (one_set.template operator()<Kernel>() && one_set.template operator()<Tall>());
  }
}

// C = alpha * op(A) op(B) + beta * C, then the epilogue, column panel by column panel; (row0,
// col0) locate this C in the whole product for the epilogue (a thread's part). Requires k > 0.
// `ahead`: the next product's operands, fetched over this one's k steps (fetch_ahead.hpp).
// Views by reference, as pack_panels takes them (by value they went through a failed store
// forward); with the GemmCall built member by member, 4^3-16^3 calls 11-15 ns shorter (65 -> 51
// ns at 4^3).
template <class Kernel, class Epilogue, class T>
void tiny_gemm(int64_t m, int64_t n, int64_t k, T alpha, const MatrixView<T>& av, const MatrixView<T>& bv, T beta, T* c,
               int64_t ldc, const Epilogue& epi, int64_t row0 = 0, int64_t col0 = 0, FetchAhead* ahead = nullptr) {
  if constexpr (!std::is_same_v<typename TallKernelOf<Kernel>::type, Kernel>)
    if (tiny_gemm_tall<Kernel>(m, n, k))
      return tiny_gemm<typename TallKernelOf<Kernel>::type>(m, n, k, alpha, av, bv, beta, c, ldc, epi, row0, col0,
                                                            ahead);
  constexpr int MR = Kernel::mr, NR = Kernel::nr;
  if (ahead) ahead->pace((m + MR - 1) / MR * ((n + NR - 1) / NR) * k);
  // op(A) with contiguous columns close together is read in place, all but a partial last row
  // panel shorter or taller than the half-height kernel; otherwise all of it is packed, as
  // zero-padded MR panels.
  int64_t in_place_rows = 0;
  if (av.rs == 1 && av.cs <= 2 * m + 16) {
    in_place_rows = m / MR * MR;
    if constexpr (requires { typename Kernel::HalfRows; })
      if (m - in_place_rows == Kernel::HalfRows::mr) in_place_rows = m;
  }
  const int64_t m_pad = (m - in_place_rows + MR - 1) / MR * MR;
  T* a = static_cast<T*>(thread_pack_buffer(0).get(sizeof(T) * std::size_t((m_pad + NR) * k)));
  T* b_edge = a + m_pad * k;
  if (m_pad > 0) a_operand(av).template pack<MR>(in_place_rows, m - in_place_rows, 0, k, a);
  const ViewOperand<T> b = b_operand(bv);
  alignas(64) T edge[MR * NR];
  int64_t first_panel = 0;
  // One row of A read in place, no epilogue or fetch to interleave: the leading full panels in
  // one kernel call (MicroKernel::run_row, the same bits as tile by tile).
  if constexpr (Epilogue::is_identity && requires { &Kernel::run_row; })
    if (!ahead && m == MR && in_place_rows == m) {
      while (first_panel + NR <= n && panel_width<Kernel>(n, first_panel, m) == NR) first_panel += NR;
      if (first_panel > 0)
        Kernel::run_row(first_panel / NR, k, av.data, av.cs, bv.data, bv.rs, bv.cs, c, ldc, alpha, beta);
    }
  for (int64_t j0 = first_panel, cols = 0; j0 < n; j0 += cols) {
    cols = panel_width<Kernel>(n, j0, m);  // B in place: a remainder of NR / 3 as two panels of 2/3 NR
    // B element (p, j) at bt[p * b_ps + j * b_js]: in place, or the last columns as a padded panel.
    const T* bt = bv.data + j0 * bv.cs;
    int64_t b_ps = bv.rs, b_js = bv.cs;
    if (cols < NR && !covers_exactly<Kernel>(MR, cols)) {
      b.template pack<NR>(j0, cols, 0, k, b_edge);
      bt = b_edge, b_ps = NR, b_js = 1;
    }
    for (int64_t i0 = 0; i0 < m; i0 += MR) {
      const int64_t rows = std::min<int64_t>(MR, m - i0);
      const bool in_place = i0 < in_place_rows;
      const T* at = in_place ? av.data + i0 : a + (i0 - in_place_rows) * k;
      const int64_t a_ps = in_place ? av.cs : MR;
      T* ct = c + i0 + j0 * ldc;
      // No C prefetch at the tiles' start (MicroKernel::start): this C is small and near.
      if (covers_exactly<Kernel>(rows, cols))
        run_narrowest<Kernel>(rows, cols, k, at, a_ps, bt, b_ps, b_js, ct, ldc, alpha, beta, ahead, false);
      else
        ragged_tile<MR, NR>(rows, cols, ct, ldc, beta, edge, [&](T* tile_c, int64_t ld) {
          run_narrowest<Kernel>(rows, cols, k, at, a_ps, bt, b_ps, b_js, tile_c, ld, alpha, beta, ahead, false);
        });
    }
    // The epilogue visits each finished column panel while it is in L1, as the tiled path does.
    if constexpr (!Epilogue::is_identity) epi(c + j0 * ldc, ldc, row0, col0 + j0, m, cols);
  }
}

STRATA_TILE_NS_END
