// CBLAS Level 3 on the Fortran-semantics layer. Row-major is the column-major problem on the
// transposes: gemm swaps A and B (and m, n); symm/hemm and trmm/trsm swap side, uplo, m and n;
// the rank-k routines swap uplo and flip the operation (her2k also conjugates alpha, because a
// row-major Hermitian C is the conjugate of the column-major one).
#include "cblas_common.hpp"

namespace strata::capi::cblas {

namespace {

using I = int;
using blas::is_complex_v;
using blas::real_t;

template <class T>
void gemm(int layout, int ta, int tb, I m, I n, I k, T alpha, const T* a, I lda, const T* b, I ldb, T beta, T* c,
          I ldc) {
  CblasCall guard;
  if (layout != kColMajor && layout != kRowMajor) return bad_enum<T>(1, "gemm", "layout", layout);
  const bool row = layout == kRowMajor;
  RowMajorStrg = row;
  const char ca = trans_char(ta);
  if (!ca) return bad_enum<T>(2, "gemm", "TransA", ta);
  const char cb = trans_char(tb);
  // The reference reports a bad row-major TransB as parameter 2 (its row-major branch passes
  // 2 for both operations, and cblas_xerbla does not remap 2 for gemm).
  if (!cb) return bad_enum<T>(row ? 2 : 3, "gemm", "TransB", tb);
  if (row) f77::gemm<T>(cb, ca, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
  else f77::gemm<T>(ca, cb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T, bool Herm>
void symm(int layout, int side, int uplo, I m, I n, T alpha, const T* a, I lda, const T* b, I ldb, T beta, T* c,
          I ldc) {
  CblasCall guard;
  const char* routine = Herm ? "hemm" : "symm";
  if (layout != kColMajor && layout != kRowMajor) return bad_enum<T>(1, routine, "layout", layout);
  const bool row = layout == kRowMajor;
  RowMajorStrg = row;
  const char sd = side_char(side, row);
  if (!sd) return bad_enum<T>(2, routine, "Side", side);
  const char ul = uplo_char(uplo, row);
  if (!ul) return bad_enum<T>(3, routine, "Uplo", uplo);
  if (row) f77::symm<T, Herm>(sd, ul, n, m, alpha, a, lda, b, ldb, beta, c, ldc);
  else f77::symm<T, Herm>(sd, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The operation letter of a row-major rank-k call: N <-> T (N <-> C for the Hermitian ones).
template <class T, bool Herm>
char row_major_rank_k_trans(int trans) {
  if (Herm) return trans == kNoTrans ? 'C' : (trans == kTrans || trans == kConjTrans) ? 'N' : 0;
  if (trans == kNoTrans) return 'T';
  if (trans == kTrans) return 'N';
  if (trans == kConjTrans && !is_complex_v<T>) return 'N';
  return 0;
}

// syrk (B == nullptr), syr2k, herk (B == nullptr), her2k.
template <class T, bool Herm, class Scalar>
void rank_k(int layout, int uplo, int trans, I n, I k, T alpha, const T* a, I lda, const T* b, I ldb, Scalar beta,
            T* c, I ldc) {
  CblasCall guard;
  const bool rank2 = b != nullptr;
  const char* routine = Herm ? (rank2 ? "her2k" : "herk") : (rank2 ? "syr2k" : "syrk");
  if (layout != kColMajor && layout != kRowMajor) return bad_enum<T>(1, routine, "layout", layout);
  const bool row = layout == kRowMajor;
  RowMajorStrg = row;
  const char ul = uplo_char(uplo, row);
  // The reference's row-major branch of syrk, syr2k and herk (not her2k) reports a bad Uplo
  // as 3; capi.cblas_errors_match_reference pins this down.
  if (!ul) return bad_enum<T>(row && !(Herm && rank2) ? 3 : 2, routine, "Uplo", uplo);
  const char tr = row ? row_major_rank_k_trans<T, Herm>(trans) : trans_char(trans);
  if (!tr) return bad_enum<T>(3, routine, "Trans", trans);
  if constexpr (Herm) {
    if (rank2) f77::her2k<T>(ul, tr, n, k, row ? std::conj(alpha) : alpha, a, lda, b, ldb, beta, c, ldc);
    else f77::herk<T>(ul, tr, n, k, std::real(alpha), a, lda, beta, c, ldc);
  } else {
    if (rank2) f77::syr2k<T>(ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else f77::syrk<T>(ul, tr, n, k, alpha, a, lda, beta, c, ldc);
  }
}

template <class T, bool Solve>
void triangular_mm(int layout, int side, int uplo, int ta, int diag, I m, I n, T alpha, const T* a, I lda, T* b,
                   I ldb) {
  CblasCall guard;
  const char* routine = Solve ? "trsm" : "trmm";
  if (layout != kColMajor && layout != kRowMajor) return bad_enum<T>(1, routine, "layout", layout);
  const bool row = layout == kRowMajor;
  RowMajorStrg = row;
  const char sd = side_char(side, row);
  if (!sd) return bad_enum<T>(2, routine, "Side", side);
  const char ul = uplo_char(uplo, row);
  if (!ul) return bad_enum<T>(3, routine, "Uplo", uplo);
  const char tr = trans_char(ta);
  if (!tr) return bad_enum<T>(4, routine, "TransA", ta);
  const char di = diag_char(diag);
  if (!di) return bad_enum<T>(5, routine, "Diag", diag);
  if (row) f77::trxm<T, Solve>(sd, ul, tr, di, n, m, alpha, a, lda, b, ldb);
  else f77::trxm<T, Solve>(sd, ul, tr, di, m, n, alpha, a, lda, b, ldb);
}

}  // namespace

}  // namespace strata::capi::cblas

namespace {
using namespace strata::capi::cblas;
using strata::capi::c64;
using strata::capi::c128;
using I = int;
}  // namespace

extern "C" {

#define STRATA_CBLAS_L3_ALL(p, T, S, V, CV)                                                                            \
  void cblas_##p##gemm(int lo, int ta, int tb, const I m, const I n, const I k, S al, CV a, const I lda, CV b,         \
                       const I ldb, S be, V c, const I ldc) {                                                          \
    gemm<T>(lo, ta, tb, m, n, k, val<T>(al), cp<T>(a), lda, cp<T>(b), ldb, val<T>(be), mp<T>(c), ldc);                  \
  }                                                                                                                    \
  void cblas_##p##symm(int lo, int sd, int ul, const I m, const I n, S al, CV a, const I lda, CV b, const I ldb, S be, \
                       V c, const I ldc) {                                                                             \
    symm<T, false>(lo, sd, ul, m, n, val<T>(al), cp<T>(a), lda, cp<T>(b), ldb, val<T>(be), mp<T>(c), ldc);              \
  }                                                                                                                    \
  void cblas_##p##syrk(int lo, int ul, int tr, const I n, const I k, S al, CV a, const I lda, S be, V c,               \
                       const I ldc) {                                                                                  \
    rank_k<T, false>(lo, ul, tr, n, k, val<T>(al), cp<T>(a), lda, static_cast<const T*>(nullptr), 0, val<T>(be),        \
                     mp<T>(c), ldc);                                                                                   \
  }                                                                                                                    \
  void cblas_##p##syr2k(int lo, int ul, int tr, const I n, const I k, S al, CV a, const I lda, CV b, const I ldb,      \
                        S be, V c, const I ldc) {                                                                      \
    rank_k<T, false>(lo, ul, tr, n, k, val<T>(al), cp<T>(a), lda, cp<T>(b), ldb, val<T>(be), mp<T>(c), ldc);            \
  }                                                                                                                    \
  void cblas_##p##trmm(int lo, int sd, int ul, int ta, int di, const I m, const I n, S al, CV a, const I lda, V b,     \
                       const I ldb) {                                                                                  \
    triangular_mm<T, false>(lo, sd, ul, ta, di, m, n, val<T>(al), cp<T>(a), lda, mp<T>(b), ldb);                        \
  }                                                                                                                    \
  void cblas_##p##trsm(int lo, int sd, int ul, int ta, int di, const I m, const I n, S al, CV a, const I lda, V b,     \
                       const I ldb) {                                                                                  \
    triangular_mm<T, true>(lo, sd, ul, ta, di, m, n, val<T>(al), cp<T>(a), lda, mp<T>(b), ldb);                         \
  }

#define STRATA_CBLAS_L3_HERM(p, T, R)                                                                                  \
  void cblas_##p##hemm(int lo, int sd, int ul, const I m, const I n, const void* al, const void* a, const I lda,       \
                       const void* b, const I ldb, const void* be, void* c, const I ldc) {                             \
    symm<T, true>(lo, sd, ul, m, n, val<T>(al), cp<T>(a), lda, cp<T>(b), ldb, val<T>(be), mp<T>(c), ldc);               \
  }                                                                                                                    \
  void cblas_##p##herk(int lo, int ul, int tr, const I n, const I k, const R al, const void* a, const I lda,           \
                       const R be, void* c, const I ldc) {                                                             \
    rank_k<T, true>(lo, ul, tr, n, k, T(al), cp<T>(a), lda, static_cast<const T*>(nullptr), 0, be, mp<T>(c), ldc);      \
  }                                                                                                                    \
  void cblas_##p##her2k(int lo, int ul, int tr, const I n, const I k, const void* al, const void* a, const I lda,      \
                        const void* b, const I ldb, const R be, void* c, const I ldc) {                                \
    rank_k<T, true>(lo, ul, tr, n, k, val<T>(al), cp<T>(a), lda, cp<T>(b), ldb, be, mp<T>(c), ldc);                     \
  }

STRATA_CBLAS_L3_ALL(s, float, const float, float*, const float*)
STRATA_CBLAS_L3_ALL(d, double, const double, double*, const double*)
STRATA_CBLAS_L3_ALL(c, c64, const void*, void*, const void*)
STRATA_CBLAS_L3_ALL(z, c128, const void*, void*, const void*)
STRATA_CBLAS_L3_HERM(c, c64, float)
STRATA_CBLAS_L3_HERM(z, c128, double)

}  // extern "C"
