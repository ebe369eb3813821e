// CBLAS Level 2 on the Fortran-semantics layer. Row-major is the column-major problem on the
// transposed matrix: m/n, uplo and the operation swap; for complex types, A^H of a row-major
// matrix is conj() of the column-major one, handled by conjugating x (a copy) and y (in
// place, restored afterwards) as the reference CBLAS does. Invalid enums are reported at
// their CBLAS position through cblas_xerbla; everything else through xerbla_ (+1 position).
#include "cblas_common.hpp"

namespace strata::capi::cblas {

namespace {

using I = int;
using blas::is_complex_v;

template <class T>
T conj_s(T v) {
  if constexpr (is_complex_v<T>) return std::conj(v);
  else return v;
}

// The operation letter of a row-major call on the transposed matrix; `conj_path` is set when
// op is ConjTrans on complex data (A^H of a row-major matrix = conj(stored transpose)).
template <class T>
char row_major_trans(int trans, bool& conj_path) {
  conj_path = false;
  if (trans == kNoTrans) return 'T';
  if (trans == kTrans) return 'N';
  if (trans == kConjTrans) {
    conj_path = is_complex_v<T>;
    return 'N';
  }
  return 0;
}

// y := alpha*op(A)*x + beta*y where the routine runs `call(alpha, x, incx, beta)` with y in
// place; the conjugated variant conjugates x (copy), y (in place) and the scalars.
template <class T, class Call>
void with_conjugated_xy(I nx, const T* x, I incx, I ny, T* y, I incy, T alpha, T beta, Call&& call) {
  std::vector<T> xc;
  const T* xp = x;
  I ix = incx;
  if (nx > 0) {
    xc = conj_copy(x, nx, incx);
    xp = xc.data();
    ix = 1;
  }
  conj_in_place(y, ny, incy);
  call(conj_s(alpha), xp, ix, conj_s(beta));
  conj_in_place(y, ny, incy);
}

template <class T, bool Band>
void general_mv(int layout, int trans, I m, I n, I kl, I ku, T alpha, const T* a, I lda, const T* x, I incx, T beta,
                T* y, I incy) {
  CblasCall guard;
  const char* routine = Band ? "gbmv" : "gemv";
  auto run = [&](char t, I mm, I nn, I l, I u, T al, const T* xp, I ix, T be) {
    if constexpr (Band) f77::gbmv<T>(t, mm, nn, l, u, al, a, lda, xp, ix, be, y, incy);
    else f77::gemv<T>(t, mm, nn, al, a, lda, xp, ix, be, y, incy);
  };
  if (layout == kColMajor) {
    const char t = trans_char(trans);
    if (!t) return bad_enum<T>(2, routine, "TransA", trans);
    run(t, m, n, kl, ku, alpha, x, incx, beta);
  } else if (layout == kRowMajor) {
    RowMajorStrg = 1;
    bool conj_path;
    const char t = row_major_trans<T>(trans, conj_path);
    if (!t) return bad_enum<T>(2, routine, "TransA", trans);
    if (conj_path)
      with_conjugated_xy(m, x, incx, n, y, incy, alpha, beta,
                         [&](T al, const T* xp, I ix, T be) { run('N', n, m, ku, kl, al, xp, ix, be); });
    else run(t, n, m, ku, kl, alpha, x, incx, beta);
  } else {
    bad_enum<T>(1, routine, "layout", layout);
  }
}

// Storage of the symmetric/Hermitian matrix-vector routines.
enum class Sym { full, band, packed };

template <class T, bool Herm, Sym S>
void symmetric_mv(int layout, int uplo, I n, I k, T alpha, const T* a, I lda, const T* x, I incx, T beta, T* y,
                  I incy) {
  CblasCall guard;
  const char* routine = S == Sym::full ? (Herm ? "hemv" : "symv") : S == Sym::band ? (Herm ? "hbmv" : "sbmv")
                                                                                   : (Herm ? "hpmv" : "spmv");
  auto run = [&](char ul, T al, const T* xp, I ix, T be) {
    if constexpr (S == Sym::full) f77::symv<T, Herm>(ul, n, al, a, lda, xp, ix, be, y, incy);
    else if constexpr (S == Sym::band) f77::sbmv<T, Herm>(ul, n, k, al, a, lda, xp, ix, be, y, incy);
    else f77::spmv<T, Herm>(ul, n, al, a, xp, ix, be, y, incy);
  };
  if (layout != kColMajor && layout != kRowMajor) return bad_enum<T>(1, routine, "layout", layout);
  const bool row = layout == kRowMajor;
  RowMajorStrg = row;
  const char ul = uplo_char(uplo, row);
  if (!ul) return bad_enum<T>(2, routine, "Uplo", uplo);
  // A row-major Hermitian matrix is the conjugate of the column-major one with uplo swapped.
  if (row && Herm)
    with_conjugated_xy(n, x, incx, n, y, incy, alpha, beta, [&](T al, const T* xp, I ix, T be) { run(ul, al, xp, ix, be); });
  else run(ul, alpha, x, incx, beta);
}

enum class Tri { full, band, packed };

template <class T, bool Solve, Tri S>
void triangular_mv(int layout, int uplo, int trans, int diag, I n, I k, const T* a, I lda, T* x, I incx) {
  CblasCall guard;
  static const char* names[2][3] = {{"trmv", "tbmv", "tpmv"}, {"trsv", "tbsv", "tpsv"}};
  const char* routine = names[Solve][int(S)];
  if (layout != kColMajor && layout != kRowMajor) return bad_enum<T>(1, routine, "layout", layout);
  const bool row = layout == kRowMajor;
  RowMajorStrg = row;
  const char ul = uplo_char(uplo, row);
  if (!ul) return bad_enum<T>(2, routine, "Uplo", uplo);
  bool conj_path = false;
  const char t = row ? row_major_trans<T>(trans, conj_path) : trans_char(trans);
  if (!t) return bad_enum<T>(3, routine, "TransA", trans);
  const char di = diag_char(diag);
  if (!di) return bad_enum<T>(4, routine, "Diag", diag);
  if (conj_path) conj_in_place(x, n, incx);
  if constexpr (S == Tri::full) (Solve ? f77::trsv<T> : f77::trmv<T>)(ul, t, di, n, a, lda, x, incx);
  else if constexpr (S == Tri::band) (Solve ? f77::tbsv<T> : f77::tbmv<T>)(ul, t, di, n, k, a, lda, x, incx);
  else (Solve ? f77::tpsv<T> : f77::tpmv<T>)(ul, t, di, n, a, x, incx);
  if (conj_path) conj_in_place(x, n, incx);
}

// ger, geru (Conj false) and gerc (Conj true).
template <class T, bool Conj>
void general_rank1(int layout, I m, I n, T alpha, const T* x, I incx, const T* y, I incy, T* a, I lda) {
  CblasCall guard;
  const char* routine = !is_complex_v<T> ? "ger" : Conj ? "gerc" : "geru";
  if (layout == kColMajor) {
    f77::ger<T, Conj>(m, n, alpha, x, incx, y, incy, a, lda);
  } else if (layout == kRowMajor) {
    RowMajorStrg = 1;
    if (Conj && n > 0) {  // A^T += alpha*conj(y)*x^T
      const std::vector<T> yc = conj_copy(y, n, incy);
      f77::ger<T, false>(n, m, alpha, yc.data(), 1, x, incx, a, lda);
    } else {
      f77::ger<T, false>(n, m, alpha, y, incy, x, incx, a, lda);
    }
  } else {
    bad_enum<T>(1, routine, "layout", layout);
  }
}

// syr/spr/syr2/spr2 (symmetric) and her/hpr/her2/hpr2 (Hermitian); y == nullptr for rank 1.
template <class T, bool Herm, bool Packed, class Alpha>
void symmetric_update(int layout, int uplo, I n, Alpha alpha, const T* x, I incx, const T* y, I incy, T* a, I lda) {
  CblasCall guard;
  const bool rank2 = y != nullptr;
  const char* routine = Herm ? (Packed ? (rank2 ? "hpr2" : "hpr") : (rank2 ? "her2" : "her"))
                             : (Packed ? (rank2 ? "spr2" : "spr") : (rank2 ? "syr2" : "syr"));
  if (layout != kColMajor && layout != kRowMajor) return bad_enum<T>(1, routine, "layout", layout);
  const bool row = layout == kRowMajor;
  RowMajorStrg = row;
  const char ul = uplo_char(uplo, row);
  if (!ul) return bad_enum<T>(2, routine, "Uplo", uplo);
  // Row-major Hermitian: the stored matrix is conj() of the column-major one, so x and y are
  // conjugated (copies) and, for rank 2, swap roles.
  std::vector<T> xc, yc;
  const T* xp = x;
  const T* yp = y;
  I ix = incx, iy = incy;
  if (row && Herm && n > 0) {
    xc = conj_copy(x, n, incx);
    xp = xc.data();
    ix = 1;
    if (rank2) {
      yc = conj_copy(y, n, incy);
      yp = yc.data();
      iy = 1;
    }
  }
  if (row && Herm && rank2) {
    std::swap(xp, yp);
    std::swap(ix, iy);
  }
  if constexpr (Herm) {
    if constexpr (Packed) {
      if (rank2) f77::hpr2<T>(ul, n, T(alpha), xp, ix, yp, iy, a);
      else f77::hpr<T>(ul, n, blas::real_t<T>(std::real(alpha)), xp, ix, a);
    } else {
      if (rank2) f77::her2<T>(ul, n, T(alpha), xp, ix, yp, iy, a, lda);
      else f77::her<T>(ul, n, blas::real_t<T>(std::real(alpha)), xp, ix, a, lda);
    }
  } else {
    if constexpr (Packed) {
      if (rank2) f77::spr2<T>(ul, n, alpha, xp, ix, yp, iy, a);
      else f77::spr<T>(ul, n, alpha, xp, ix, a);
    } else {
      if (rank2) f77::syr2<T>(ul, n, alpha, xp, ix, yp, iy, a, lda);
      else f77::syr<T>(ul, n, alpha, xp, ix, a, lda);
    }
  }
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

// S: scalar parameter type (T for real, const void* for complex); V/CV: vector pointer types.
#define STRATA_CBLAS_L2_ALL(p, T, S, V, CV)                                                                          \
  void cblas_##p##gemv(int lo, int tr, const I m, const I n, S al, CV a, const I lda, CV x, const I incx, S be, V y, \
                       const I incy) {                                                                               \
    general_mv<T, false>(lo, tr, m, n, 0, 0, val<T>(al), cp<T>(a), lda, cp<T>(x), incx, val<T>(be), mp<T>(y), incy);  \
  }                                                                                                                  \
  void cblas_##p##gbmv(int lo, int tr, const I m, const I n, const I kl, const I ku, S al, CV a, const I lda, CV x,   \
                       const I incx, S be, V y, const I incy) {                                                      \
    general_mv<T, true>(lo, tr, m, n, kl, ku, val<T>(al), cp<T>(a), lda, cp<T>(x), incx, val<T>(be), mp<T>(y), incy); \
  }                                                                                                                  \
  void cblas_##p##trmv(int lo, int ul, int tr, int di, const I n, CV a, const I lda, V x, const I incx) {             \
    triangular_mv<T, false, Tri::full>(lo, ul, tr, di, n, 0, cp<T>(a), lda, mp<T>(x), incx);                          \
  }                                                                                                                  \
  void cblas_##p##tbmv(int lo, int ul, int tr, int di, const I n, const I k, CV a, const I lda, V x, const I incx) {  \
    triangular_mv<T, false, Tri::band>(lo, ul, tr, di, n, k, cp<T>(a), lda, mp<T>(x), incx);                          \
  }                                                                                                                  \
  void cblas_##p##tpmv(int lo, int ul, int tr, int di, const I n, CV ap, V x, const I incx) {                         \
    triangular_mv<T, false, Tri::packed>(lo, ul, tr, di, n, 0, cp<T>(ap), 1, mp<T>(x), incx);                         \
  }                                                                                                                  \
  void cblas_##p##trsv(int lo, int ul, int tr, int di, const I n, CV a, const I lda, V x, const I incx) {             \
    triangular_mv<T, true, Tri::full>(lo, ul, tr, di, n, 0, cp<T>(a), lda, mp<T>(x), incx);                           \
  }                                                                                                                  \
  void cblas_##p##tbsv(int lo, int ul, int tr, int di, const I n, const I k, CV a, const I lda, V x, const I incx) {  \
    triangular_mv<T, true, Tri::band>(lo, ul, tr, di, n, k, cp<T>(a), lda, mp<T>(x), incx);                           \
  }                                                                                                                  \
  void cblas_##p##tpsv(int lo, int ul, int tr, int di, const I n, CV ap, V x, const I incx) {                         \
    triangular_mv<T, true, Tri::packed>(lo, ul, tr, di, n, 0, cp<T>(ap), 1, mp<T>(x), incx);                          \
  }

