// Triangular-output products on top of gemm: gemmt, syrk, herk, syr2k, her2k.
//
// All are C_tri := alpha*op(A)*op(B) + beta*C_tri (syr2k/her2k as two such passes). The
// triangle is halved recursively (split_point): the rectangle off the diagonal is one gemm,
// the two half triangles recurse; an nb x nb diagonal leaf is computed in full into a scratch
// matrix and only its triangle is merged into C.
#include <vector>

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

// The order-nb diagonal block at d0: computed in full into `diag`, its triangle merged into C.
template <class T, class RowsOfA, class ColsOfB>
void diagonal_block(const Handle& h, const TriProduct& p, index_t d0, index_t nb, index_t k, T alpha, RowsOfA rows_of_a,
                    index_t lda, ColsOfB cols_of_b, index_t ldb, T beta, T* C, index_t ldc, std::vector<T>& diag) {
  diag.resize(size_t(nb * nb));
  gemm<T>(h, p.transa, p.transb, nb, nb, k, alpha, rows_of_a(d0), lda, cols_of_b(d0), ldb, T(0), diag.data(), nb);
  for (index_t j = 0; j < nb; ++j) {
    const index_t lo = p.upper ? 0 : j, hi = p.upper ? j : nb - 1;
    for (index_t i = lo; i <= hi; ++i) {
      T& c = C[(d0 + i) + (d0 + j) * ldc];
      const T t = diag[size_t(i + j * nb)];
      const T old = beta == T(0) ? T(0) : beta * (p.herm && i == j ? T(real_part(c)) : c);
      c = p.herm && i == j ? T(real_part(old) + real_part(t)) : old + t;
    }
  }
}

template <class T>
void triangle_product(const Handle& h, const TriProduct& p, index_t n, index_t k, T alpha, const T* A,
                      index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  if (alpha == T(0) || k == 0) {
    scale_triangle(p.upper, n, beta, C, ldc, p.herm);
    return;
  }
  // Real types: one call of the tile engine with triangular output (it skips the micro-tiles
  // outside the triangle and merges those the diagonal crosses: each operand packed once).
  if constexpr (!is_complex_v<T>) {
    gemm_triangle_dispatch<T>(h, p.upper, p.transa, p.transb, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  // Complex types (whose gemm runs on split real planes) halve the triangle instead.
  // Row r of op(A) and column c of op(B) as gemm operand pointers.
  auto rows_of_a = [&](index_t r) { return p.transa == Op::N ? A + r : A + r * lda; };
  auto cols_of_b = [&](index_t c) { return p.transb == Op::N ? B + c * ldb : B + c; };
  std::vector<T> diag;
  // The triangle on [d0, d0+len): halved, its off-diagonal rectangle is one gemm.
  auto leaf = [&](index_t d0, index_t nb) {
    diagonal_block(h, p, d0, nb, k, alpha, rows_of_a, lda, cols_of_b, ldb, beta, C, ldc, diag);
  };
  auto triangle = [&](auto&& self, index_t d0, index_t len) -> void {
    halve_triangle(d0, len, leaf, [&](index_t lo0, index_t lo_len, index_t hi0, index_t hi_len) {
      if (p.upper)
        gemm<T>(h, p.transa, p.transb, lo_len, hi_len, k, alpha, rows_of_a(lo0), lda, cols_of_b(hi0), ldb, beta,
                C + lo0 + hi0 * ldc, ldc);
      else
        gemm<T>(h, p.transa, p.transb, hi_len, lo_len, k, alpha, rows_of_a(hi0), lda, cols_of_b(lo0), ldb, beta,
                C + hi0 + lo0 * ldc, ldc);
      self(self, lo0, lo_len);
      self(self, hi0, hi_len);
    });
  };
  triangle(triangle, index_t(0), n);
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
