// Level 1 reductions: dot, dotu, dotc, sdsdot, dsdot, asum, iamax, cabs1.
// Unit-stride sums use the per-ISA kernels over fixed chunks (chunked_reduce), so the
// result is the same bits for any thread count.
#include "../common/parallel.hpp"
#include "../common/scalar.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level1.hpp"

namespace strata::blas {

using detail::vec_base;

namespace {

template <class T, bool Conj>
T dot_impl(const Handle& h, index_t n, const T* x, index_t incx, const T* y, index_t incy) {
  if (n <= 0) return T(0);
  if (incx == 1 && incy == 1) {
    const auto& k = detail::vec_kernels<T>(h.isa());
    auto kernel = Conj ? k.dotc : k.dotu;
    return detail::chunked_reduce<T>(h, n, [&](index_t lo, index_t hi) { return kernel(hi - lo, x + lo, y + lo); });
  }
  const T* xb = vec_base(x, n, incx);
  const T* yb = vec_base(y, n, incy);
  T sum{};
  for (index_t i = 0; i < n; ++i) sum += detail::conj_if(Conj, xb[i * incx]) * yb[i * incy];
  return sum;
}

// The double-precision inner product of two float vectors (sdsdot and dsdot).
double dot_in_double(index_t n, const float* x, index_t incx, const float* y, index_t incy) {
  if (n <= 0) return 0.0;
  const float* xb = vec_base(x, n, incx);
  const float* yb = vec_base(y, n, incy);
  double sum = 0.0;
  for (index_t i = 0; i < n; ++i) sum += double(xb[i * incx]) * double(yb[i * incy]);
  return sum;
}

}  // namespace

template <class T>
T dot(const Handle& h, index_t n, const T* x, index_t incx, const T* y, index_t incy) {
  return dot_impl<T, false>(h, n, x, incx, y, incy);
}

template <class T>
  requires is_complex_v<T>
T dotu(const Handle& h, index_t n, const T* x, index_t incx, const T* y, index_t incy) {
  return dot_impl<T, false>(h, n, x, incx, y, incy);
}

template <class T>
T dotc(const Handle& h, index_t n, const T* x, index_t incx, const T* y, index_t incy) {
  return dot_impl<T, true>(h, n, x, incx, y, incy);
}

float sdsdot(const Handle&, index_t n, float sb, const float* x, index_t incx, const float* y, index_t incy) {
  return float(double(sb) + dot_in_double(n, x, incx, y, incy));
}

double dsdot(const Handle&, index_t n, const float* x, index_t incx, const float* y, index_t incy) {
  return dot_in_double(n, x, incx, y, incy);
}

template <class T>
real_t<T> asum(const Handle& h, index_t n, const T* x, index_t incx) {
  using R = real_t<T>;
  if (n <= 0 || incx <= 0) return R(0);
  if (incx == 1) {
    auto kernel = detail::vec_kernels<T>(h.isa()).asum;
    return detail::chunked_reduce<R>(h, n, [&](index_t lo, index_t hi) { return kernel(hi - lo, x + lo); });
  }
  return detail::chunked_reduce<R>(h, n, [&](index_t lo, index_t hi) {
    R acc[8] = {};
    index_t i = lo;
    for (; i + 8 <= hi; i += 8)
      for (int l = 0; l < 8; ++l) acc[l] += detail::abs1(x[(i + l) * incx]);
    R tail = 0;
    for (; i < hi; ++i) tail += detail::abs1(x[i * incx]);
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7])) + tail;
  });
}

template <class T>
index_t iamax(const Handle& h, index_t n, const T* x, index_t incx) {
  if (n < 1 || incx <= 0) return 0;
  if (incx == 1) return detail::vec_kernels<T>(h.isa()).iamax(n, x) + 1;
  index_t best = 0;
  real_t<T> max = detail::abs1(x[0]);
  for (index_t i = 1; i < n; ++i) {
    const real_t<T> v = detail::abs1(x[i * incx]);
    if (v > max) {
      best = i;
      max = v;
    }
  }
  return best + 1;
}

template <class T>
real_t<T> cabs1(T z) {
  return detail::abs1(z);
}

#define STRATA_INSTANTIATE(T)                                                                   \
  template T dot<T>(const Handle&, index_t, const T*, index_t, const T*, index_t);              \
  template T dotc<T>(const Handle&, index_t, const T*, index_t, const T*, index_t);             \
  template real_t<T> asum<T>(const Handle&, index_t, const T*, index_t);                        \
  template index_t iamax<T>(const Handle&, index_t, const T*, index_t);                         \
  template real_t<T> cabs1<T>(T);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(c64)
STRATA_INSTANTIATE(c128)
#undef STRATA_INSTANTIATE
template c64 dotu<c64>(const Handle&, index_t, const c64*, index_t, const c64*, index_t);
template c128 dotu<c128>(const Handle&, index_t, const c128*, index_t, const c128*, index_t);

}  // namespace strata::blas