#define STRATA_CBLAS_L2_SYM(p, sy, sb, sp, T, S, V, CV, Herm)                                                        \
  void cblas_##p##sy##mv(int lo, int ul, const I n, S al, CV a, const I lda, CV x, const I incx, S be, V y,           \
                         const I incy) {                                                                             \
    symmetric_mv<T, Herm, Sym::full>(lo, ul, n, 0, val<T>(al), cp<T>(a), lda, cp<T>(x), incx, val<T>(be), mp<T>(y), incy); \
  }                                                                                                                  \
  void cblas_##p##sb##mv(int lo, int ul, const I n, const I k, S al, CV a, const I lda, CV x, const I incx, S be,     \
                         V y, const I incy) {                                                                        \
    symmetric_mv<T, Herm, Sym::band>(lo, ul, n, k, val<T>(al), cp<T>(a), lda, cp<T>(x), incx, val<T>(be), mp<T>(y), incy); \
  }                                                                                                                  \
  void cblas_##p##sp##mv(int lo, int ul, const I n, S al, CV ap, CV x, const I incx, S be, V y, const I incy) {       \
    symmetric_mv<T, Herm, Sym::packed>(lo, ul, n, 0, val<T>(al), cp<T>(ap), 1, cp<T>(x), incx, val<T>(be), mp<T>(y), incy); \
  }

