// Shared pieces of the gemm-based Level 3 routines: the diagonal block size, column-major
// addressing, and C := beta*C on a rectangle or a triangle with BLAS's beta == 0 rule.
#pragma once
#include <algorithm>
#include <cstring>

#include "scalar.hpp"
#include "strata/blas/types.hpp"

namespace strata::blas::detail {

// Below this many multiply-adds a gemm is too small to be worth splitting across threads.
inline constexpr index_t level3_small_problem = index_t(64) * 64 * 64;

// Diagonal blocks are nb x nb; everything off the diagonal blocks goes through gemm.
// Large enough for gemm to be efficient on the off-diagonal panels, small enough that the
// O(nb) share of the flops done by the simple diagonal kernels stays small.
inline constexpr index_t level3_block = 64;

template <class T>
inline T* at(T* a, index_t lda, index_t i, index_t j) {
  return a + i + j * lda;
}

// dst := src on an m x n rectangle, column by column (whole-column copies: element by element,
// with the two possibly aliased for all the compiler knew, such copies were a fifth of a
// 256 x 256 strsm).
template <class T>
void copy_matrix(index_t m, index_t n, const T* src, index_t lds, T* dst, index_t ldd) {
  for (index_t j = 0; j < n; ++j) std::memcpy(dst + j * ldd, src + j * lds, sizeof(T) * size_t(m));
}

// C := beta*C on an m x n rectangle (beta == 0: C is not read).
template <class T>
void scale_matrix(index_t m, index_t n, T beta, T* C, index_t ldc) {
  if (beta == T(1)) return;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      T& c = C[i + j * ldc];
      c = beta == T(0) ? T(0) : beta * c;
    }
}

// C := beta*C on the `upper`/lower triangle of an n x n matrix. herm: the diagonal becomes
// beta*Re(C_jj) (the reference's rule for herk/her2k).
template <class T>
void scale_triangle(bool upper, index_t n, T beta, T* C, index_t ldc, bool herm) {
  for (index_t j = 0; j < n; ++j) {
    const index_t lo = upper ? 0 : j, hi = upper ? j : n - 1;
    for (index_t i = lo; i <= hi; ++i) {
      T& c = C[i + j * ldc];
      if (beta == T(0)) c = T(0);
      else if (herm && i == j) c = beta * T(real_part(c));
      else c = beta * c;
    }
  }
}

}  // namespace strata::blas::detail
