// The vectorisable activation approximations against libm in double, over dense grids.
#include <gtest/gtest.h>

#include <cmath>

#include "strata/tile/activation.hpp"

using namespace strata::tile;

namespace {
template <class F, class G>
double max_abs_error(F approx, G exact, double lo, double hi, int steps) {
  double worst = 0;
  for (int i = 0; i <= steps; ++i) {
    double x = lo + (hi - lo) * i / steps;
    worst = std::max(worst, std::fabs(double(approx(float(x))) - exact(double(float(x)))));
  }
  return worst;
}
}  // namespace

TEST(Activation, ExpIsWithinThreeUlp) {
  for (int i = -87000; i <= 88000; i += 7) {
    float x = float(i) * 1e-3f;
    double want = std::exp(double(x));
    double got = exp_approx(x);
    ASSERT_LE(std::fabs(got - want), 3.0 * std::ldexp(1.0, std::ilogb(want) - 23)) << x;
  }
}

TEST(Activation, ErfTanhSigmoidAccuracy) {
  EXPECT_LT(max_abs_error(erf_approx, [](double x) { return std::erf(x); }, -6, 6, 200000), 6e-7);
  EXPECT_LT(max_abs_error(tanh_approx, [](double x) { return std::tanh(x); }, -10, 10, 200000), 3e-7);
  EXPECT_LT(max_abs_error(sigmoid_approx, [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30, 200000), 3e-7);
  // Relative accuracy near zero, where tanh(x) ~ x.
  for (float x : {1e-6f, 1e-3f, 0.01f, 0.1f, -0.05f}) EXPECT_NEAR(tanh_approx(x) / std::tanh(double(x)), 1.0, 3e-7);
}

TEST(Activation, GeluAndFriendsMatchDoubleReference) {
  for (Activation a : {Activation::relu, Activation::leaky_relu, Activation::gelu_erf, Activation::gelu_tanh,
                       Activation::silu, Activation::sigmoid, Activation::tanh, Activation::clamp}) {
    for (int i = -2000; i <= 2000; ++i) {
      float x = float(i) * 0.005f;
      double want = activate(a, double(x), 0.1, 0.7);
      float got = activate(a, x, 0.1f, 0.7f);
      ASSERT_NEAR(got, want, 1e-6 + 1e-6 * std::fabs(want)) << "activation " << int(a) << " x=" << x;
    }
  }
  // activate_block (the epilogue's vectorised path) agrees with the scalar form.
  float v[37];
  for (int i = 0; i < 37; ++i) v[i] = float(i - 18) * 0.3f;
  float w[37];
  std::copy(v, v + 37, w);
  activate_block(Activation::gelu_erf, w, 37, 37, 1, 0.f, 0.f);
  for (int i = 0; i < 37; ++i) EXPECT_FLOAT_EQ(w[i], activate(Activation::gelu_erf, v[i], 0.f, 0.f));
}
