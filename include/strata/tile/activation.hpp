// Elementwise activations as branch-free inline functions, so loops over them vectorise in
// each ISA's kernel file (no libm calls, which would block vectorisation). The scalar forms
// are always inlined: a loop that calls one out of line cannot vectorise, and GCC's inlining
// budget differs between translation units (a copy in libstrata_dnn that called exp_approx
// per element was the one bound at run time for libstrata_blas too: GELU epilogue 2% -> 27%).
//
// Accuracy (f32, checked in tests/tile/test_activation.cpp against libm in double):
//   exp_approx  ≤ 3 ulp on [-87, 88]        tanh_approx ≤ 3e-7 absolute
//   erf_approx  ≤ 6e-7 absolute             sigmoid ≤ 3e-7 absolute; SiLU follows
//   gelu_erf_approx, gelu_tanh_approx ≤ 1e-6 + 1e-6 |f(x)| (their own forms, see below)
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "strata/tile/isa_namespace.hpp"

namespace strata::tile {
// Plain data shared by every ISA's code (outside the ISA namespaces).
enum class Activation : uint8_t { none, relu, leaky_relu, gelu_erf, gelu_tanh, silu, sigmoid, tanh, clamp };
}  // namespace strata::tile

STRATA_TILE_NS_BEGIN

[[gnu::always_inline]] inline float exp_approx(float x) {
  // exp(x) = 2^n * exp(r), x = n ln2 + r, |r| ≤ ln2/2; degree-6 polynomial for exp(r).
  x = x > 88.72283f ? 88.72283f : x;
  x = x < -87.33654f ? -87.33654f : x;
  // Round to nearest with the 1.5 * 2^23 trick: plain arithmetic, so the loop vectorises
  // (floorf stays a library call under strict floating point).
  const float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;  // two-part ln2 for accuracy
  float p = 1.3888889e-3f;
  p = p * r + 8.3333333e-3f;
  p = p * r + 4.1666667e-2f;
  p = p * r + 1.6666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t bits = (int32_t(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

[[gnu::always_inline]] inline float sigmoid_approx(float x) { return 1.0f / (1.0f + exp_approx(-x)); }

// Branch-free forms (fabs/copysign/selects) so the loops below if-convert and vectorise.
[[gnu::always_inline]] inline float tanh_approx(float x) {
  const float ax = __builtin_fabsf(x);
  // Small |x|: odd Taylor polynomial avoids the cancellation in 1 - 2/(e^2x + 1).
  const float x2 = x * x;
  const float small = x * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * -0.0539682540f)));
  const float big = __builtin_copysignf(1.0f - 2.0f / (exp_approx(2.0f * ax) + 1.0f), x);
  return ax < 0.125f ? small : big;
}

[[gnu::always_inline]] inline float erf_approx(float x) {
  // Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7 in exact arithmetic), odd extension.
  const float ax = __builtin_fabsf(x);
  const float t = 1.0f / (1.0f + 0.3275911f * ax);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  return __builtin_copysignf(1.0f - p * t * exp_approx(-ax * ax), x);
}

// GELU is the epilogue's most common activation, so it gets its own cheaper forms (half the
// operations of going through erf_approx/tanh_approx: no exp, no fabs/copysign, one division).
//
// erf form: x/2 (1 + erf(x/sqrt 2)), with erf(x/sqrt 2) ~ x P(x^2) / Q(x^2) on |x| <= 5.3, P and
// Q of degree 5: a near-minimax rational fit (3e-8 in exact arithmetic) whose f32 coefficients
// were then nudged by a few ulp to minimise the error of the f32 evaluation, with and without
// FMA contraction. Below -5.3 GELU is 0 to within 3.1e-7 and is returned as 0 (the rational
// form is not exactly -1 there, and x/2 (1 + e) would grow with |x|); above 5.3 it is x to
// within 6e-8 relative. Error against libm in double: <= 0.8e-6 + 0.8e-6 |gelu(x)|.
[[gnu::always_inline]] inline float gelu_erf_approx(float x) {
  constexpr float kClamp = 5.3f;
  // Written as min/max (one instruction each); a NaN x becomes a finite xc here but still
  // propagates through `half` below.
  float xc = x < kClamp ? x : kClamp;
  xc = xc > -kClamp ? xc : -kClamp;
  const float t = xc * xc;
  float p = 4.810069498e-08f;
  p = p * t + 1.275815430e-05f;
  p = p * t + 3.206700203e-04f;
  p = p * t + 9.255993180e-03f;
  p = p * t + 6.587164104e-02f;
  p = p * t + 7.978845239e-01f;
  float q = 1.237170522e-06f;
  q = q * t + 7.135255873e-05f;
  q = q * t + 1.836574171e-03f;
  q = q * t + 2.813884988e-02f;
  q = q * t + 2.492240816e-01f;
  q = q * t + 1.0f;
  const float e = xc * p / q;
  const float half = 0.5f * x;
  const float g = half * e + half;
  return x < -kClamp ? 0.0f : g;  // NaN passes through g
}
// tanh form: x/2 (1 + tanh(u)) = x sigmoid(2u) = x / (1 + exp(-2u)), u = sqrt(2/pi)(x + 0.044715 x^3);
// no cancellation near 0 (the quotient is ~x/2), and exp_approx's clamp makes the far left 0.
[[gnu::always_inline]] inline float gelu_tanh_approx(float x) {
  const float u2 = 1.59576912f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp_approx(-u2));
}
[[gnu::always_inline]] inline float silu_approx(float x) { return x * sigmoid_approx(x); }