STRATA_CBLAS_L2_ALL(s, float, const float, float*, const float*)
STRATA_CBLAS_L2_ALL(d, double, const double, double*, const double*)
STRATA_CBLAS_L2_ALL(c, c64, const void*, void*, const void*)
STRATA_CBLAS_L2_ALL(z, c128, const void*, void*, const void*)
STRATA_CBLAS_L2_SYM(s, sy, sb, sp, float, const float, float*, const float*, false)
STRATA_CBLAS_L2_SYM(d, sy, sb, sp, double, const double, double*, const double*, false)
STRATA_CBLAS_L2_SYM(c, he, hb, hp, c64, const void*, void*, const void*, true)
STRATA_CBLAS_L2_SYM(z, he, hb, hp, c128, const void*, void*, const void*, true)

void cblas_sger(int lo, const I m, const I n, const float al, const float* x, const I incx, const float* y, const I incy,
                float* a, const I lda) {
  general_rank1<float, false>(lo, m, n, al, x, incx, y, incy, a, lda);
}
void cblas_dger(int lo, const I m, const I n, const double al, const double* x, const I incx, const double* y,
                const I incy, double* a, const I lda) {
  general_rank1<double, false>(lo, m, n, al, x, incx, y, incy, a, lda);
}
#define STRATA_CBLAS_GER(name, T, Conj)                                                                              \
  void name(int lo, const I m, const I n, const void* al, const void* x, const I incx, const void* y, const I incy,  \
            void* a, const I lda) {                                                                                  \
    general_rank1<T, Conj>(lo, m, n, val<T>(al), cp<T>(x), incx, cp<T>(y), incy, mp<T>(a), lda);                     \
  }
