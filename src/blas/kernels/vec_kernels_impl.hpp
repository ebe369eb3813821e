// The kernel bodies of vec_kernels.hpp. Included by exactly one .cpp per ISA; everything here
// has internal linkage so the differently compiled copies never meet at link time.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../common/scalar.hpp"
#include "vec_kernels.hpp"

namespace strata::blas::detail {
namespace {

// acc[l] += acc[l + w] for w = Lanes/2, ..., 1: the pairwise combine of the lane sums, one
// step per constant w so that each step vectorises (a loop over w left every step a chain of
// scalar adds through the stack: ten times the main loop of a 128-row dot4 in sgemv T).
template <int W, class T>
[[gnu::always_inline]] inline void fold_lanes(T* acc) {
  if constexpr (W >= 1) {
    for (int l = 0; l < W; ++l) acc[l] += acc[l + W];
    fold_lanes<W / 2>(acc);
  }
}

// The same down to width 2 only: lanes 0 and 1 end up holding the sums of the even and of
// the odd lanes (the real and imaginary parts of interleaved complex values).
template <int W, class T>
[[gnu::always_inline]] inline void fold_lane_pairs(T* acc) {
  if constexpr (W >= 2) {
    for (int l = 0; l < W; ++l) acc[l] += acc[l + W];
    fold_lane_pairs<W / 2>(acc);
  }
}

// Complex kernels run on the interleaved (re, im) reals in 32-byte vectors (GCC vector
// extensions: every ISA's build lowers them to its own instructions). Written over
// std::complex, GCC kept accumulators in memory or shuffled every element across lanes
// (cdotc 4-5x, cgemv T/C 13x behind OpenBLAS). A dot keeps two sums per lane,
// P = a * x and S = a * swap(x) elementwise (swap: re and im exchanged), and finishes with
//   sum a x       = (P_re - P_im) + i (S_re + S_im)   (P_re: the sum of P's even lanes, ...)
//   sum conj(a) x = (P_re + P_im) + i (S_re - S_im);
// an axpy adds alpha_re * a + (-alpha_im, alpha_im) * swap(a).
typedef float Floats32B __attribute__((vector_size(32)));
typedef double Doubles32B __attribute__((vector_size(32)));
typedef int32_t Int32s32B __attribute__((vector_size(32)));
typedef int64_t Int64s32B __attribute__((vector_size(32)));

template <class R>
struct ComplexLanes {
  static constexpr int W = int(32 / sizeof(R));  // reals per vector
  using V = std::conditional_t<sizeof(R) == 4, Floats32B, Doubles32B>;
  using Mask = std::conditional_t<sizeof(R) == 4, Int32s32B, Int64s32B>;
  static V load(const R* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(R* p, V v) { std::memcpy(p, &v, sizeof v); }
  static V swap(V v) {
    if constexpr (W == 8) return __builtin_shuffle(v, Mask{1, 0, 3, 2, 5, 4, 7, 6});
    else return __builtin_shuffle(v, Mask{1, 0, 3, 2});
  }
  static V splat(R r) {
    V v;
    for (int l = 0; l < W; ++l) v[l] = r;
    return v;
  }
  static V alternate(R even, R odd) {  // (even, odd, even, odd, ...)
    V v;
    for (int l = 0; l < W; l += 2) v[l] = even, v[l + 1] = odd;
    return v;
  }
  // y += alpha * a on one vector of complex values: alr = splat(alpha_re), ali_signed =
  // alternate(-alpha_im, alpha_im), both made once outside the loop (GCC rebuilt a splat
  // inside it, lane by lane, every step).
  static V axpy(V y, V alr, V ali_signed, V a) { return y + alr * a + ali_signed * swap(a); }
  // One complex element past the last whole vector: y += alpha * a (with Axpy; the product
  // formed first, so x == y is safe) and a's contributions to the scalar tails pt and qt.
  template <bool Axpy>
  static void tail_step(std::complex<R> alpha, const R* a, const R* x, R* y, R* pt, R* qt) {
    const R a_re = a[0], a_im = a[1];
    if constexpr (Axpy) {
      const R t_re = alpha.real() * a_re - alpha.imag() * a_im, t_im = alpha.real() * a_im + alpha.imag() * a_re;
      y[0] += t_re, y[1] += t_im;
    }
    pt[0] += a_re * x[0], pt[1] += a_im * x[1];
    qt[0] += a_re * x[1], qt[1] += a_im * x[0];
  }
  // The complex sum from the lane sums P and S (and the scalar tails pt, st: two reals each).
  template <bool Conj>
  static std::complex<R> finish(V p, V q, const R* pt, const R* qt) {
    R pl[W], ql[W];
    std::memcpy(pl, &p, sizeof p);
    std::memcpy(ql, &q, sizeof q);
    fold_lane_pairs<W / 2>(pl), fold_lane_pairs<W / 2>(ql);
    const R p_re = pl[0] + pt[0], p_im = pl[1] + pt[1], s_re = ql[0] + qt[0], s_im = ql[1] + qt[1];
    return Conj ? std::complex<R>(p_re + p_im, s_re - s_im) : std::complex<R>(p_re - p_im, s_re + s_im);
  }
};

// y += alpha * a (with Axpy) and returns sum conj?(a_i) x_i.
template <class R, bool Conj, bool Axpy>
std::complex<R> complex_axpy_dot(index_t n, std::complex<R> alpha, const std::complex<R>* a,
                                 const std::complex<R>* x, std::complex<R>* y) {
  using C = ComplexLanes<R>;
  using V = typename C::V;
  constexpr int W = C::W;
  const R* ar = reinterpret_cast<const R*>(a);
  const R* xr = reinterpret_cast<const R*>(x);
  R* yr = reinterpret_cast<R*>(y);
  const V alr = C::splat(alpha.real()), ali = C::alternate(-alpha.imag(), alpha.imag());
  V p0{}, p1{}, q0{}, q1{};  // two vectors of each sum: the FMA latency is covered
  const index_t reals = 2 * n;
  index_t i = 0;
  for (; i + 2 * W <= reals; i += 2 * W) {
    const V a0 = C::load(ar + i), a1 = C::load(ar + i + W), x0 = C::load(xr + i), x1 = C::load(xr + i + W);
    if constexpr (Axpy) {
      C::store(yr + i, C::axpy(C::load(yr + i), alr, ali, a0));
      C::store(yr + i + W, C::axpy(C::load(yr + i + W), alr, ali, a1));
    }
    p0 += a0 * x0, q0 += a0 * C::swap(x0);
    p1 += a1 * x1, q1 += a1 * C::swap(x1);
  }
  R pt[2] = {}, qt[2] = {};
  for (; i < reals; i += 2) C::template tail_step<Axpy>(alpha, ar + i, xr + i, yr + i, pt, qt);
  return C::template finish<Conj>(p0 + p1, q0 + q1, pt, qt);
}

template <class T>
void axpy_kernel(index_t n, T alpha, const T* x, T* y) {
  for (index_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <class T>
void scal_kernel(index_t n, T alpha, T* x) {
  for (index_t i = 0; i < n; ++i) x[i] = alpha * x[i];
}

// Lanes independent accumulators (a vector register's worth or more, so the loop body
// vectorises without reassociation), combined pairwise in a fixed order.
template <class T, bool Conj>
T dot_kernel(index_t n, const T* x, const T* y) {
  if constexpr (is_complex_v<T>) {
    return complex_axpy_dot<real_t<T>, Conj, false>(n, T(0), x, y, nullptr);
  } else {
    constexpr int lanes = 16;
    T acc[lanes] = {};
    index_t i = 0;
    for (; i + lanes <= n; i += lanes)
      for (int l = 0; l < lanes; ++l) acc[l] += x[i + l] * y[i + l];
    T tail{};
    for (; i < n; ++i) tail += x[i] * y[i];
    fold_lanes<lanes / 2>(acc);
    return acc[0] + tail;
  }
}

template <class T>
void axpy4_kernel(index_t n, const T* alpha, const T* const* x, T* __restrict y) {
  if constexpr (is_complex_v<T>) {  // on the reals: y stays in a register for all four columns
    using R = real_t<T>;
    using C = ComplexLanes<R>;
    using V = typename C::V;
    V alr[4], ali[4];
    const R* col[4];
    for (int c = 0; c < 4; ++c) {
      alr[c] = C::splat(alpha[c].real()), ali[c] = C::alternate(-alpha[c].imag(), alpha[c].imag());
      col[c] = reinterpret_cast<const R*>(x[c]);
    }
    R* yr = reinterpret_cast<R*>(y);
    index_t i = 0;
    for (; i + C::W <= 2 * n; i += C::W) {
      V yv = C::load(yr + i);
      for (int c = 0; c < 4; ++c) yv = C::axpy(yv, alr[c], ali[c], C::load(col[c] + i));
      C::store(yr + i, yv);
    }
    for (index_t e = i / 2; e < n; ++e) y[e] = (((y[e] + alpha[0] * x[0][e]) + alpha[1] * x[1][e]) + alpha[2] * x[2][e]) + alpha[3] * x[3][e];
    return;
  }
  const T a0 = alpha[0], a1 = alpha[1], a2 = alpha[2], a3 = alpha[3];
  const T* __restrict x0 = x[0];
  const T* __restrict x1 = x[1];
  const T* __restrict x2 = x[2];
  const T* __restrict x3 = x[3];
  for (index_t i = 0; i < n; ++i) y[i] = (((y[i] + a0 * x0[i]) + a1 * x1[i]) + a2 * x2[i]) + a3 * x3[i];
}

template <class T>
void axpy_columns4_kernel(index_t n, const T* alpha, const T* __restrict x, T* const* y) {
  const T a0 = alpha[0], a1 = alpha[1], a2 = alpha[2], a3 = alpha[3];
  T* __restrict y0 = y[0];
  T* __restrict y1 = y[1];
  T* __restrict y2 = y[2];
  T* __restrict y3 = y[3];
  for (index_t i = 0; i < n; ++i) {
    const T v = x[i];
    y0[i] += a0 * v, y1[i] += a1 * v, y2[i] += a2 * v, y3[i] += a3 * v;
  }
}

// The axpy of axpy_kernel and the dot of dot_kernel (same lanes, same combine) in one pass.
template <class T, bool Conj>
T axpy_dot_kernel(index_t n, T alpha, const T* __restrict a, const T* __restrict x, T* __restrict y) {
  if constexpr (is_complex_v<T>) {
    return complex_axpy_dot<real_t<T>, Conj, true>(n, alpha, a, x, y);
  } else {
    constexpr int lanes = 16;
    T acc[lanes] = {};
    index_t i = 0;
    for (; i + lanes <= n; i += lanes)
      for (int l = 0; l < lanes; ++l) {
        y[i + l] += alpha * a[i + l];
        acc[l] += a[i + l] * x[i + l];
      }
    T tail{};
    for (; i < n; ++i) {
      y[i] += alpha * a[i];
      tail += a[i] * x[i];
    }
    fold_lanes<lanes / 2>(acc);
    return acc[0] + tail;
  }
}

// four_columns_kernel for complex T on the reals (ComplexLanes): per column the two dot sums,
// and y += alpha[c] * a[c] per column in column order. (Over std::complex, cgemv T/C ran at
// 3 GFLOPS against OpenBLAS's 40-50.)
template <class R, bool Conj, bool Axpy>
void complex_four_columns_kernel(index_t n, const std::complex<R>* alpha, const std::complex<R>* const* a,
                                 const std::complex<R>* x, std::complex<R>* y, std::complex<R>* dot) {
  using C = ComplexLanes<R>;
  using V = typename C::V;
  constexpr int W = C::W;
  const R* col[4];
  for (int c = 0; c < 4; ++c) col[c] = reinterpret_cast<const R*>(a[c]);
  const R* xr = reinterpret_cast<const R*>(x);
  R* yr = reinterpret_cast<R*>(y);
  V al_re[4] = {}, al_im[4] = {};
  if constexpr (Axpy)
    for (int c = 0; c < 4; ++c) al_re[c] = C::splat(alpha[c].real()), al_im[c] = C::alternate(-alpha[c].imag(), alpha[c].imag());
  V p[4] = {}, q[4] = {};
  const index_t reals = 2 * n;
  index_t i = 0;
  for (; i + W <= reals; i += W) {
    const V xv = C::load(xr + i), xs = C::swap(xv);
    V yv{};
    if constexpr (Axpy) yv = C::load(yr + i);
    for (int c = 0; c < 4; ++c) {
      const V av = C::load(col[c] + i);
      if constexpr (Axpy) yv = C::axpy(yv, al_re[c], al_im[c], av);
      p[c] += av * xv, q[c] += av * xs;
    }
    if constexpr (Axpy) C::store(yr + i, yv);
  }
  R pt[4][2] = {}, qt[4][2] = {};
  for (; i < reals; i += 2)
    for (int c = 0; c < 4; ++c)
      C::template tail_step<Axpy>(Axpy ? alpha[c] : std::complex<R>(), col[c] + i, xr + i, yr + i, pt[c], qt[c]);
  for (int c = 0; c < 4; ++c) dot[c] = C::template finish<Conj>(p[c], q[c], pt[c], qt[c]);
}

// Four columns a[c] at once against one pass over x: dot[c] = sum a[c]_i x_i (conj(a) for
// the c form) in Lanes accumulators combined pairwise, and with Axpy also
// y += sum_c alpha[c] a[c] (added in column order, as four axpy calls would).
template <class T, bool Conj, int Lanes, bool Axpy>
void four_columns_kernel(index_t n, const T* alpha, const T* const* a, const T* __restrict x, T* __restrict y,
                         T* dot) {
  if constexpr (is_complex_v<T>) {
    return complex_four_columns_kernel<real_t<T>, Conj, Axpy>(n, alpha, a, x, y, dot);
  } else {
  const T* __restrict c0 = a[0];
  const T* __restrict c1 = a[1];
  const T* __restrict c2 = a[2];
  const T* __restrict c3 = a[3];
  T a0{}, a1{}, a2{}, a3{};
  if constexpr (Axpy) a0 = alpha[0], a1 = alpha[1], a2 = alpha[2], a3 = alpha[3];
  // Zeroed element by element: `= {}` became a `rep stos`, whose start-up was a tenth of a
  // symv call on a 256 x 256 matrix (columns of ~128 rows).
  T acc[4][Lanes];
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < Lanes; ++l) acc[c][l] = T(0);
  index_t i = 0;
  for (; i + Lanes <= n; i += Lanes)
    for (int l = 0; l < Lanes; ++l) {
      const T xi = x[i + l];
      if constexpr (Axpy)
        y[i + l] = (((y[i + l] + a0 * c0[i + l]) + a1 * c1[i + l]) + a2 * c2[i + l]) + a3 * c3[i + l];
      acc[0][l] += conj_if(Conj, c0[i + l]) * xi;
      acc[1][l] += conj_if(Conj, c1[i + l]) * xi;
      acc[2][l] += conj_if(Conj, c2[i + l]) * xi;
      acc[3][l] += conj_if(Conj, c3[i + l]) * xi;
    }
  T tail[4] = {};
  for (; i < n; ++i) {
    if constexpr (Axpy) y[i] = (((y[i] + a0 * c0[i]) + a1 * c1[i]) + a2 * c2[i]) + a3 * c3[i];
    tail[0] += conj_if(Conj, c0[i]) * x[i];
    tail[1] += conj_if(Conj, c1[i]) * x[i];
    tail[2] += conj_if(Conj, c2[i]) * x[i];
    tail[3] += conj_if(Conj, c3[i]) * x[i];
  }
  for (int c = 0; c < 4; ++c) {
    fold_lanes<Lanes / 2>(acc[c]);
    dot[c] = acc[c][0] + tail[c];
  }
  }
}

// The axpys of axpy4_kernel and four dots in one pass over y.
template <class T, bool Conj>
void axpy_dot4_kernel(index_t n, const T* alpha, const T* const* a, const T* x, T* y, T* dot) {
  four_columns_kernel<T, Conj, 8, true>(n, alpha, a, x, y, dot);  // Lanes: real T only
}

// Four dot_kernel<T, Conj>(n, a[c], x): the same lanes and the same combine per column.
template <class T, bool Conj>
void dot4_kernel(index_t n, const T* const* a, const T* x, T* dot) {
  four_columns_kernel<T, Conj, 16, false>(n, nullptr, a, x, nullptr, dot);  // Lanes: real T only
}

// y_c -= a_c * t for four columns y_c of length n: t is loaded once for all four. Blocks of
// eight the compiler vectorises at -O2 (a plain loop of unknown length stays scalar there),
// restrict on parameters (GCC ignores it on local pointers).
template <class T>
void subtract_multiples4(index_t n, const T* __restrict t, const T* a, T* __restrict y0, T* __restrict y1,
                         T* __restrict y2, T* __restrict y3) {
  const T a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  index_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const T v = t[i + l];
      y0[i + l] -= v * a0, y1[i + l] -= v * a1, y2[i + l] -= v * a2, y3[i + l] -= v * a3;
    }
  for (; i < n; ++i) {
    const T v = t[i];
    y0[i] -= v * a0, y1[i] -= v * a1, y2[i] -= v * a2, y3[i] -= v * a3;
  }
}

// y -= a * t for one column, in groups of eight as above (a plain loop inlined into the
// inversion stayed scalar at -O2).
template <class T>
void subtract_multiple(index_t n, const T* __restrict t, T a, T* __restrict y) {
  index_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) y[i + l] -= t[i + l] * a;
  for (; i < n; ++i) y[i] -= t[i] * a;
}

// Column-oriented: once entry p of every column of the inverse is final, it is multiplied by
// the pivot's reciprocal and its multiple of t's column p is taken from the entries below
// (lower) or above (upper) — independent updates down contiguous columns, four columns of the
// inverse per pass over t's column. (Each entry as a dot product of what came before, one
// dependent multiply-add after another, was a third of a 256 x 256 strsm; one column per pass
// in a loop the compiler left scalar, a seventh.)
//
// The rows a pivot updates, (p, n) or [0, p), are widened to whole groups of 8 from a multiple of
// 8 (lower) or to one (upper), and t's column is taken through a copy that is zero outside
// them: the extra rows subtract zero, every pass loads and stores the same aligned groups
// (stores forward to the next pass's loads), and there is no scalar tail. The working copy has
// a leading dimension of n + 8 (with n = 64, columns 16 apart were 4 KiB apart: 4K aliasing
// between passes), and an entry's final value (scaled by the pivot's reciprocal) goes straight
// to `inv`, not back into the working copy, where the next vector load would have had to wait
// for the scalar store. The columns left over from the groups of four go through a vectorised
// subtract_multiple. A 64 x 64 inversion alone (-O2): 13 -> 6 us.
template <class T>
void invert_triangle_kernel(index_t n, bool upper, const T* t, T* inv) {
  const index_t ld = n + 8;
  std::vector<T> work(static_cast<std::size_t>(ld * n + n), T(0));
  T* w = work.data();
  T* column = w + ld * n;
  for (index_t k = 0; k < n * n; ++k) inv[k] = T(0);
  for (index_t j = 0; j < n; ++j) w[j + j * ld] = T(1);
  for (index_t s = 0; s < n; ++s) {
    const index_t p = upper ? n - 1 - s : s;
    const T reciprocal = T(1) / t[p + p * n];  // one division per pivot, not per entry
    // Columns j of the inverse with a nonzero entry p: j <= p (lower) or j >= p (upper); the
    // rows they update: [0, p) (upper) or (p, n), widened to [i0, i1).
    const index_t j0 = upper ? p : 0, j1 = upper ? n : p + 1;
    const index_t i0 = upper ? 0 : (p + 1) / 8 * 8, i1 = upper ? std::min(n, (p + 7) / 8 * 8) : n;
    std::copy(t + p * n + i0, t + p * n + i1, column + i0);  // then zero what is not updated
    if (upper) std::fill(column + p, column + i1, T(0));
    else std::fill(column + i0, column + p + 1, T(0));
    const T* c = column + i0;
    index_t j = j0;
    for (; j + 4 <= j1; j += 4) {
      T* y = w + j * ld;
      T a[4];
      for (int k = 0; k < 4; ++k) inv[(j + k) * n + p] = a[k] = y[k * ld + p] * reciprocal;
      subtract_multiples4(i1 - i0, c, a, y + i0, y + ld + i0, y + 2 * ld + i0, y + 3 * ld + i0);
    }
    for (; j < j1; ++j) {
      T* y = w + j * ld;
      const T a = inv[j * n + p] = y[p] * reciprocal;
      subtract_multiple(i1 - i0, c, a, y + i0);
    }
  }
}

template <class T>
void rot_kernel(index_t n, real_t<T> c, real_t<T> s, T* x, T* y) {
  using R = real_t<T>;
  constexpr index_t parts = is_complex_v<T> ? 2 : 1;
  R* __restrict xr = reinterpret_cast<R*>(x);
  R* __restrict yr = reinterpret_cast<R*>(y);
  for (index_t i = 0; i < n * parts; ++i) {
    const R t = c * xr[i] + s * yr[i];
    yr[i] = c * yr[i] - s * xr[i];
    xr[i] = t;
  }
}

template <class T>
real_t<T> asum_kernel(index_t n, const T* x) {
  using R = real_t<T>;
  constexpr int lanes = 16;
  const R* __restrict r = reinterpret_cast<const R*>(x);
  const index_t m = n * (is_complex_v<T> ? 2 : 1);
  R acc[lanes];
  for (int l = 0; l < lanes; ++l) acc[l] = R(0);
  index_t i = 0;
  for (; i + lanes <= m; i += lanes)
    for (int l = 0; l < lanes; ++l) acc[l] += std::abs(r[i + l]);
  R tail = 0;
  for (; i < m; ++i) tail += std::abs(r[i]);
  fold_lanes<lanes / 2>(acc);
  return acc[0] + tail;
}

// Blocks of 256 elements: each block's largest value (lane maxima in 32-byte vectors, where
// a comparison skips NaNs; complex magnitudes |re| + |im| formed in both lanes of a pair by
// adding the swapped vector), the first block holding the overall largest remembered, then
// searched for its first index. (A scalar loop of compares and moves: isamax at a tenth of
// OpenBLAS's speed; GCC does not vectorise `v > m ? v : m` on plain floats.)
template <class T>
index_t iamax_kernel(index_t n, const T* x) {
  using R = real_t<T>;
  using C = ComplexLanes<R>;
  using V = typename C::V;
  using M = typename C::Mask;
  constexpr int W = C::W;
  constexpr index_t parts = is_complex_v<T> ? 2 : 1;
  auto mag = [](const T& v) {
    if constexpr (is_complex_v<T>) return R(std::abs(v.real()) + std::abs(v.imag()));
    else return std::abs(v);
  };
  if (n <= 0 || mag(x[0]) != mag(x[0])) return 0;
  const R* r = reinterpret_cast<const R*>(x);
  using E = std::conditional_t<sizeof(R) == 4, int32_t, int64_t>;
  M magnitude_bits;  // every bit but the sign
  for (int l = 0; l < W; ++l) magnitude_bits[l] = std::numeric_limits<E>::max();
  constexpr index_t block = 256;
  R best = R(-1);
  index_t best_block = 0;
  for (index_t b0 = 0; b0 < n; b0 += block) {
    const index_t b1 = std::min(n, b0 + block);
    V top{};
    index_t i = b0 * parts;
    for (; i + W <= b1 * parts; i += W) {
      V a = (V)((M)C::load(r + i) & magnitude_bits);
      if constexpr (is_complex_v<T>) a = a + C::swap(a);
      top = a > top ? a : top;
    }
    R block_top = R(0);
    for (int l = 0; l < W; ++l) block_top = top[l] > block_top ? top[l] : block_top;
    for (index_t k = i / parts; k < b1; ++k) {
      const R v = mag(x[k]);
      block_top = v > block_top ? v : block_top;
    }
    if (block_top > best) best = block_top, best_block = b0;
  }
  for (index_t i = best_block;; ++i)
    if (mag(x[i]) == best) return i;
}

template <class T>
constexpr VecKernels<T> make_kernels() {
  return {&axpy_kernel<T>,  &dot_kernel<T, false>,      &dot_kernel<T, true>,
          &scal_kernel<T>,  &axpy4_kernel<T>,           &axpy_columns4_kernel<T>, &axpy_dot_kernel<T, false>,
          &axpy_dot_kernel<T, true>, &axpy_dot4_kernel<T, false>, &axpy_dot4_kernel<T, true>,
          &dot4_kernel<T, false>,    &dot4_kernel<T, true>,       &invert_triangle_kernel<T>,
          &rot_kernel<T>,            &asum_kernel<T>,             &iamax_kernel<T>};
}

constexpr VecKernelSet make_kernel_set() {
  return {make_kernels<float>(), make_kernels<double>(), make_kernels<c64>(), make_kernels<c128>()};
}

}  // namespace
}  // namespace strata::blas::detail
