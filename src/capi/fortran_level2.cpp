// Fortran BLAS Level 2 symbols: each forwards to the Fortran-semantics layer (routines.hpp),
// which checks in the reference order and reports through xerbla_. Character arguments are
// read from their first byte only; gfortran's hidden length arguments are never read.
#include "routines.hpp"

namespace {
using namespace strata::capi;
using I = int;
using R_c64 = float;
using R_c128 = double;
}  // namespace

extern "C" {

#define STRATA_F77_LEVEL2_ALL(p, T)                                                                              \
  void p##gemv_(const char* tr, const I* m, const I* n, const T* al, const T* a, const I* lda, const T* x,       \
                const I* incx, const T* be, T* y, const I* incy) {                                               \
    f77::gemv<T>(*tr, *m, *n, *al, a, *lda, x, *incx, *be, y, *incy);                                            \
  }                                                                                                              \
  void p##gbmv_(const char* tr, const I* m, const I* n, const I* kl, const I* ku, const T* al, const T* a,       \
                const I* lda, const T* x, const I* incx, const T* be, T* y, const I* incy) {                     \
    f77::gbmv<T>(*tr, *m, *n, *kl, *ku, *al, a, *lda, x, *incx, *be, y, *incy);                                  \
  }                                                                                                              \
  void p##trmv_(const char* ul, const char* tr, const char* di, const I* n, const T* a, const I* lda, T* x,       \
                const I* incx) {                                                                                 \
    f77::trmv<T>(*ul, *tr, *di, *n, a, *lda, x, *incx);                                                          \
  }                                                                                                              \
  void p##tbmv_(const char* ul, const char* tr, const char* di, const I* n, const I* k, const T* a, const I* lda, \
                T* x, const I* incx) {                                                                           \
    f77::tbmv<T>(*ul, *tr, *di, *n, *k, a, *lda, x, *incx);                                                      \
  }                                                                                                              \
  void p##tpmv_(const char* ul, const char* tr, const char* di, const I* n, const T* ap, T* x, const I* incx) {  \
    f77::tpmv<T>(*ul, *tr, *di, *n, ap, x, *incx);                                                               \
  }                                                                                                              \
  void p##trsv_(const char* ul, const char* tr, const char* di, const I* n, const T* a, const I* lda, T* x,       \
                const I* incx) {                                                                                 \
    f77::trsv<T>(*ul, *tr, *di, *n, a, *lda, x, *incx);                                                          \
  }                                                                                                              \
  void p##tbsv_(const char* ul, const char* tr, const char* di, const I* n, const I* k, const T* a, const I* lda, \
                T* x, const I* incx) {                                                                           \
    f77::tbsv<T>(*ul, *tr, *di, *n, *k, a, *lda, x, *incx);                                                      \
  }                                                                                                              \
  void p##tpsv_(const char* ul, const char* tr, const char* di, const I* n, const T* ap, T* x, const I* incx) {  \
    f77::tpsv<T>(*ul, *tr, *di, *n, ap, x, *incx);                                                               \
  }

// symv-style routines: the symmetric ones for real types, the Hermitian ones for complex.
#define STRATA_F77_LEVEL2_SYM(p, sy, sb, sp, T, Herm)                                                            \
  void p##sy##mv_(const char* ul, const I* n, const T* al, const T* a, const I* lda, const T* x, const I* incx,  \
                  const T* be, T* y, const I* incy) {                                                            \
    f77::symv<T, Herm>(*ul, *n, *al, a, *lda, x, *incx, *be, y, *incy);                                          \
  }                                                                                                              \
  void p##sb##mv_(const char* ul, const I* n, const I* k, const T* al, const T* a, const I* lda, const T* x,     \
                  const I* incx, const T* be, T* y, const I* incy) {                                             \
    f77::sbmv<T, Herm>(*ul, *n, *k, *al, a, *lda, x, *incx, *be, y, *incy);                                      \
  }                                                                                                              \
  void p##sp##mv_(const char* ul, const I* n, const T* al, const T* ap, const T* x, const I* incx, const T* be,  \
                  T* y, const I* incy) {                                                                         \
    f77::spmv<T, Herm>(*ul, *n, *al, ap, x, *incx, *be, y, *incy);                                               \
  }

