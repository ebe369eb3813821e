// nrm2 without destructive overflow or underflow: Blue's algorithm with three accumulators
// (small values scaled up, medium values as they are, big values scaled down), as in
// Anderson, "Algorithm 978: Safe Scaling in the Level 1 BLAS" and the reference since 3.10.
// Like that reference it walks negative increments backwards and repeats x[0] for incx == 0.
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

}  // namespace

template <class T>
real_t<T> nrm2(const Handle&, index_t n, const T* x, index_t incx) {
  using R = real_t<T>;
  using K = BlueConstants<R>;
  if (n <= 0) return R(0);
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
