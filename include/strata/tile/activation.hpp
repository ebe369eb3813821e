// Elementwise activations as branch-free inline functions, so loops over them vectorise in
// each ISA's kernel file (no libm calls, which would block vectorisation). The scalar forms
// are always inlined: a loop that calls one out of line cannot vectorise, and GCC's inlining
// budget differs between translation units (a copy in libstrata_dnn that called exp_approx
// per element was the one bound at run time for libstrata_blas too: GELU epilogue 2% -> 27%).
//
// Accuracy (f32, checked in tests/tile/test_epilogue.cpp against libm in double):
//   exp_approx  ≤ 3 ulp on [-87, 88]        tanh_approx ≤ 3e-7 absolute
//   erf_approx  ≤ 6e-7 absolute             sigmoid ≤ 3e-7 absolute; SiLU/GELU follow
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

[[gnu::always_inline]] inline float gelu_erf_approx(float x) { return 0.5f * x * (1.0f + erf_approx(x * 0.70710678f)); }
[[gnu::always_inline]] inline float gelu_tanh_approx(float x) {
  return 0.5f * x * (1.0f + tanh_approx(0.79788456f * (x + 0.044715f * x * x * x)));
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

// Applies one activation to n contiguous values; the switch is hoisted so each loop vectorises.
inline void activate_span(Activation a, float* x, int64_t n, float alpha, float beta) {
  switch (a) {
    case Activation::none: return;
    case Activation::relu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : 0.0f;
      return;
    case Activation::leaky_relu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : alpha * x[i];
      return;
    case Activation::gelu_erf:
      for (int64_t i = 0; i < n; ++i) x[i] = gelu_erf_approx(x[i]);
      return;
    case Activation::gelu_tanh:
      for (int64_t i = 0; i < n; ++i) x[i] = gelu_tanh_approx(x[i]);
      return;
    case Activation::silu:
      for (int64_t i = 0; i < n; ++i) x[i] = silu_approx(x[i]);
      return;
    case Activation::sigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = sigmoid_approx(x[i]);
      return;
    case Activation::tanh:
      for (int64_t i = 0; i < n; ++i) x[i] = tanh_approx(x[i]);
      return;
    case Activation::clamp:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] < alpha ? alpha : (x[i] > beta ? beta : x[i]);
      return;
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
inline void activate_span(Activation a, double* x, int64_t n, double alpha, double beta) {
  for (int64_t i = 0; i < n; ++i) x[i] = activate(a, x[i], alpha, beta);
}

STRATA_TILE_NS_END
