// nrm2 without destructive overflow or underflow: Blue's algorithm with three accumulators
// (small values scaled up, medium values as they are, big values scaled down), as in
// Anderson, "Algorithm 978: Safe Scaling in the Level 1 BLAS" and the reference since 3.10.
// Like that reference it walks negative increments backwards and repeats x[0] for incx == 0.
// First a plain vectorised sum of squares (in double for f32/c64, where no finite square can
// overflow or underflow it; in double for f64/c128 when the largest magnitude shows that no
// square can, checked in the same pass); Blue's per-element branches only where that cannot
// be trusted: they had scnrm2 at a sixth of OpenBLAS's speed.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../common/scalar.hpp"
#include "strata/blas/level1.hpp"

namespace strata::blas {

namespace {

template <class R>
struct BlueConstants {
  using L = std::numeric_limits<R>;
  static R pow2(int e) { return std::ldexp(R(1), e); }
  // Thresholds: squares of values in [tsml, tbig] neither underflow nor overflow.
  static R tsml() { return pow2(int(std::ceil((L::min_exponent - 1) * 0.5))); }
  static R tbig() { return pow2(int(std::floor((L::max_exponent - L::digits + 1) * 0.5))); }
  // Scaling factors for the small and big accumulators.
  static R ssml() { return pow2(-int(std::floor((L::min_exponent - L::digits) * 0.5))); }
  static R sbig() { return pow2(-int(std::ceil((L::max_exponent + L::digits - 1) * 0.5))); }
};

template <class R>
struct BlueSums {
  R asml = 0, amed = 0, abig = 0;
  bool notbig = true;
  void add(R v, R tsml, R tbig, R ssml, R sbig) {
    const R ax = std::abs(v);
    if (ax > tbig) {
      abig += (ax * sbig) * (ax * sbig);
      notbig = false;
    } else if (ax < tsml) {
      if (notbig) asml += (ax * ssml) * (ax * ssml);
    } else {
      amed += ax * ax;
    }
  }
};

// The sum of squares of the m reals at x (stride `stride`) in double, eight lanes combined
// pairwise, and their largest magnitude (which skips NaNs: a NaN shows in the sum).
template <class R>
double sum_of_squares(index_t m, const R* x, index_t stride, double& max) {
  constexpr int lanes = 8;
  double acc[lanes] = {}, top[lanes] = {};
  index_t i = 0;
  if (stride == 1) {
    for (; i + lanes <= m; i += lanes)
      for (int l = 0; l < lanes; ++l) {
        const double v = double(x[i + l]);
        acc[l] += v * v;
        top[l] = std::max(top[l], std::abs(v));
      }
  }
  double tail = 0, tail_top = 0;
  for (; i < m; ++i) {
    const double v = double(x[i * stride]);
    tail += v * v;
    tail_top = std::max(tail_top, std::abs(v));
  }
  for (int w = lanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w], top[l] = std::max(top[l], top[l + w]);
  max = std::max(top[0], tail_top);
  return acc[0] + tail;
}

}  // namespace

template <class T>
real_t<T> nrm2(const Handle&, index_t n, const T* x, index_t incx) {
  using R = real_t<T>;
  using K = BlueConstants<R>;
  if (n <= 0) return R(0);
  if (incx > 0) {
    // The reals of x: interleaved (re, im) pairs for complex T, contiguous when incx == 1.
    constexpr index_t parts = is_complex_v<T> ? 2 : 1;
    const R* r = reinterpret_cast<const R*>(x);
    double max = 0, sum = 0;
    if (incx == 1) {
      sum = sum_of_squares(n * parts, r, 1, max);
    } else {
      for (index_t p = 0; p < parts; ++p) {
        double part_max;
        sum += sum_of_squares(n, r + p, incx * parts, part_max);
        max = std::max(max, part_max);
      }
    }
    if constexpr (sizeof(R) == 4) {
      if (sum == sum) return R(std::sqrt(sum));  // f32 squares are exact and safe in double
    } else {
      using D = BlueConstants<double>;
      if (max >= D::tsml() && max <= D::tbig() && sum <= std::numeric_limits<double>::max())
        return R(std::sqrt(sum));
    }
  }
  const R tsml = K::tsml(), tbig = K::tbig(), ssml = K::ssml(), sbig = K::sbig();
  const R maxn = std::numeric_limits<R>::max();
  BlueSums<R> s;
  const T* xb = detail::vec_base(x, n, incx);
  for (index_t i = 0; i < n; ++i) {
    const T v = xb[i * incx];
    if constexpr (is_complex_v<T>) {
      s.add(v.real(), tsml, tbig, ssml, sbig);
      s.add(v.imag(), tsml, tbig, ssml, sbig);
    } else {
      s.add(v, tsml, tbig, ssml, sbig);
    }
  }
  R scl, sumsq;
  const bool med_matters = s.amed > R(0) || s.amed > maxn || s.amed != s.amed;
  if (s.abig > R(0)) {
    // Medium values only matter if they could still change the big sum.
    if (med_matters) s.abig += (s.amed * sbig) * sbig;
    scl = R(1) / sbig;
    sumsq = s.abig;
  } else if (s.asml > R(0)) {
    if (med_matters) {
      const R amed = std::sqrt(s.amed);
      const R asml = std::sqrt(s.asml) / ssml;
      const R ymin = asml > amed ? amed : asml;
      const R ymax = asml > amed ? asml : amed;
      scl = R(1);
      sumsq = ymax * ymax * (R(1) + (ymin / ymax) * (ymin / ymax));
    } else {
      scl = R(1) / ssml;
      sumsq = s.asml;
    }
  } else {
    scl = R(1);
    sumsq = s.amed;
  }
  return scl * std::sqrt(sumsq);
}

template float nrm2<float>(const Handle&, index_t, const float*, index_t);
template double nrm2<double>(const Handle&, index_t, const double*, index_t);
template float nrm2<c64>(const Handle&, index_t, const c64*, index_t);
template double nrm2<c128>(const Handle&, index_t, const c128*, index_t);

}  // namespace strata::blas