STRATA_CBLAS_GER(cblas_cgeru, c64, false)
STRATA_CBLAS_GER(cblas_zgeru, c128, false)
STRATA_CBLAS_GER(cblas_cgerc, c64, true)
STRATA_CBLAS_GER(cblas_zgerc, c128, true)

#define STRATA_CBLAS_SYR(p, T)                                                                                       \
  void cblas_##p##syr(int lo, int ul, const I n, const T al, const T* x, const I incx, T* a, const I lda) {           \
    symmetric_update<T, false, false>(lo, ul, n, al, x, incx, nullptr, 0, a, lda);                                   \
  }                                                                                                                  \
  void cblas_##p##spr(int lo, int ul, const I n, const T al, const T* x, const I incx, T* ap) {                       \
    symmetric_update<T, false, true>(lo, ul, n, al, x, incx, nullptr, 0, ap, 1);                                     \
  }                                                                                                                  \
  void cblas_##p##syr2(int lo, int ul, const I n, const T al, const T* x, const I incx, const T* y, const I incy,     \
                       T* a, const I lda) {                                                                          \
    symmetric_update<T, false, false>(lo, ul, n, al, x, incx, y, incy, a, lda);                                      \
  }                                                                                                                  \
  void cblas_##p##spr2(int lo, int ul, const I n, const T al, const T* x, const I incx, const T* y, const I incy,     \
                       T* ap) {                                                                                      \
    symmetric_update<T, false, true>(lo, ul, n, al, x, incx, y, incy, ap, 1);                                        \
  }
