// Fortran BLAS Level 1 symbols (gfortran conventions: every argument by reference, REAL and
// COMPLEX function results returned by value in registers), plus the *sub_ subroutine forms
// the reference library exports for its CBLAS layer.
#include "routines.hpp"

namespace {
using namespace strata;
using strata::capi::handle;
using I = int;
using c64 = blas::c64;
using c128 = blas::c128;
}  // namespace

extern "C" {

// ---- rotations ----
#define STRATA_F77_ROTG(p, T, R) \
  void p##rotg_(T* a, T* b, R* c, T* s) { blas::rotg<T>(handle(), a, b, c, s); }
STRATA_F77_ROTG(s, float, float)
STRATA_F77_ROTG(d, double, double)
STRATA_F77_ROTG(c, c64, float)
STRATA_F77_ROTG(z, c128, double)
#undef STRATA_F77_ROTG

void srotmg_(float* d1, float* d2, float* x1, const float* y1, float* param) {
  blas::rotmg<float>(handle(), d1, d2, x1, *y1, param);
}
void drotmg_(double* d1, double* d2, double* x1, const double* y1, double* param) {
  blas::rotmg<double>(handle(), d1, d2, x1, *y1, param);
}

#define STRATA_F77_ROT(name, T, R)                                                                     \
  void name(const I* n, T* x, const I* incx, T* y, const I* incy, const R* c, const R* s) { \
    blas::rot<T>(handle(), *n, x, *incx, y, *incy, *c, *s);                                            \
  }
STRATA_F77_ROT(srot_, float, float)
STRATA_F77_ROT(drot_, double, double)
STRATA_F77_ROT(csrot_, c64, float)
STRATA_F77_ROT(zdrot_, c128, double)
#undef STRATA_F77_ROT

void srotm_(const I* n, float* x, const I* incx, float* y, const I* incy, const float* param) {
  blas::rotm<float>(handle(), *n, x, *incx, y, *incy, param);
}
void drotm_(const I* n, double* x, const I* incx, double* y, const I* incy, const double* param) {
  blas::rotm<double>(handle(), *n, x, *incx, y, *incy, param);
}

// ---- vector updates ----
#define STRATA_F77_UPDATES(p, T)                                                                     \
  void p##swap_(const I* n, T* x, const I* incx, T* y, const I* incy) {                              \
    blas::swap<T>(handle(), *n, x, *incx, y, *incy);                                                 \
  }                                                                                                  \
  void p##scal_(const I* n, const T* alpha, T* x, const I* incx) {                                   \
    blas::scal<T>(handle(), *n, *alpha, x, *incx);                                                   \
  }                                                                                                  \
  void p##copy_(const I* n, const T* x, const I* incx, T* y, const I* incy) {                        \
    blas::copy<T>(handle(), *n, x, *incx, y, *incy);                                                 \
  }                                                                                                  \
  void p##axpy_(const I* n, const T* alpha, const T* x, const I* incx, T* y, const I* incy) {        \
    blas::axpy<T>(handle(), *n, *alpha, x, *incx, y, *incy);                                         \
  }
STRATA_F77_UPDATES(s, float)
STRATA_F77_UPDATES(d, double)
STRATA_F77_UPDATES(c, c64)
STRATA_F77_UPDATES(z, c128)
#undef STRATA_F77_UPDATES

void csscal_(const I* n, const float* alpha, c64* x, const I* incx) { blas::scal<c64>(handle(), *n, *alpha, x, *incx); }
void zdscal_(const I* n, const double* alpha, c128* x, const I* incx) {
  blas::scal<c128>(handle(), *n, *alpha, x, *incx);
}

// ---- reductions: the function and its *sub_ subroutine twin ----
#define STRATA_F77_DOT(name, fn, T)                                                                  \
  T name##_(const I* n, const T* x, const I* incx, const T* y, const I* incy) {                      \
    return blas::fn<T>(handle(), *n, x, *incx, y, *incy);                                            \
  }                                                                                                  \
  void name##sub_(const I* n, const T* x, const I* incx, const T* y, const I* incy, T* result) {     \
    *result = blas::fn<T>(handle(), *n, x, *incx, y, *incy);                                         \
  }
STRATA_F77_DOT(sdot, dot, float)
STRATA_F77_DOT(ddot, dot, double)
STRATA_F77_DOT(cdotu, dotu, c64)
STRATA_F77_DOT(zdotu, dotu, c128)
STRATA_F77_DOT(cdotc, dotc, c64)
STRATA_F77_DOT(zdotc, dotc, c128)
#undef STRATA_F77_DOT

float sdsdot_(const I* n, const float* sb, const float* x, const I* incx, const float* y, const I* incy) {
  return blas::sdsdot(handle(), *n, *sb, x, *incx, y, *incy);
}
void sdsdotsub_(const I* n, const float* sb, const float* x, const I* incx, const float* y, const I* incy, float* r) {
  *r = blas::sdsdot(handle(), *n, *sb, x, *incx, y, *incy);
}
double dsdot_(const I* n, const float* x, const I* incx, const float* y, const I* incy) {
  return blas::dsdot(handle(), *n, x, *incx, y, *incy);
}
void dsdotsub_(const I* n, const float* x, const I* incx, const float* y, const I* incy, double* r) {
  *r = blas::dsdot(handle(), *n, x, *incx, y, *incy);
}

#define STRATA_F77_NORM(name, fn, T, R)                                                              \
  R name##_(const I* n, const T* x, const I* incx) { return blas::fn<T>(handle(), *n, x, *incx); }   \
  void name##sub_(const I* n, const T* x, const I* incx, R* r) { *r = blas::fn<T>(handle(), *n, x, *incx); }
STRATA_F77_NORM(snrm2, nrm2, float, float)
STRATA_F77_NORM(dnrm2, nrm2, double, double)
STRATA_F77_NORM(scnrm2, nrm2, c64, float)
STRATA_F77_NORM(dznrm2, nrm2, c128, double)
STRATA_F77_NORM(sasum, asum, float, float)
STRATA_F77_NORM(dasum, asum, double, double)
STRATA_F77_NORM(scasum, asum, c64, float)
STRATA_F77_NORM(dzasum, asum, c128, double)
#undef STRATA_F77_NORM

#define STRATA_F77_IAMAX(p, T)                                                                        \
  I i##p##amax_(const I* n, const T* x, const I* incx) { return I(blas::iamax<T>(handle(), *n, x, *incx)); } \
  void i##p##amaxsub_(const I* n, const T* x, const I* incx, I* r) {                                  \
    *r = I(blas::iamax<T>(handle(), *n, x, *incx));                                                   \
  }
STRATA_F77_IAMAX(s, float)
STRATA_F77_IAMAX(d, double)
STRATA_F77_IAMAX(c, c64)
STRATA_F77_IAMAX(z, c128)
#undef STRATA_F77_IAMAX

float scabs1_(const c64* z) { return blas::cabs1(*z); }
void scabs1sub_(const c64* z, float* r) { *r = blas::cabs1(*z); }
double dcabs1_(const c128* z) { return blas::cabs1(*z); }
void dcabs1sub_(const c128* z, double* r) { *r = blas::cabs1(*z); }

}  // extern "C"
