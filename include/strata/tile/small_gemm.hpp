// Small products: every C column one to three vectors of rows (m <= MR, or 1.5 MR on AVX-512)
// over a short depth (k <= 32), n <= 64. Their arithmetic is a few dozen to a few thousand
// FMAs, and the one-block path's setup around it (a zero-padded copy of A's rows up to MR, C
// tiles copied to and from a padded edge tile, the cover of narrower kernels) cost as much or
// more: a 4^3 sgemm through the CBLAS took 62 ns against OpenBLAS's 14-17. Here A's columns are
// read in place with the last vector's rows masked (V::load_first), B's elements are broadcast
// where they lie, and C is read and written in place, masked the same way: one loop nest per
// block of columns, nothing copied except a small op(A) = A^T, transposed into a stack buffer.
// blas::gemm calls it before it builds a call record (GemmKernel::run_small). In-process
// against the one-block path (f32, AVX-512, 1 thread, NN): 4^3 1.33x, 8^3 1.43x, 12^3 1.50x,
// 16^3 1.11-1.22x, 20^3 1.81-1.87x, 24^3 1.53x, 32^3 1.03-1.06x, 32x64x32 1.03-1.04x, 8x64x8
// 1.86x; batches of 1000: 32^3 1.06-1.09x, 16^3 1.18-1.26x; STRATA_ISA=avx2 (MR 16):
// 1.04-1.62x, 16x32x32 1.00x.
// Each C element is the same sum in the same order as on the other paths (zero, then one FMA
// per depth step in order, finished by update_c): the depth stays below the microkernels'
// chained depth, where they keep one accumulator per element, so the results equal the
// one-block and tiled paths' bit for bit (GemmEngine.SmallPathEqualsTheTiledPathBitwise).
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "strata/tile/matrix.hpp"
#include "strata/tile/microkernel.hpp"
#include "strata/tile/scheduler.hpp"
#include "strata/tile/transpose.hpp"

STRATA_TILE_NS_BEGIN

inline constexpr int64_t small_gemm_max_k = 32;
inline constexpr int64_t small_gemm_max_n = 64;

// op(A) = A^T is transposed here, which can outweigh the savings: element by element (f64; f32
// edges) only up to 128 entries (TN against the one-block path's packing, in-process: 8x8x8
// 1.25x, 8x64x8 1.72x, but 16^3 0.88x, 32^3 0.63x); f32 in 8 x 8 blocks in registers
// (transpose_8x8) up to 1024 (12^3 1.36x, 16^3 1.17x, 24^3 1.42x, 24x64x24 1.52x, 32x16x16
// 1.06x, 32^3 1.00x; 16x32x32 and 16x64x32 0.96-1.00x).
template <class T>
inline constexpr int64_t small_gemm_max_transposed = std::is_same_v<T, float> ? 1024 : 128;

// Vectors of rows: a micro-tile's (two), or three with AVX-512's 32 registers (f32 up to 48 rows,
// f64 24), in blocks of 3 x 8 (in-process against the one-block path, 1 thread: f32 48x48x32
// 1.10x, 40x40x20 1.53x, 36x64x32 1.24x, 33^3 1.02x; f64 24^3 1.27x, 20^3 1.77x). Four (4 x 6
// blocks) lost to the micro-tiles where the rows fill them (f32 64x64x32 0.99x, f64 32^3
// 0.95x).
template <class Kernel>
constexpr int small_gemm_max_vectors() {
  return sizeof(typename Kernel::Vec) >= 64 ? 3 : Kernel::nv;
}