STRATA_CBLAS_SYR(s, float)
STRATA_CBLAS_SYR(d, double)

#define STRATA_CBLAS_HER(p, T, R)                                                                                    \
  void cblas_##p##her(int lo, int ul, const I n, const R al, const void* x, const I incx, void* a, const I lda) {     \
    symmetric_update<T, true, false>(lo, ul, n, T(al), cp<T>(x), incx, nullptr, 0, mp<T>(a), lda);                   \
  }                                                                                                                  \
  void cblas_##p##hpr(int lo, int ul, const I n, const R al, const void* x, const I incx, void* ap) {                 \
    symmetric_update<T, true, true>(lo, ul, n, T(al), cp<T>(x), incx, nullptr, 0, mp<T>(ap), 1);                     \
  }                                                                                                                  \
  void cblas_##p##her2(int lo, int ul, const I n, const void* al, const void* x, const I incx, const void* y,         \
                       const I incy, void* a, const I lda) {                                                         \
    symmetric_update<T, true, false>(lo, ul, n, val<T>(al), cp<T>(x), incx, cp<T>(y), incy, mp<T>(a), lda);          \
  }                                                                                                                  \
  void cblas_##p##hpr2(int lo, int ul, const I n, const void* al, const void* x, const I incx, const void* y,         \
                       const I incy, void* ap) {                                                                     \
    symmetric_update<T, true, true>(lo, ul, n, val<T>(al), cp<T>(x), incx, cp<T>(y), incy, mp<T>(ap), 1);            \
  }
STRATA_CBLAS_HER(c, c64, float)
STRATA_CBLAS_HER(z, c128, double)

}  // extern "C"
