// CBLAS Level 1. No argument of Level 1 is ever rejected, so these call the C++ routines
// directly; iamax returns a 0-based index as CBLAS specifies.
#include "cblas_common.hpp"

namespace {
using namespace strata;
using strata::capi::handle;
using I = int;
using c64 = blas::c64;
using c128 = blas::c128;
using strata::capi::cblas::cp;
using strata::capi::cblas::mp;
}  // namespace

extern "C" {

void cblas_srotg(float* a, float* b, float* c, float* s) { blas::rotg<float>(handle(), a, b, c, s); }
void cblas_drotg(double* a, double* b, double* c, double* s) { blas::rotg<double>(handle(), a, b, c, s); }
void cblas_crotg(void* a, void* b, float* c, void* s) { blas::rotg<c64>(handle(), mp<c64>(a), mp<c64>(b), c, mp<c64>(s)); }
void cblas_zrotg(void* a, void* b, double* c, void* s) {
  blas::rotg<c128>(handle(), mp<c128>(a), mp<c128>(b), c, mp<c128>(s));
}
void cblas_srotmg(float* d1, float* d2, float* b1, const float b2, float* p) { blas::rotmg<float>(handle(), d1, d2, b1, b2, p); }
void cblas_drotmg(double* d1, double* d2, double* b1, const double b2, double* p) {
  blas::rotmg<double>(handle(), d1, d2, b1, b2, p);
}
void cblas_srot(const I n, float* x, const I incx, float* y, const I incy, const float c, const float s) {
  blas::rot<float>(handle(), n, x, incx, y, incy, c, s);
}
void cblas_drot(const I n, double* x, const I incx, double* y, const I incy, const double c, const double s) {
  blas::rot<double>(handle(), n, x, incx, y, incy, c, s);
}
void cblas_csrot(const I n, void* x, const I incx, void* y, const I incy, const float c, const float s) {
  blas::rot<c64>(handle(), n, mp<c64>(x), incx, mp<c64>(y), incy, c, s);
}
void cblas_zdrot(const I n, void* x, const I incx, void* y, const I incy, const double c, const double s) {
  blas::rot<c128>(handle(), n, mp<c128>(x), incx, mp<c128>(y), incy, c, s);
}
void cblas_srotm(const I n, float* x, const I incx, float* y, const I incy, const float* p) {
  blas::rotm<float>(handle(), n, x, incx, y, incy, p);
}
void cblas_drotm(const I n, double* x, const I incx, double* y, const I incy, const double* p) {
  blas::rotm<double>(handle(), n, x, incx, y, incy, p);
}

// Real types take scalars by value, complex ones through void*; V is the vector pointer type.
#define STRATA_CBLAS_UPDATES(p, T, V, CV, ALPHA)                                                       \
  void cblas_##p##swap(const I n, V x, const I incx, V y, const I incy) {                            \
    blas::swap<T>(handle(), n, mp<T>(x), incx, mp<T>(y), incy);                                      \
  }                                                                                                  \
  void cblas_##p##copy(const I n, CV x, const I incx, V y, const I incy) {                           \
    blas::copy<T>(handle(), n, cp<T>(x), incx, mp<T>(y), incy);                                      \
  }                                                                                                  \
  void cblas_##p##axpy(const I n, ALPHA alpha, CV x, const I incx, V y, const I incy) {              \
    blas::axpy<T>(handle(), n, capi::cblas::val<T>(alpha), cp<T>(x), incx, mp<T>(y), incy);   \
  }                                                                                                  \
  void cblas_##p##scal(const I n, ALPHA alpha, V x, const I incx) {                                  \
    blas::scal<T>(handle(), n, capi::cblas::val<T>(alpha), mp<T>(x), incx);                   \
  }
}  // extern "C"

