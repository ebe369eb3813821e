// Products of few rows and columns over a long depth (m, n <= 16, 512 <= k <= 65536; C of at
// most four blocks beyond: Gram matrices, A^T A of a tall thin A, a small layer over a long
// reduction) as dot products vectorised along the depth. The microkernels vectorise along m:
// with 8 rows the 16-lane AVX-512 tile is half padding, and 4 x 4 x 4096 spent most of its time
// packing panels for a handful of FMAs (0.21-0.50x of OpenBLAS on this machine). Here each C
// entry is one vector accumulator over k: a block of up to 4 x 4 entries takes per V::lanes
// steps of depth one vector of each of its rows and columns and one FMA per entry, then sums
// its lanes once at the end (AVX-512 f32: the block's 16 sums by one shuffle tree,
// VecAvx512F32::sum16). In-process against the microkernel paths, 1 thread: TN 4x4x4096 7.9x,
// 8x8x1024 2.3x, 12x12x512 1.38x, 16x16x1024 1.12x; NN 2x16x512 3.2x, 4x4x4096 2.5x, 8x8x1024
// 1.23x. (Depth chunks kept in L1 with the partial sums carried in memory between them measured
// 0.75x of this and were not kept.) op(A)'s rows and op(B)'s columns are read in place where
// their depth is contiguous (A^T, B), else copied once into contiguous rows. One thread, chosen
// by shape alone, so the result does not depend on the thread count; the sum order differs from
// the tiled path's (lane sums, then the lanes in a fixed tree), which is as accurate or more.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/transpose.hpp"
#include "strata/tile/workspace.hpp"

STRATA_TILE_NS_BEGIN

inline constexpr int64_t dot_gemm_max_mn = 16;
// The entries one block sums at a time (below: 16 accumulators).
inline constexpr int dot_block_rows = 4, dot_block_cols = 4;
inline constexpr int64_t dot_gemm_min_k = 512;
// Beyond this depth each block of entries reads its rows from L3 or memory, once per block,
// and the copied rows outgrow L2; the tiled path blocks the depth instead. Only products of at
// most four blocks copying at most four rows stay here: the tiled path pads them to whole
// micro-tiles, where 1 x 1 is 1/384 of a 32x12 tile (in-process against the tiled path, 1
// thread, k = 100000: NN 1x1 50x (0.3 -> 16 GFLOPS), 4x4 1.2x, 2x16 (k 200000) 1.3x; TN 4x4
// 3.5x, 8x8 1.1x; but NN 8x8, eight rows copied, 0.43x, TN 12x12 0.58x, 16x16 0.36x).
inline constexpr int64_t dot_gemm_max_k = int64_t(1) << 16;
inline constexpr int64_t dot_gemm_deep_max_blocks = 4, dot_gemm_deep_max_copied_rows = 4;
// Rows copied to make their depth contiguous (op(A) = A, op(B) = B^T), at most: the copy is a
// transposition with a store stream per row (in-process against the microkernel paths, 1
// thread: NN 4x4x4096 2.3x, 2x16x512 2.6x, 8x8x1024 1.16x, but 12x12x512 0.86x, 13x13x2000 0.63x
// and 16x16x4096 0.10x; TN, nothing copied, 8x8x1024 2.3x, 12x12x512 1.22x, 16x16x4096 1.31x;
// from k = 256 the lane sums weigh too much: TN 16x16x256 0.60x).
inline constexpr int64_t dot_gemm_max_copied_rows = 8;

// a_depth_stride: op(A)'s stride along the depth; b_depth_stride: op(B)'s.
inline bool dot_gemm_serves(int64_t m, int64_t n, int64_t k, int64_t a_depth_stride, int64_t b_depth_stride) {
  const int64_t copied = (a_depth_stride != 1 ? m : 0) + (b_depth_stride != 1 ? n : 0);
  // More than 12 x 12 entries need the longer depth (TN 16x16x512 0.80x, 16x16x1024 1.02x).
  const int64_t min_k = m * n > 144 ? 2 * dot_gemm_min_k : dot_gemm_min_k;
  if (k > dot_gemm_max_k)
    return ((m + dot_block_rows - 1) / dot_block_rows) * ((n + dot_block_cols - 1) / dot_block_cols) <=
               dot_gemm_deep_max_blocks &&
           copied <= dot_gemm_deep_max_copied_rows;
  return m <= dot_gemm_max_mn && n <= dot_gemm_max_mn && k >= min_k && copied <= dot_gemm_max_copied_rows;
}

// Whether the path pays for vectors V: with 32 registers (AVX-512) only, for blocks of 4 x 4
// entries (16 accumulators, 8 loads per 16 FMAs). AVX2's 16 registers allow 2 x 4, 6 loads per
// 8 FMAs, and that dot path lost to the microkernels (in-process, STRATA_ISA=avx2: TN 8x8x1024
// 0.85x, 12x12x512 0.81x, NN 8x8x1024 0.38x, 4x4x4096 0.89x): the other ISAs keep the
// microkernel paths.
template <class V>
constexpr bool dot_gemm_pays() {
  return sizeof(V) >= 64;
}

