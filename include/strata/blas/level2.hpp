// BLAS Level 2: matrix-vector operations, column-major, with the reference semantics:
//
// * Arguments are checked in the reference order before anything is written; a bad one
//   throws strata::Error(invalid_argument) whose argument() is the reference's parameter name
//   in lower case ("trans", "m", "lda", "incx", ...). incx/incy of 0 are errors here.
// * Quick returns as the reference (m == 0, n == 0, alpha == 0 with beta == 1).
// * beta == 0 means y is not read (a NaN there does not survive).
// * Hermitian routines use only the real part of the diagonal and set the imaginary part of
//   the updated diagonal to zero.
// * Storage: full (A, lda), band (A, lda with k or kl/ku diagonals in the BLAS band layout)
//   and packed (AP, columns of the triangle one after another).
//
// Instantiated for T = float, double, c64, c128, except: ger (real), geru/gerc and the
// Hermitian routines (complex). The symmetric routines also exist for complex T (cuBLAS's
// Csymv/Csyr style, no conjugation).
#pragma once
#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"

namespace strata::blas {

// y := alpha*op(A)*x + beta*y, A is m x n.
template <class T>
void gemv(const Handle& h, Op trans, index_t m, index_t n, T alpha, const T* A, index_t lda, const T* x,
          index_t incx, T beta, T* y, index_t incy);

// Band version of gemv: kl sub- and ku super-diagonals.
template <class T>
void gbmv(const Handle& h, Op trans, index_t m, index_t n, index_t kl, index_t ku, T alpha, const T* A,
          index_t lda, const T* x, index_t incx, T beta, T* y, index_t incy);

// y := alpha*A*x + beta*y with A symmetric (symv/sbmv/spmv) or Hermitian (hemv/hbmv/hpmv).
template <class T>
void symv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* A, index_t lda, const T* x, index_t incx,
          T beta, T* y, index_t incy);
template <class T>
void sbmv(const Handle& h, Uplo uplo, index_t n, index_t k, T alpha, const T* A, index_t lda, const T* x,
          index_t incx, T beta, T* y, index_t incy);
template <class T>
void spmv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* AP, const T* x, index_t incx, T beta, T* y,
          index_t incy);
template <class T>
void hemv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* A, index_t lda, const T* x, index_t incx,
          T beta, T* y, index_t incy);
template <class T>
void hbmv(const Handle& h, Uplo uplo, index_t n, index_t k, T alpha, const T* A, index_t lda, const T* x,
          index_t incx, T beta, T* y, index_t incy);
template <class T>
void hpmv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* AP, const T* x, index_t incx, T beta, T* y,
          index_t incy);

// x := op(A)*x with A triangular (full, band with k diagonals, packed).
template <class T>
void trmv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* A, index_t lda, T* x,
          index_t incx);
template <class T>
void tbmv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, index_t k, const T* A, index_t lda, T* x,
          index_t incx);
template <class T>
void tpmv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* AP, T* x, index_t incx);

// x := op(A)^-1 * x (no singularity test, as the reference).
template <class T>
void trsv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* A, index_t lda, T* x,
          index_t incx);
template <class T>
void tbsv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, index_t k, const T* A, index_t lda, T* x,
          index_t incx);
template <class T>
void tpsv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* AP, T* x, index_t incx);

// A := alpha*x*y^T + A (ger: real T; geru: complex T) and A := alpha*x*y^H + A (gerc: all T).
template <class T>
void ger(const Handle& h, index_t m, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
         T* A, index_t lda);
template <class T>
void geru(const Handle& h, index_t m, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* A, index_t lda);
template <class T>
void gerc(const Handle& h, index_t m, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* A, index_t lda);

// Symmetric rank-1 and rank-2 updates (syr/spr: A += alpha*x*x^T; syr2/spr2: += alpha*x*y^T + alpha*y*x^T).
template <class T>
void syr(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, T* A, index_t lda);
template <class T>
void spr(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, T* AP);
template <class T>
void syr2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* A, index_t lda);
template <class T>
void spr2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* AP);

// Hermitian rank-1 (real alpha) and rank-2 updates (complex T).
template <class T>
void her(const Handle& h, Uplo uplo, index_t n, real_t<T> alpha, const T* x, index_t incx, T* A, index_t lda);
template <class T>
void hpr(const Handle& h, Uplo uplo, index_t n, real_t<T> alpha, const T* x, index_t incx, T* AP);
template <class T>
void her2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* A, index_t lda);
template <class T>
void hpr2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* AP);

}  // namespace strata::blas