#define STRATA_F77_GER(name, T, Conj)                                                                           \
  void name(const I* m, const I* n, const T* al, const T* x, const I* incx, const T* y, const I* incy, T* a,     \
            const I* lda) {                                                                                     \
    f77::ger<T, Conj>(*m, *n, *al, x, *incx, y, *incy, a, *lda);                                                \
  }

#define STRATA_F77_SYR(p, T)                                                                                     \
  void p##syr_(const char* ul, const I* n, const T* al, const T* x, const I* incx, T* a, const I* lda) {          \
    f77::syr<T>(*ul, *n, *al, x, *incx, a, *lda);                                                                \
  }                                                                                                              \
  void p##spr_(const char* ul, const I* n, const T* al, const T* x, const I* incx, T* ap) {                      \
    f77::spr<T>(*ul, *n, *al, x, *incx, ap);                                                                     \
  }                                                                                                              \
  void p##syr2_(const char* ul, const I* n, const T* al, const T* x, const I* incx, const T* y, const I* incy,    \
                T* a, const I* lda) {                                                                            \
    f77::syr2<T>(*ul, *n, *al, x, *incx, y, *incy, a, *lda);                                                     \
  }                                                                                                              \
  void p##spr2_(const char* ul, const I* n, const T* al, const T* x, const I* incx, const T* y, const I* incy,    \
                T* ap) {                                                                                         \
    f77::spr2<T>(*ul, *n, *al, x, *incx, y, *incy, ap);                                                          \
  }

#define STRATA_F77_HER(p, T, R)                                                                                  \
  void p##her_(const char* ul, const I* n, const R* al, const T* x, const I* incx, T* a, const I* lda) {          \
    f77::her<T>(*ul, *n, *al, x, *incx, a, *lda);                                                                \
  }                                                                                                              \
  void p##hpr_(const char* ul, const I* n, const R* al, const T* x, const I* incx, T* ap) {                      \
    f77::hpr<T>(*ul, *n, *al, x, *incx, ap);                                                                     \
  }                                                                                                              \
  void p##her2_(const char* ul, const I* n, const T* al, const T* x, const I* incx, const T* y, const I* incy,    \
                T* a, const I* lda) {                                                                            \
    f77::her2<T>(*ul, *n, *al, x, *incx, y, *incy, a, *lda);                                                     \
  }                                                                                                              \
  void p##hpr2_(const char* ul, const I* n, const T* al, const T* x, const I* incx, const T* y, const I* incy,    \
                T* ap) {                                                                                         \
    f77::hpr2<T>(*ul, *n, *al, x, *incx, y, *incy, ap);                                                          \
  }

STRATA_F77_LEVEL2_ALL(s, float)
STRATA_F77_LEVEL2_ALL(d, double)
STRATA_F77_LEVEL2_ALL(c, c64)
STRATA_F77_LEVEL2_ALL(z, c128)
STRATA_F77_LEVEL2_SYM(s, sy, sb, sp, float, false)
STRATA_F77_LEVEL2_SYM(d, sy, sb, sp, double, false)
STRATA_F77_LEVEL2_SYM(c, he, hb, hp, c64, true)
STRATA_F77_LEVEL2_SYM(z, he, hb, hp, c128, true)
STRATA_F77_GER(sger_, float, false)
STRATA_F77_GER(dger_, double, false)
STRATA_F77_GER(cgeru_, c64, false)
STRATA_F77_GER(zgeru_, c128, false)
STRATA_F77_GER(cgerc_, c64, true)
STRATA_F77_GER(zgerc_, c128, true)
STRATA_F77_SYR(s, float)
STRATA_F77_SYR(d, double)
STRATA_F77_HER(c, c64, float)
STRATA_F77_HER(z, c128, double)

}  // extern "C"