// The MI x NJ block: dot products of rows a + i * lda and columns b + j * ldb, each k
// contiguous values, into out[i + j * ldo].
template <class V, int MI, int NJ, class T>
void dot_block(int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* out, int64_t ldo) {
  constexpr int L = V::lanes;
  V acc[MI][NJ];
#pragma GCC unroll 4
  for (int i = 0; i < MI; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NJ; ++j) acc[i][j] = V::zero();
  const int64_t whole = k / L * L;
  for (int64_t p = 0; p < whole; p += L) {
    V av[MI];
#pragma GCC unroll 4
    for (int i = 0; i < MI; ++i) av[i] = V::load(a + i * lda + p);
#pragma GCC unroll 4
    for (int j = 0; j < NJ; ++j) {
      const V bj = V::load(b + j * ldb + p);
#pragma GCC unroll 4
      for (int i = 0; i < MI; ++i) acc[i][j] = fma(av[i], bj, acc[i][j]);
    }
  }
  // Each entry's lanes summed: 16 at once where the vector type can (sum16).
  T sums[MI * NJ];
  if constexpr (MI * NJ == 16 && requires(const V (&v)[16]) { V::sum16(v, sums); }) {
    V flat[16];
    for (int i = 0; i < MI; ++i)
      for (int j = 0; j < NJ; ++j) flat[i * NJ + j] = acc[i][j];
    V::sum16(flat, sums);
  } else {
    for (int i = 0; i < MI; ++i)
      for (int j = 0; j < NJ; ++j) sums[i * NJ + j] = acc[i][j].sum();
  }
  for (int i = 0; i < MI; ++i)
    for (int j = 0; j < NJ; ++j) {
      T s = sums[i * NJ + j];
      for (int64_t p = whole; p < k; ++p) s += a[i * lda + p] * b[j * ldb + p];
      out[i + j * ldo] = s;
    }
}

// The block at rows [i0, i0 + mi), columns [j0, j0 + nj) (mi <= MI, nj <= NJ), by the
// instantiation of exactly that size.
template <class V, int MI, int NJ, class T>
void dot_block_any(int64_t mi, int64_t nj, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* out,
                   int64_t ldo) {
  if constexpr (MI > 1)
    if (mi < MI) return dot_block_any<V, MI - 1, NJ>(mi, nj, k, a, lda, b, ldb, out, ldo);
  if constexpr (NJ > 1)
    if (nj < NJ) return dot_block_any<V, MI, NJ - 1>(mi, nj, k, a, lda, b, ldb, out, ldo);
  dot_block<V, MI, NJ>(k, a, lda, b, ldb, out, ldo);
}

// Rows of x (x(i, p) = data[i * rs + p * cs]) with contiguous depth: in place (cs == 1), else
// copied into `buffer` (rows k apart). Returns the rows and sets ld to their stride.
template <class T>
const T* depth_rows(const MatrixView<T>& x, int64_t rows, int64_t k, T* buffer, int64_t& ld) {
  if (x.cs == 1) {
    ld = x.rs;
    return x.data;
  }
  // f32 rows lying down columns (op(A) = A): 8 x 8 blocks transposed in registers. Element by
  // element, GCC's -O3 made the loop below scatter stores with a stride of k: NN 8x8x20000 ran
  // at 6 GFLOPS, TN (no copy) at 84.
  int64_t whole_rows = 0, whole_k = 0;
  if constexpr (std::is_same_v<T, float>)
    if (x.rs == 1) {
      whole_rows = rows / 8 * 8, whole_k = k / 8 * 8;
      for (int64_t i0 = 0; i0 < whole_rows; i0 += 8)
        for (int64_t p = 0; p < whole_k; p += 8) transpose_8x8(x.data + i0 + p * x.cs, x.cs, buffer + i0 * k + p, k);
    }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = i < whole_rows ? whole_k : 0; p < k; ++p) buffer[i * k + p] = x.data[i * x.rs + p * x.cs];
  ld = k;
  return buffer;
}

// C = alpha * op(A) op(B) + beta * C (beta == 0 never reads C), then the epilogue on all of C.
// op(A)(i, p) = av(i, p), op(B)(p, j) = bv(p, j). Requires dot_gemm_serves.
template <class V, class Epilogue, class T>
void dot_gemm(int64_t m, int64_t n, int64_t k, T alpha, const MatrixView<T>& av, const MatrixView<T>& bv, T beta, T* c,
              int64_t ldc, const Epilogue& epi) {
  static_assert(dot_gemm_pays<V>(), "the dot path is for 32-register vector sets (dot_gemm_pays)");
  constexpr int MI = dot_block_rows, NJ = dot_block_cols;
  const bool copy_a = av.cs != 1, copy_b = bv.rs != 1;
  T* buffer = static_cast<T*>(
      thread_pack_buffer(0).get(sizeof(T) * std::size_t(((copy_a ? m : 0) + (copy_b ? n : 0)) * k + 1)));
  int64_t lda, ldb;
  const T* a = depth_rows(av, m, k, buffer, lda);
  const T* b = depth_rows(bv.transposed(), n, k, buffer + (copy_a ? m * k : 0), ldb);
  T out[MI * NJ];
  for (int64_t j0 = 0; j0 < n; j0 += NJ) {
    const int64_t nj = std::min<int64_t>(NJ, n - j0);
    for (int64_t i0 = 0; i0 < m; i0 += MI) {
      const int64_t mi = std::min<int64_t>(MI, m - i0);
      dot_block_any<V, MI, NJ>(mi, nj, k, a + i0 * lda, lda, b + j0 * ldb, ldb, out, MI);
      for (int64_t j = 0; j < nj; ++j)
        for (int64_t i = 0; i < mi; ++i) {
          T& cij = c[(i0 + i) + (j0 + j) * ldc];
          const T v = alpha * out[i + j * MI];
          cij = beta == T(0) ? v : v + beta * cij;
        }
    }
  }
  if constexpr (!Epilogue::is_identity) epi(c, ldc, 0, 0, m, n);
}

STRATA_TILE_NS_END