// f(x) for one activation; `alpha`/`beta` are the leaky slope, or the clamp bounds.
inline float activate(Activation a, float x, float alpha, float beta) {
  switch (a) {
    case Activation::none: return x;
    case Activation::relu: return x > 0 ? x : 0.0f;
    case Activation::leaky_relu: return x > 0 ? x : alpha * x;
    case Activation::gelu_erf: return gelu_erf_approx(x);
    case Activation::gelu_tanh: return gelu_tanh_approx(x);
    case Activation::silu: return silu_approx(x);
    case Activation::sigmoid: return sigmoid_approx(x);
    case Activation::tanh: return tanh_approx(x);
    case Activation::clamp: return x < alpha ? alpha : (x > beta ? beta : x);
  }
  return x;
}

// Applies one activation to a column-major block (rows x cols, leading dimension ld): the
// epilogue calls it once per tile, so the switch and the call are paid per tile, not per column.
// Each case is one loop over a column, which vectorises.
template <class F>
[[gnu::always_inline]] inline void map_columns(float* x, int64_t ld, int64_t rows, int64_t cols, F f) {
  for (int64_t j = 0; j < cols; ++j) {
    float* xj = x + j * ld;
    for (int64_t i = 0; i < rows; ++i) xj[i] = f(xj[i]);
  }
}

inline void activate_block(Activation a, float* x, int64_t ld, int64_t rows, int64_t cols, float alpha, float beta) {
  switch (a) {
    case Activation::none: return;
    case Activation::relu: return map_columns(x, ld, rows, cols, [](float v) { return v > 0 ? v : 0.0f; });
    case Activation::leaky_relu:
      return map_columns(x, ld, rows, cols, [alpha](float v) { return v > 0 ? v : alpha * v; });
    case Activation::gelu_erf: return map_columns(x, ld, rows, cols, [](float v) { return gelu_erf_approx(v); });
    case Activation::gelu_tanh: return map_columns(x, ld, rows, cols, [](float v) { return gelu_tanh_approx(v); });
    case Activation::silu: return map_columns(x, ld, rows, cols, [](float v) { return silu_approx(v); });
    case Activation::sigmoid: return map_columns(x, ld, rows, cols, [](float v) { return sigmoid_approx(v); });
    case Activation::tanh: return map_columns(x, ld, rows, cols, [](float v) { return tanh_approx(v); });
    case Activation::clamp:
      return map_columns(x, ld, rows, cols,
                         [alpha, beta](float v) { return v < alpha ? alpha : (v > beta ? beta : v); });
  }
}

// Double precision: libm quality is affordable and expected; no approximation.
inline double activate(Activation a, double x, double alpha, double beta) {
  switch (a) {
    case Activation::none: return x;
    case Activation::relu: return x > 0 ? x : 0.0;
    case Activation::leaky_relu: return x > 0 ? x : alpha * x;
    case Activation::gelu_erf: return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752));
    case Activation::gelu_tanh: return 0.5 * x * (1.0 + std::tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    case Activation::silu: return x / (1.0 + std::exp(-x));
    case Activation::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Activation::tanh: return std::tanh(x);
    case Activation::clamp: return x < alpha ? alpha : (x > beta ? beta : x);
  }
  return x;
}
inline void activate_block(Activation a, double* x, int64_t ld, int64_t rows, int64_t cols, double alpha, double beta) {
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) x[i + j * ld] = activate(a, x[i + j * ld], alpha, beta);
}

STRATA_TILE_NS_END
