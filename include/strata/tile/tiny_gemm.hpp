// Tiny products (a few KB of operands): the tiled path's blocking, packing, thread planning and
// per-tile edge packing cost several times the arithmetic below ~24^3 (8x8x8 ran at 0.4x of
// OpenBLAS). Here op(A) is packed once, whole, into zero-padded MR panels (no blocks), B is read
// in place (its last, partial column panel packed and zero-padded), and every
// C tile is written by the same microkernels as the tiled path (the narrowest that covers it).
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
#include "strata/tile/workspace.hpp"

STRATA_TILE_NS_BEGIN

// Whether tiny_gemm serves this product (operands stored as the compute type; the caller checks
// that): one k block, and small enough that the tiled path's overheads outweigh the arithmetic
// (f32 16x6: 20^3 ran 1.5x faster here; from ~24^3 on the tiled path is as fast, and it can
// use threads).
template <class Kernel>
bool tiny_gemm_serves(int64_t m, int64_t n, int64_t k, const BlockSizes& bs) {
  if constexpr (!std::is_floating_point_v<typename Kernel::T>) return false;
  return k <= bs.kc && m <= 2 * Kernel::mr && n <= 4 * Kernel::nr && m * n * k <= 24 * 24 * 24;
}

// C = alpha * op(A) op(B) + beta * C, then the epilogue over the whole C. Requires k > 0.
template <class Kernel, class Epilogue, class T>
void tiny_gemm(int64_t m, int64_t n, int64_t k, T alpha, MatrixView<T> av, MatrixView<T> bv, T beta, T* c,
               int64_t ldc, const Epilogue& epi) {
  constexpr int MR = Kernel::mr, NR = Kernel::nr;
  const int64_t m_pad = (m + MR - 1) / MR * MR;
  T* a = static_cast<T*>(thread_pack_buffer(0).get(sizeof(T) * std::size_t((m_pad + NR) * k)));
  T* b_edge = a + m_pad * k;
  a_operand(av).template pack<MR>(0, m, 0, k, a);  // all of op(A) as zero-padded MR panels
  const ViewOperand<T> b = b_operand(bv);
  alignas(64) T edge[MR * NR];
  for (int64_t j0 = 0; j0 < n; j0 += NR) {
    const int64_t cols = std::min<int64_t>(NR, n - j0);
    // B element (p, j) at bt[p * b_ps + j * b_js]: in place, or the last columns as a padded panel.
    const T* bt = bv.data + j0 * bv.cs;
    int64_t b_ps = bv.rs, b_js = bv.cs;
    if (cols < NR && !covers_exactly<Kernel>(MR, cols)) {
      b.template pack<NR>(j0, cols, 0, k, b_edge);
      bt = b_edge, b_ps = NR, b_js = 1;
    }
    for (int64_t i0 = 0; i0 < m; i0 += MR) {
      const int64_t rows = std::min<int64_t>(MR, m - i0);
      T* ct = c + i0 + j0 * ldc;
      if (covers_exactly<Kernel>(rows, cols))
        run_narrowest<Kernel>(rows, cols, k, a + i0 * k, MR, bt, b_ps, b_js, ct, ldc, alpha, beta);
      else
        ragged_tile<MR, NR>(rows, cols, ct, ldc, beta, edge, [&](T* tile_c, int64_t ld) {
          run_narrowest<Kernel>(rows, cols, k, a + i0 * k, MR, bt, b_ps, b_js, tile_c, ld, alpha, beta);
        });
    }
  }
  if constexpr (!Epilogue::is_identity) epi(c, ldc, 0, 0, m, n);
}

STRATA_TILE_NS_END
