// BLAS Level 3 and the GEMM family, column-major by default (BLAS semantics to the letter:
// beta == 0 means C is not read; alpha == 0 means op(A)op(B) is not computed; quick returns
// as the reference). Invalid arguments throw strata::Error naming the argument, before any
// output is written.
//
// Instantiated for T = float, double, c64, c128.
#pragma once
#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"

namespace strata::blas {

// C := alpha*op(A)*op(B) + beta*C, C is m x n, op(A) m x k, op(B) k x n.
template <class T>
void gemm(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
          const T* A, index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc);

// Same with an explicit storage order for all three matrices (row_major: leading dimensions
// are row strides, as in CBLAS's CblasRowMajor).
template <class T>
void gemm(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
          const T* A, index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc);

}  // namespace strata::blas