// Chosen by shape alone: only products under the work the scheduler would split
// (min_part_flops), so it runs on one thread whatever the thread count, as the one-block path's
// small products do. a_rs: op(A)'s row stride; max_rows: small_gemm_max_vectors x lanes (the Lt
// heuristics pass it from the kernel's info). For a floating-point MicroKernel (the caller
// checks).
template <class T>
bool small_gemm_serves_rows(int64_t max_rows, int64_t m, int64_t n, int64_t k, int64_t a_rs) {
  return m > 0 && n > 0 && k > 0 && m <= max_rows && n <= small_gemm_max_n && k <= small_gemm_max_k &&
         2 * m * n * k < min_part_flops &&
         (a_rs == 1 || m * k <= small_gemm_max_transposed<T>);
}
template <class Kernel>
bool small_gemm_serves(int64_t m, int64_t n, int64_t k, int64_t a_rs) {
  return small_gemm_serves_rows<typename Kernel::T>(small_gemm_max_vectors<Kernel>() * Kernel::Vec::lanes, m, n,
                                                     k, a_rs);
}

// Columns per block: 8 for three vectors of rows (24 accumulators), the microkernel's NR for
// two; for one, twice that, up to 16, as the registers allow (16 zmm accumulators on AVX-512,
// 12 ymm on AVX2): a 16-row, 16-column C took a 12- and a 4-column block, the latter waiting on
// its 4 FMA chains.
template <class Kernel, int NV>
constexpr int small_gemm_width() {
  return NV >= 3 ? 8 : NV == 2 ? Kernel::nr : (2 * Kernel::nr < 16 ? 2 * Kernel::nr : 16);
}