extern "C" {
STRATA_CBLAS_UPDATES(s, float, float*, const float*, const float)
STRATA_CBLAS_UPDATES(d, double, double*, const double*, const double)
STRATA_CBLAS_UPDATES(c, c64, void*, const void*, const void*)
STRATA_CBLAS_UPDATES(z, c128, void*, const void*, const void*)
#undef STRATA_CBLAS_UPDATES

void cblas_csscal(const I n, const float alpha, void* x, const I incx) { blas::scal<c64>(handle(), n, alpha, mp<c64>(x), incx); }
void cblas_zdscal(const I n, const double alpha, void* x, const I incx) {
  blas::scal<c128>(handle(), n, alpha, mp<c128>(x), incx);
}

float cblas_sdot(const I n, const float* x, const I incx, const float* y, const I incy) {
  return blas::dot<float>(handle(), n, x, incx, y, incy);
}
double cblas_ddot(const I n, const double* x, const I incx, const double* y, const I incy) {
  return blas::dot<double>(handle(), n, x, incx, y, incy);
}
float cblas_sdsdot(const I n, const float alpha, const float* x, const I incx, const float* y, const I incy) {
  return blas::sdsdot(handle(), n, alpha, x, incx, y, incy);
}
double cblas_dsdot(const I n, const float* x, const I incx, const float* y, const I incy) {
  return blas::dsdot(handle(), n, x, incx, y, incy);
}
#define STRATA_CBLAS_CDOT(p, T)                                                                           \
  void cblas_##p##dotu_sub(const I n, const void* x, const I incx, const void* y, const I incy, void* r) { \
    *mp<T>(r) = blas::dotu<T>(handle(), n, cp<T>(x), incx, cp<T>(y), incy);                               \
  }                                                                                                       \
  void cblas_##p##dotc_sub(const I n, const void* x, const I incx, const void* y, const I incy, void* r) { \
    *mp<T>(r) = blas::dotc<T>(handle(), n, cp<T>(x), incx, cp<T>(y), incy);                               \
  }
STRATA_CBLAS_CDOT(c, c64)
STRATA_CBLAS_CDOT(z, c128)
#undef STRATA_CBLAS_CDOT

float cblas_snrm2(const I n, const float* x, const I incx) { return blas::nrm2<float>(handle(), n, x, incx); }
double cblas_dnrm2(const I n, const double* x, const I incx) { return blas::nrm2<double>(handle(), n, x, incx); }
float cblas_scnrm2(const I n, const void* x, const I incx) { return blas::nrm2<c64>(handle(), n, cp<c64>(x), incx); }
double cblas_dznrm2(const I n, const void* x, const I incx) { return blas::nrm2<c128>(handle(), n, cp<c128>(x), incx); }
float cblas_sasum(const I n, const float* x, const I incx) { return blas::asum<float>(handle(), n, x, incx); }
double cblas_dasum(const I n, const double* x, const I incx) { return blas::asum<double>(handle(), n, x, incx); }
float cblas_scasum(const I n, const void* x, const I incx) { return blas::asum<c64>(handle(), n, cp<c64>(x), incx); }
double cblas_dzasum(const I n, const void* x, const I incx) { return blas::asum<c128>(handle(), n, cp<c128>(x), incx); }

// CBLAS_INDEX is size_t; 0-based, 0 for an empty vector.
static size_t zero_based(blas::index_t i) { return i > 0 ? size_t(i - 1) : 0; }
size_t cblas_isamax(const I n, const float* x, const I incx) { return zero_based(blas::iamax<float>(handle(), n, x, incx)); }
size_t cblas_idamax(const I n, const double* x, const I incx) { return zero_based(blas::iamax<double>(handle(), n, x, incx)); }
size_t cblas_icamax(const I n, const void* x, const I incx) { return zero_based(blas::iamax<c64>(handle(), n, cp<c64>(x), incx)); }
size_t cblas_izamax(const I n, const void* x, const I incx) {
  return zero_based(blas::iamax<c128>(handle(), n, cp<c128>(x), incx));
}

float cblas_scabs1(const void* z) { return blas::cabs1(*cp<c64>(z)); }
double cblas_dcabs1(const void* z) { return blas::cabs1(*cp<c128>(z)); }

}  // extern "C"
