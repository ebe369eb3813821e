// Level 1 updates that write a vector: swap, scal, copy, axpy, axpby. Unit-stride calls go to
// the per-ISA kernels and, when long, are split across threads (each element is computed the
// same way whoever computes it).
#include <algorithm>

#include "../common/parallel.hpp"
#include "../common/scalar.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level1.hpp"

namespace strata::blas {

using detail::vec_base;

template <class T>
void swap(const Handle&, index_t n, T* x, index_t incx, T* y, index_t incy) {
  if (n <= 0) return;
  T* xb = vec_base(x, n, incx);
  T* yb = vec_base(y, n, incy);
  for (index_t i = 0; i < n; ++i) std::swap(xb[i * incx], yb[i * incy]);
}

template <class T>
void scal(const Handle& h, index_t n, T alpha, T* x, index_t incx) {
  if (n <= 0 || incx <= 0) return;
  if (incx == 1) {
    auto kernel = detail::vec_kernels<T>(h.isa()).scal;
    detail::parallel_ranges(h, n, n, [&](index_t lo, index_t hi) { kernel(hi - lo, alpha, x + lo); });
    return;
  }
  for (index_t i = 0; i < n; ++i) x[i * incx] = alpha * x[i * incx];
}

template <class T>
  requires is_complex_v<T>
void scal(const Handle& h, index_t n, real_t<T> alpha, T* x, index_t incx) {
  if (n <= 0 || incx <= 0) return;
  // Real times complex: both parts scaled independently, as csscal does; contiguous, that is
  // the real scal of the 2n parts.
  if (incx == 1) {
    using R = real_t<T>;
    auto kernel = detail::vec_kernels<R>(h.isa()).scal;
    R* r = reinterpret_cast<R*>(x);
    detail::parallel_ranges(h, 2 * n, 2 * n, [&](index_t lo, index_t hi) { kernel(hi - lo, alpha, r + lo); });
    return;
  }
  for (index_t i = 0; i < n; ++i) {
    T& v = x[i * incx];
    v = T(alpha * v.real(), alpha * v.imag());
  }
}

template <class T>
void copy(const Handle&, index_t n, const T* x, index_t incx, T* y, index_t incy) {
  if (n <= 0) return;
  if (incx == 1 && incy == 1) {
    std::copy(x, x + n, y);
    return;
  }
  const T* xb = vec_base(x, n, incx);
  T* yb = vec_base(y, n, incy);
  for (index_t i = 0; i < n; ++i) yb[i * incy] = xb[i * incx];
}

template <class T>
void axpy(const Handle& h, index_t n, T alpha, const T* x, index_t incx, T* y, index_t incy) {
  if (n <= 0 || alpha == T(0)) return;
  if (incx == 1 && incy == 1) {
    auto kernel = detail::vec_kernels<T>(h.isa()).axpy;
    detail::parallel_ranges(h, n, n, [&](index_t lo, index_t hi) { kernel(hi - lo, alpha, x + lo, y + lo); });
    return;
  }
  const T* xb = vec_base(x, n, incx);
  T* yb = vec_base(y, n, incy);
  for (index_t i = 0; i < n; ++i) yb[i * incy] += alpha * xb[i * incx];
}

template <class T>
void axpby(const Handle& h, index_t n, T alpha, const T* x, index_t incx, T beta, T* y, index_t incy) {
  if (n <= 0) return;
  T* yb = vec_base(y, n, incy);
  if (beta == T(0)) {
    for (index_t i = 0; i < n; ++i) yb[i * incy] = T(0);  // y is not read
  } else if (beta != T(1)) {
    for (index_t i = 0; i < n; ++i) yb[i * incy] *= beta;
  }
  axpy(h, n, alpha, x, incx, y, incy);
}

#define STRATA_INSTANTIATE(T)                                                                  \
  template void swap<T>(const Handle&, index_t, T*, index_t, T*, index_t);                     \
  template void scal<T>(const Handle&, index_t, T, T*, index_t);                               \
  template void copy<T>(const Handle&, index_t, const T*, index_t, T*, index_t);               \
  template void axpy<T>(const Handle&, index_t, T, const T*, index_t, T*, index_t);            \
  template void axpby<T>(const Handle&, index_t, T, const T*, index_t, T, T*, index_t);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(c64)
STRATA_INSTANTIATE(c128)
#undef STRATA_INSTANTIATE
template void scal<c64>(const Handle&, index_t, float, c64*, index_t);
template void scal<c128>(const Handle&, index_t, double, c128*, index_t);

}  // namespace strata::blas
