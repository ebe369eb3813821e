// Givens and modified Givens rotations: rotg, rotmg, rot, rotm.
//
// rotg follows the safe-scaling construction of Anderson, "Algorithm 978: Safe Scaling in the
// Level 1 BLAS" (ACM TOMS 2017), which the reference adopted in 3.10: the scale keeps every
// square inside the representable range. rotmg is the classic Hammarling/Lawson scheme with
// the reference's rescaling constants (gam = 4096), so D1, D2 and PARAM match bit for bit in
// the common cases the netlib tests check.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../common/scalar.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level1.hpp"

namespace strata::blas {

namespace {

template <class R>
struct SafeRange {
  // safmin = radix^max(minexponent-1, 1-maxexponent): the smallest normal number whose
  // reciprocal does not overflow.
  static constexpr R safmin = std::numeric_limits<R>::min();
  static constexpr R safmax = R(1) / safmin;
  static R rtmin() { return std::sqrt(safmin); }
  static R rtmax() { return std::sqrt(safmax / 2); }
};

template <class R>
void rotg_real(R* a, R* b, R* c, R* s) {
  using S = SafeRange<R>;
  const R anorm = std::abs(*a), bnorm = std::abs(*b);
  if (bnorm == R(0)) {
    *c = 1;
    *s = 0;
    *b = 0;
  } else if (anorm == R(0)) {
    *c = 0;
    *s = 1;
    *a = *b;
    *b = 1;
  } else {
    const R scl = std::min(S::safmax, std::max({S::safmin, anorm, bnorm}));
    const R sigma = anorm > bnorm ? std::copysign(R(1), *a) : std::copysign(R(1), *b);
    const R r = sigma * (scl * std::sqrt((*a / scl) * (*a / scl) + (*b / scl) * (*b / scl)));
    *c = *a / r;
    *s = *b / r;
    R z;
    if (anorm > bnorm) z = *s;
    else if (*c != R(0)) z = R(1) / *c;
    else z = R(1);
    *a = r;
    *b = z;
  }
}

template <class R>
R abssq(std::complex<R> v) { return v.real() * v.real() + v.imag() * v.imag(); }

template <class R>
R absmax(std::complex<R> v) { return std::max(std::abs(v.real()), std::abs(v.imag())); }

template <class R>
void rotg_complex(std::complex<R>* a, const std::complex<R>* b, R* c, std::complex<R>* s) {
  using S = SafeRange<R>;
  using C = std::complex<R>;
  const R rtmin = S::rtmin(), rtmax = S::rtmax();
  const C f = *a, g = *b;
  C r;
  if (g == C(0)) {
    *c = 1;
    *s = 0;
    r = f;
  } else if (f == C(0)) {
    *c = 0;
    const R g1 = absmax(g);
    if (g1 > rtmin && g1 < rtmax) {
      const R d = std::sqrt(abssq(g));
      *s = std::conj(g) / d;
      r = d;
    } else {
      const R u = std::min(S::safmax, std::max(S::safmin, g1));
      const C gs = g / u;
      const R d = std::sqrt(abssq(gs));
      *s = std::conj(gs) / d;
      r = d * u;
    }
  } else {
    const R f1 = absmax(f), g1 = absmax(g);
    if (f1 > rtmin && f1 < rtmax && g1 > rtmin && g1 < rtmax) {
      const R f2 = abssq(f), g2 = abssq(g), h2 = f2 + g2;
      const R d = (f2 > rtmin && h2 < rtmax) ? std::sqrt(f2 * h2) : std::sqrt(f2) * std::sqrt(h2);
      const R p = 1 / d;
      *c = f2 * p;
      *s = std::conj(g) * (f * p);
      r = f * (h2 * p);
    } else {
      // Scale by the larger magnitude; rescale f separately when that would underflow it.
      const R u = std::min(S::safmax, std::max({S::safmin, f1, g1}));
      const C gs = g / u;
      const R g2 = abssq(gs);
      R w, f2, h2;
      C fs;
      if (f1 / u < rtmin) {
        const R v = std::min(S::safmax, std::max(S::safmin, f1));
        w = v / u;
        fs = f / v;
        f2 = abssq(fs);
        h2 = f2 * w * w + g2;
      } else {
        w = 1;
        fs = f / u;
        f2 = abssq(fs);
        h2 = f2 + g2;
      }
      const R d = (f2 > rtmin && h2 < rtmax) ? std::sqrt(f2 * h2) : std::sqrt(f2) * std::sqrt(h2);
      const R p = 1 / d;
      *c = (f2 * p) * w;
      *s = std::conj(gs) * (fs * p);
      r = (fs * (h2 * p)) * u;
    }
  }
  *a = r;
}

// The reference's rescaling constants; single precision keeps its rounded decimal literals.
template <class R> struct RotmgConstants;
template <> struct RotmgConstants<float> {
  static constexpr float gam = 4096.0f, gamsq = 1.67772e7f, rgamsq = 5.96046e-8f;
};
template <> struct RotmgConstants<double> {
  static constexpr double gam = 4096.0, gamsq = 16777216.0, rgamsq = 5.9604645e-8;
};

}  // namespace

template <class T>
void rotg(const Handle&, T* a, T* b, real_t<T>* c, T* s) {
  if constexpr (is_complex_v<T>) rotg_complex(a, b, c, s);
  else rotg_real(a, b, c, s);
}

template <class T>
void rotmg(const Handle&, T* d1, T* d2, T* x1, T y1, T* param) {
  using K = RotmgConstants<T>;
  T flag, h11 = 0, h12 = 0, h21 = 0, h22 = 0;
  auto zero_all = [&] {
    flag = -1;
    h11 = h12 = h21 = h22 = 0;
    *d1 = *d2 = *x1 = 0;
  };
  if (*d1 < T(0)) {
    zero_all();
  } else {
    const T p2 = *d2 * y1;
    if (p2 == T(0)) {
      param[0] = -2;
      return;
    }
    const T p1 = *d1 * *x1, q2 = p2 * y1, q1 = p1 * *x1;
    if (std::abs(q1) > std::abs(q2)) {
      h21 = -y1 / *x1;
      h12 = p2 / p1;
      const T u = T(1) - h12 * h21;
      if (u > T(0)) {
        flag = 0;
        *d1 /= u;
        *d2 /= u;
        *x1 *= u;
      } else {
        zero_all();
      }
    } else if (q2 < T(0)) {
      zero_all();
    } else {
      flag = 1;
      h11 = p1 / p2;
      h22 = *x1 / y1;
      const T u = T(1) + h11 * h22;
      const T temp = *d2 / u;
      *d2 = *d1 / u;
      *d1 = temp;
      *x1 = y1 * u;
    }
    // Rescale d1 and d2 into [rgamsq, gamsq], switching to the full H form when needed.
    auto to_full_form = [&] {
      if (flag == T(0)) {
        h11 = 1;
        h22 = 1;
      } else {
        h21 = -1;
        h12 = 1;
      }
      flag = -1;
    };
    if (*d1 != T(0)) {
      while (*d1 <= K::rgamsq || *d1 >= K::gamsq) {
        to_full_form();
        if (*d1 <= K::rgamsq) {
          *d1 *= K::gam * K::gam;
          *x1 /= K::gam;
          h11 /= K::gam;
          h12 /= K::gam;
        } else {
          *d1 /= K::gam * K::gam;
          *x1 *= K::gam;
          h11 *= K::gam;
          h12 *= K::gam;
        }
      }
    }
    if (*d2 != T(0)) {
      while (std::abs(*d2) <= K::rgamsq || std::abs(*d2) >= K::gamsq) {
        to_full_form();
        if (std::abs(*d2) <= K::rgamsq) {
          *d2 *= K::gam * K::gam;
          h21 /= K::gam;
          h22 /= K::gam;
        } else {
          *d2 /= K::gam * K::gam;
          h21 *= K::gam;
          h22 *= K::gam;
        }
      }
    }
  }
  if (flag < T(0)) {
    param[1] = h11;
    param[2] = h21;
    param[3] = h12;
    param[4] = h22;
  } else if (flag == T(0)) {
    param[2] = h21;
    param[3] = h12;
  } else {
    param[1] = h11;
    param[4] = h22;
  }
  param[0] = flag;
}

template <class T>
void rot(const Handle& h, index_t n, T* x, index_t incx, T* y, index_t incy, real_t<T> c, real_t<T> s) {
  if (n <= 0) return;
  if (incx == 1 && incy == 1 && (x + n <= y || y + n <= x)) {
    detail::vec_kernels<T>(h.isa()).rot(n, c, s, x, y);
    return;
  }
  T* xb = detail::vec_base(x, n, incx);
  T* yb = detail::vec_base(y, n, incy);
  for (index_t i = 0; i < n; ++i) {
    T& xi = xb[i * incx];
    T& yi = yb[i * incy];
    const T t = c * xi + s * yi;
    yi = c * yi - s * xi;
    xi = t;
  }
}

template <class T>
void rotm(const Handle&, index_t n, T* x, index_t incx, T* y, index_t incy, const T* param) {
  const T flag = param[0];
  if (n <= 0 || flag == T(-2)) return;
  T* xb = detail::vec_base(x, n, incx);
  T* yb = detail::vec_base(y, n, incy);
  T h11, h12, h21, h22;
  if (flag < T(0)) {
    h11 = param[1], h21 = param[2], h12 = param[3], h22 = param[4];
  } else if (flag == T(0)) {
    h11 = 1, h21 = param[2], h12 = param[3], h22 = 1;
  } else {
    h11 = param[1], h21 = -1, h12 = 1, h22 = param[4];
  }
  for (index_t i = 0; i < n; ++i) {
    T& xi = xb[i * incx];
    T& yi = yb[i * incy];
    const T w = xi, z = yi;
    if (flag < T(0)) {
      xi = w * h11 + z * h12;
      yi = w * h21 + z * h22;
    } else if (flag == T(0)) {  // unit diagonal: the reference skips the multiplications by 1
      xi = w + z * h12;
      yi = w * h21 + z;
    } else {
      xi = w * h11 + z;
      yi = -w + h22 * z;
    }
  }
}

template void rotg<float>(const Handle&, float*, float*, float*, float*);
template void rotg<double>(const Handle&, double*, double*, double*, double*);
template void rotg<c64>(const Handle&, c64*, c64*, float*, c64*);
template void rotg<c128>(const Handle&, c128*, c128*, double*, c128*);
template void rotmg<float>(const Handle&, float*, float*, float*, float, float*);
template void rotmg<double>(const Handle&, double*, double*, double*, double, double*);
template void rot<float>(const Handle&, index_t, float*, index_t, float*, index_t, float, float);
template void rot<double>(const Handle&, index_t, double*, index_t, double*, index_t, double, double);
template void rot<c64>(const Handle&, index_t, c64*, index_t, c64*, index_t, float, float);
template void rot<c128>(const Handle&, index_t, c128*, index_t, c128*, index_t, double, double);
template void rotm<float>(const Handle&, index_t, float*, index_t, float*, index_t, const float*);
template void rotm<double>(const Handle&, index_t, double*, index_t, double*, index_t, const double*);

}  // namespace strata::blas
