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

// ---------------------------------------------------------------------------------------------
// The rest of Level 3, built on gemm: the bulk of the flops runs as gemm calls on off-diagonal
// blocks, small kernels handle the diagonal blocks. Same conventions as gemm: arguments are
// checked in the reference order (strata::Error names the reference's parameter: "side",
// "uplo", "trans"/"transa", "diag", "m", "n", "k", "lda", "ldb", "ldc"); beta == 0 means C is
// not read; alpha == 0 means no product is formed.
// ---------------------------------------------------------------------------------------------

namespace strata::blas {

// C := alpha*A*B + beta*C (side left) or alpha*B*A + beta*C (side right), A symmetric
// (symm) or Hermitian (hemm, complex T; the imaginary part of A's diagonal is not read),
// stored in its `uplo` triangle. C and B are m x n.
template <class T>
void symm(const Handle& h, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* A, index_t lda,
          const T* B, index_t ldb, T beta, T* C, index_t ldc);
template <class T>
void hemm(const Handle& h, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* A, index_t lda,
          const T* B, index_t ldb, T beta, T* C, index_t ldc);

// The `uplo` triangle of the n x n C := alpha*A*A^T + beta*C (trans N, A is n x k) or
// alpha*A^T*A + beta*C (trans T; real T also accepts C). herk: A^H with real alpha, beta
// (trans N or C), the diagonal of C stays real.
template <class T>
void syrk(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* A, index_t lda, T beta,
          T* C, index_t ldc);
template <class T>
void herk(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, real_t<T> alpha, const T* A, index_t lda,
          real_t<T> beta, T* C, index_t ldc);

// Rank-2k: alpha*A*B^T + alpha*B*A^T + beta*C (syr2k) and alpha*A*B^H + conj(alpha)*B*A^H +
// beta*C (her2k, real beta), on the `uplo` triangle of C.
template <class T>
void syr2k(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* A, index_t lda,
           const T* B, index_t ldb, T beta, T* C, index_t ldc);
template <class T>
void her2k(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* A, index_t lda,
           const T* B, index_t ldb, real_t<T> beta, T* C, index_t ldc);

// gemm that updates only the `uplo` triangle of the n x n C: C := alpha*op(A)*op(B) + beta*C.
template <class T>
void gemmt(const Handle& h, Uplo uplo, Op transa, Op transb, index_t n, index_t k, T alpha, const T* A,
           index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc);

// B := alpha*op(A)*B (side left) or alpha*B*op(A) (side right), A triangular; B is m x n.
template <class T>
void trmm(const Handle& h, Side side, Uplo uplo, Op transa, Diag diag, index_t m, index_t n, T alpha,
          const T* A, index_t lda, T* B, index_t ldb);
// Solves op(A)*X = alpha*B (left) or X*op(A) = alpha*B (right); X overwrites B.
template <class T>
void trsm(const Handle& h, Side side, Uplo uplo, Op transa, Diag diag, index_t m, index_t n, T alpha,
          const T* A, index_t lda, T* B, index_t ldb);

// ---- GEMM extensions ------------------------------------------------------------------------

// batch_count independent gemms with shared shapes, operands given as pointer arrays.
template <class T>
void gemm_batched(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                  const T* const A[], index_t lda, const T* const B[], index_t ldb, T beta, T* const C[],
                  index_t ldc, index_t batch_count);
template <class T>
void gemm_batched(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                  const T* const A[], index_t lda, const T* const B[], index_t ldb, T beta, T* const C[],
                  index_t ldc, index_t batch_count);

// Operand i of the batch starts at A + i*stride_a (B, C likewise).
template <class T>
void gemm_strided_batched(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                          const T* A, index_t lda, index_t stride_a, const T* B, index_t ldb, index_t stride_b,
                          T beta, T* C, index_t ldc, index_t stride_c, index_t batch_count);
template <class T>
void gemm_strided_batched(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k,
                          T alpha, const T* A, index_t lda, index_t stride_a, const T* B, index_t ldb,
                          index_t stride_b, T beta, T* C, index_t ldc, index_t stride_c, index_t batch_count);

// B := alpha*op(A), A is rows x cols (op = N) in `order`; B has op(A)'s shape.
template <class T>
void omatcopy(const Handle& h, Order order, Op trans, index_t rows, index_t cols, T alpha, const T* A,
              index_t lda, T* B, index_t ldb);
// In place: AB := alpha*op(AB); on entry AB is rows x cols with leading dimension lda, on exit
// op(AB) with leading dimension ldb.
template <class T>
void imatcopy(const Handle& h, Order order, Op trans, index_t rows, index_t cols, T alpha, T* AB, index_t lda,
              index_t ldb);

}  // namespace strata::blas