// W columns of C (rows: NV vectors, the last one `rows_last` lanes, masked if Ragged): A's
// column p at a + p * a_ps, B's element (p, j) at b[p * b_ps + j * b_js]. Whole vectors are not
// masked: AVX2's masked loads cost (16x64x32 0.95x of the one-block path with them).
template <class V, int NV, int W, bool Ragged, class T>
[[gnu::noinline]] void small_block(int64_t k, const T* __restrict a, int64_t a_ps, int rows_last,
                                   const T* __restrict b, int64_t b_ps, int64_t b_js, T* __restrict c, int64_t ldc,
                                   T alpha, T beta) {
  constexpr int L = V::lanes;
  V acc[W][NV];
#pragma GCC unroll 16
  for (int j = 0; j < W; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[j][v] = V::zero();
  // One depth step; column(j) is B's element (p, j).
  auto step = [&](const T* ap, auto&& column) __attribute__((always_inline)) {
    V av[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      av[v] = !Ragged || v + 1 < NV ? V::load(ap + v * L) : V::load_first(ap + v * L, rows_last);
#pragma GCC unroll 16
    for (int j = 0; j < W; ++j) {
      const V bj = V::broadcast(column(j));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[j][v] = fma(av[v], bj, acc[j][v]);
    }
  };
  bool done = false;
  if constexpr (W <= 12) {
    // B's columns apart (NN, TN: B in place column-major) addressed as the microkernels' strided
    // columns, five registers: written as b + p * b_ps + j * b_js, GCC kept a base register per
    // column, twelve for a 12-wide block, and spilled the depth's bound and a base to the stack,
    // reloaded every step. In-process against that (1 thread, NN): a batch of 1000 32^3 1.04x,
    // 24^3 1.03x, 32^3 1.02x, 48x48x32 1.01-1.08x, TN 32^3 1.02x; AVX2 16x32x32 1.04x.
    if (b_js != 1) {
      typename MicroKernel<V, NV, W>::StridedColumns cols(b, b_js);
      for (int64_t p = 0; p < k; ++p) {
        cols.hide_strides();
        step(a + p * a_ps, [&](int j) __attribute__((always_inline)) { return cols.at(j); });
        cols.advance(b_ps);
      }
      done = true;
    }
  }
  if (!done)
    for (int64_t p = 0; p < k; ++p)
      step(a + p * a_ps, [&](int j) __attribute__((always_inline)) { return b + p * b_ps + j * b_js; });
  update_c<V>(alpha, beta, [&](auto&& value) __attribute__((always_inline)) {
#pragma GCC unroll 16
    for (int j = 0; j < W; ++j)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        T* cp = c + j * ldc + v * L;
        if (!Ragged || v + 1 < NV) {
          value(acc[j][v], [cp]() __attribute__((always_inline)) { return V::load(cp); }).store(cp);
        } else {
          auto old = [cp, rows_last]() __attribute__((always_inline)) { return V::load_first(cp, rows_last); };
          value(acc[j][v], old).store_first(cp, rows_last);
        }
      }
  });
}

// Columns [0, n) in blocks of W, the rest (fewer than W) by the next power of two below W, and
// so on: at most one block of each narrower width, as the microkernels cover an edge.
template <class V, int NV, int W, bool Ragged, class T>
[[gnu::always_inline]] inline void small_columns(int64_t n, int64_t k, const T* a, int64_t a_ps, int rows_last,
                                                 const T* b, int64_t b_ps, int64_t b_js, T* c, int64_t ldc, T alpha,
                                                 T beta) {
  int64_t j0 = 0;
  for (; j0 + W <= n; j0 += W)
    small_block<V, NV, W, Ragged>(k, a, a_ps, rows_last, b + j0 * b_js, b_ps, b_js, c + j0 * ldc, ldc, alpha, beta);
  if constexpr (W > 1)
    if (j0 < n)
      small_columns<V, NV, narrower_width(W), Ragged>(n - j0, k, a, a_ps, rows_last, b + j0 * b_js, b_ps, b_js,
                                              c + j0 * ldc, ldc, alpha, beta);
}

// C = alpha * op(A) op(B) + beta * C, then the epilogue; requires small_gemm_serves and k > 0.
template <class Kernel, class Epilogue, class T>
void small_gemm(int64_t m, int64_t n, int64_t k, T alpha, const MatrixView<T>& av, const MatrixView<T>& bv, T beta,
                T* c, int64_t ldc, const Epilogue& epi) {
  static_assert(small_gemm_max_k < Kernel::chained_min_depth,
                "the small path's sums must be the microkernels' single-chain sums");
  using V = typename Kernel::Vec;
  constexpr int L = V::lanes;
  // op(A)'s columns in place when contiguous, else op(A) (A^T) transposed here (f32: whole 8 x 8
  // blocks in registers, the edges element by element), m rows apart. Not by pack_panels, which
  // pads to whole panels of the most rows taken (48): TN 8^3-32^3 0.77-0.95x of this.
  const T* a = av.data;
  int64_t a_ps = av.cs;
  alignas(64) T copy[small_gemm_max_transposed<T>];
  if (av.rs != 1) {
    int64_t i8 = 0, p8 = 0;
    if constexpr (std::is_same_v<T, float>)
      if (av.cs == 1) {
        i8 = m / 8 * 8, p8 = k / 8 * 8;
        for (int64_t p = 0; p < p8; p += 8)
          for (int64_t i = 0; i < i8; i += 8) transpose_8x8(av.data + i * av.rs + p, av.rs, copy + i + p * m, m);
      }
    for (int64_t p = 0; p < k; ++p)
      for (int64_t i = p < p8 ? i8 : 0; i < m; ++i) copy[i + p * m] = av.data[i * av.rs + p * av.cs];
    a = copy, a_ps = m;
  }
  const int rows_last = int(m - (m - 1) / L * L);
  auto columns = [&]<int NV, bool Ragged>() __attribute__((always_inline)) {
    small_columns<V, NV, small_gemm_width<Kernel, NV>(), Ragged>(n, k, a, a_ps, rows_last, bv.data, bv.rs, bv.cs, c,
                                                                 ldc, alpha, beta);
  };
  auto ragged = [&]<int NV>() __attribute__((always_inline)) {
    if (rows_last == L) columns.template operator()<NV, false>();
    else columns.template operator()<NV, true>();
  };
  const int64_t nv = (m + L - 1) / L;
  if (nv == 1) ragged.template operator()<1>();
  else if (nv == 2) ragged.template operator()<2>();
  else if constexpr (small_gemm_max_vectors<Kernel>() >= 3) ragged.template operator()<3>();
  if constexpr (!Epilogue::is_identity) epi(c, ldc, 0, 0, m, n);
}

STRATA_TILE_NS_END
