// Triangular-output products on top of gemm: gemmt, syrk, herk, syr2k, her2k.
//
// All are C_tri := alpha*op(A)*op(B) + beta*C_tri (syr2k/her2k as two such passes), one call of
// the GEMM engine with triangular output each (tile::Triangle).

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "../gemm/gemm_dispatch.hpp"
#include "strata/blas/level3.hpp"

namespace strata::blas {

namespace {

using namespace detail;

struct TriProduct {
  bool upper;
  Op transa, transb;
  bool herm;  // Hermitian result: the diagonal of C is kept real
};

template <class T>
void triangle_product(const Handle& h, const TriProduct& p, index_t n, index_t k, T alpha, const T* A,
                      index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  if (alpha == T(0) || k == 0) {
    scale_triangle(p.upper, n, beta, C, ldc, p.herm);
    return;
  }
  // Hermitian results use beta*Re(C_jj) on the diagonal (the reference's rule): the imaginary
  // parts there are cleared before (an Inf or NaN in them must not reach the real part through
  // the complex beta*C) and after (the product's rounding leaves a trace there).
  auto clear_diagonal_imaginary = [&] {
    if constexpr (is_complex_v<T>)
      for (index_t j = 0; j < n; ++j) C[j + j * ldc] = T(real_part(C[j + j * ldc]));
  };
  if (p.herm && beta != T(0)) clear_diagonal_imaginary();
  // One call of the GEMM engine with triangular output: it skips the micro-tiles outside the
  // triangle and merges those the diagonal crosses, each operand packed once (complex types
  // as two triangular real GEMMs on split planes).
  gemm_triangle_dispatch<T>(h, p.upper, p.transa, p.transb, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  if (p.herm) clear_diagonal_imaginary();
}

// Reference argument checks of the rank-k family; `nrowa` is n for trans N, else k.
void check_rank_k(Uplo uplo, Op trans, bool trans_ok, index_t n, index_t k) {
  check_uplo(uplo);
  check_arg(trans_ok, "trans", "is not a valid operation for this routine");
  check_dim(n, "n");
  check_dim(k, "k");
  (void)trans;
}

template <class T>
bool quick_return(index_t n, index_t k, T alpha, T beta) {
  return n == 0 || ((alpha == T(0) || k == 0) && beta == T(1));
}

}  // namespace

template <class T>
void gemmt(const Handle& h, Uplo uplo, Op transa, Op transb, index_t n, index_t k, T alpha, const T* A, index_t lda,
           const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  check_uplo(uplo);
  check_op(transa, "transa");
  check_op(transb, "transb");
  check_dim(n, "n");
  check_dim(k, "k");
  check_ld(lda, transa == Op::N ? n : k, "lda");
  check_ld(ldb, transb == Op::N ? k : n, "ldb");
  check_ld(ldc, n, "ldc");
  if (quick_return(n, k, alpha, beta)) return;
  triangle_product(h, {uplo == Uplo::upper, transa, transb, false}, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void syrk(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* A, index_t lda, T beta, T* C,
          index_t ldc) {
  // Complex symmetric products have no conjugated form: trans C is an error for them.
  const bool ok = trans == Op::N || trans == Op::T || (trans == Op::C && !is_complex_v<T>);
  check_rank_k(uplo, trans, ok, n, k);
  check_ld(lda, trans == Op::N ? n : k, "lda");
  check_ld(ldc, n, "ldc");
  if (quick_return(n, k, alpha, beta)) return;
  const bool notrans = trans == Op::N;
  triangle_product(h, {uplo == Uplo::upper, notrans ? Op::N : Op::T, notrans ? Op::T : Op::N, false}, n, k, alpha, A,
                   lda, A, lda, beta, C, ldc);
}

template <class T>
void herk(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, real_t<T> alpha, const T* A, index_t lda,
          real_t<T> beta, T* C, index_t ldc) {
  check_rank_k(uplo, trans, trans == Op::N || trans == Op::C, n, k);
  check_ld(lda, trans == Op::N ? n : k, "lda");
  check_ld(ldc, n, "ldc");
  if (quick_return(n, k, alpha, beta)) return;
  const bool notrans = trans == Op::N;
  triangle_product(h, {uplo == Uplo::upper, notrans ? Op::N : Op::C, notrans ? Op::C : Op::N, true}, n, k, T(alpha),
                   A, lda, A, lda, T(beta), C, ldc);
}

namespace {

template <class T, bool Herm>
void rank_2k(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* A, index_t lda,
             const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  const bool ok = trans == Op::N ||
                  (Herm ? trans == Op::C : (trans == Op::T || (trans == Op::C && !is_complex_v<T>)));
  check_rank_k(uplo, trans, ok, n, k);
  check_ld(lda, trans == Op::N ? n : k, "lda");
  check_ld(ldb, trans == Op::N ? n : k, "ldb");
  check_ld(ldc, n, "ldc");
  if (quick_return(n, k, alpha, beta)) return;
  const bool notrans = trans == Op::N;
  const Op t = Herm ? Op::C : Op::T;
  const TriProduct p{uplo == Uplo::upper, notrans ? Op::N : t, notrans ? t : Op::N, Herm};
  // alpha*op(A)*op(B)' + beta*C, then + conj?(alpha)*op(B)*op(A)'.
  triangle_product(h, p, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  if (alpha != T(0) && k != 0) triangle_product(h, p, n, k, conj_if(Herm, alpha), B, ldb, A, lda, T(1), C, ldc);
}

}  // namespace

template <class T>
void syr2k(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* A, index_t lda, const T* B,
           index_t ldb, T beta, T* C, index_t ldc) {
  rank_2k<T, false>(h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void her2k(const Handle& h, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* A, index_t lda, const T* B,
           index_t ldb, real_t<T> beta, T* C, index_t ldc) {
  rank_2k<T, true>(h, uplo, trans, n, k, alpha, A, lda, B, ldb, T(beta), C, ldc);
}

#define STRATA_ALL(T)                                                                                             \
  template void gemmt<T>(const Handle&, Uplo, Op, Op, index_t, index_t, T, const T*, index_t, const T*, index_t, T, \
                         T*, index_t);                                                                            \
  template void syrk<T>(const Handle&, Uplo, Op, index_t, index_t, T, const T*, index_t, T, T*, index_t);          \
  template void syr2k<T>(const Handle&, Uplo, Op, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*, \
                         index_t);
#define STRATA_HERM(T)                                                                                            \
  template void herk<T>(const Handle&, Uplo, Op, index_t, index_t, real_t<T>, const T*, index_t, real_t<T>, T*,    \
                        index_t);                                                                                 \
  template void her2k<T>(const Handle&, Uplo, Op, index_t, index_t, T, const T*, index_t, const T*, index_t,       \
                         real_t<T>, T*, index_t);
STRATA_ALL(float)
STRATA_ALL(double)
STRATA_ALL(c64)
STRATA_ALL(c128)
STRATA_HERM(c64)
STRATA_HERM(c128)
#undef STRATA_ALL
#undef STRATA_HERM

}  // namespace strata::blas
