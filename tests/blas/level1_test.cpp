// Level 1 against direct references: increments +-1, +-3, sizes around the kernels' lane and
// reduction-chunk boundaries, every ISA path; dot is bitwise identical for 1 and 2 threads;
// nrm2 neither overflows nor underflows.
#include <cmath>
#include <cstring>
#include <limits>

#include "blas_test_util.hpp"
#include "strata/blas/level1.hpp"

namespace strata::blastest {
namespace {

using namespace testref;

template <class T>
class Level1 : public ::testing::Test {};
TYPED_TEST_SUITE(Level1, Types);

TYPED_TEST(Level1, AxpyDotAsumIamaxRotAgainstReference) {
  using T = TypeParam;
  for (const Config& cfg : configs()) {
    IsaScope scope(cfg.isa);
    blas::Handle h;
    h.set_num_threads(cfg.threads);
    for (int64_t n : {0, 1, 15, 17, 101, 70000})
      for (int64_t incx : {1, -1, 3, -3})
        for (int64_t incy : {1, -3}) {
          auto x = random_values<T>(size_t(std::max<int64_t>(1, 1 + (n - 1) * std::abs(incx))), 1);
          auto y = random_values<T>(size_t(std::max<int64_t>(1, 1 + (n - 1) * std::abs(incy))), 2);
          auto X = [&](int64_t i) { return widen(x[size_t(vidx<T>(i, n, incx))]); };
          auto Y = [&](const std::vector<T>& v, int64_t i) { return widen(v[size_t(vidx<T>(i, n, incy))]); };
          wide_t<T> dot = 0, dotc = 0;
          long double asum = 0;
          for (int64_t i = 0; i < n; ++i) {
            dot += X(i) * Y(y, i);
            dotc += cj(X(i)) * Y(y, i);
          }
          expect_close(blas::dot<T>(h, n, x.data(), incx, y.data(), incy), dot, double(n), tolerance<T>(n), "dot");
          expect_close(blas::dotc<T>(h, n, x.data(), incx, y.data(), incy), dotc, double(n), tolerance<T>(n), "dotc");
          auto y2 = y;
          blas::axpy<T>(h, n, T(0.5), x.data(), incx, y2.data(), incy);
          for (int64_t i = 0; i < std::min<int64_t>(n, 200); ++i)
            expect_close(y2[size_t(vidx<T>(i, n, incy))], Y(y, i) + wide_t<T>(0.5) * X(i), 1.0, tolerance<T>(1), "axpy");
          if (incx > 0) {
            for (int64_t i = 0; i < n; ++i) asum += std::abs(std::real(X(i))) + std::abs(std::imag(X(i)));
            EXPECT_NEAR(double(blas::asum<T>(h, n, x.data(), incx)), double(asum), tolerance<T>(n) * double(n));
            int64_t best = 0;
            for (int64_t i = 1; i < n; ++i)
              if (blas::cabs1(x[size_t(i * incx)]) > blas::cabs1(x[size_t(best * incx)])) best = i;
            EXPECT_EQ(blas::iamax<T>(h, n, x.data(), incx), n > 0 ? best + 1 : 0);
          } else {
            EXPECT_EQ(blas::asum<T>(h, n, x.data(), incx), 0);  // reference quick return
          }
          auto x3 = x, y3 = y;
          blas::rot<T>(h, n, x3.data(), incx, y3.data(), incy, 0.6, 0.8);
          for (int64_t i = 0; i < std::min<int64_t>(n, 200); ++i) {
            expect_close(x3[size_t(vidx<T>(i, n, incx))], wide_t<T>(0.6) * X(i) + wide_t<T>(0.8) * Y(y, i), 1.0, tolerance<T>(2), "rot x");
            expect_close(y3[size_t(vidx<T>(i, n, incy))], wide_t<T>(0.6) * Y(y, i) - wide_t<T>(0.8) * X(i), 1.0, tolerance<T>(2), "rot y");
          }
        }
  }
}

// iamax as the reference's sequential strict comparison: the first of tied largest values
// (also across the kernel's blocks of 256), NaNs never largest unless x[0] is one, Inf
// largest, all zeros index 1; on every ISA.
TYPED_TEST(Level1, IamaxTakesTheFirstLargestAndSkipsNaNs) {
  using T = TypeParam;
  using R = blas::real_t<T>;
  const R nan = std::numeric_limits<R>::quiet_NaN(), inf = std::numeric_limits<R>::infinity();
  auto reference = [](const std::vector<T>& x) {
    int64_t best = 0;
    for (int64_t i = 1; i < int64_t(x.size()); ++i)
      if (blas::cabs1(x[size_t(i)]) > blas::cabs1(x[size_t(best)])) best = i;
    return best + 1;
  };
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    IsaScope scope(isa);
    blas::Handle h;
    for (int64_t n : {1, 9, 256, 257, 1000})
      for (int c = 0; c < 6; ++c) {
        auto x = random_values<T>(size_t(n), uint32_t(90 + c));
        if (c == 1 && n > 3) x[size_t(n - 2)] = x[size_t(n / 3)] = T(R(5));                    // a tie
        if (c == 2 && n > 3) x[1] = T(nan), x[size_t(n - 1)] = T(nan);                        // NaNs skipped
        if (c == 3) x[0] = T(nan);                                                            // NaN first: 1
        if (c == 4 && n > 3) x[size_t(n - 1)] = T(-inf), x[size_t(n / 2)] = T(nan);          // Inf wins
        if (c == 5) std::fill(x.begin(), x.end(), T(R(0)));                                   // zeros: 1
        EXPECT_EQ(blas::iamax<T>(h, n, x.data(), 1), reference(x)) << "n " << n << " case " << c;
      }
  }
}

TYPED_TEST(Level1, DotIsBitwiseIdenticalForAnyThreadCount) {
  using T = TypeParam;
  const int64_t n = 300001;
  auto x = random_values<T>(size_t(n), 5), y = random_values<T>(size_t(n), 6);
  blas::Handle h1, h2;
  h1.set_num_threads(1);
  h2.set_num_threads(2);
  const T a = blas::dot<T>(h1, n, x.data(), 1, y.data(), 1), b = blas::dot<T>(h2, n, x.data(), 1, y.data(), 1);
  EXPECT_EQ(0, std::memcmp(&a, &b, sizeof(T)));
}

TYPED_TEST(Level1, Nrm2NeitherOverflowsNorUnderflows) {
  using T = TypeParam;
  using R = blas::real_t<T>;
  blas::Handle h;
  for (R scale : {std::numeric_limits<R>::max() / R(8), std::numeric_limits<R>::min() * R(8), R(1)}) {
    std::vector<T> x = {T(3 * scale), T(4 * scale)};
    const R got = blas::nrm2<T>(h, 2, x.data(), 1);
    EXPECT_NEAR(double(got / scale), 5.0, 1e-5) << "scale " << scale;
  }
  std::vector<T> x = {T(3), T(4)};
  EXPECT_NEAR(double(blas::nrm2<T>(h, 2, x.data(), -1)), 5.0, 1e-5);  // negative increments are walked
}

// nrm2 against a long double sum over lengths past the lanes, increments 1, 2 and -1, and
// magnitudes that take each path: ordinary, all tiny (squares underflow), all huge (squares
// overflow), one huge among ordinary ones, and an Inf or a NaN entry.
TYPED_TEST(Level1, Nrm2MatchesAWideSumAtEveryScale) {
  using T = TypeParam;
  using R = blas::real_t<T>;
  using L = std::numeric_limits<R>;
  blas::Handle h;
  for (int64_t n : {1, 7, 37, 1000})
    for (int64_t inc : {1, 2, -1})
      for (int kind = 0; kind < 6; ++kind) {
        auto logical = random_values<T>(size_t(n), uint32_t(80 + kind));
        const R scale = kind == 1 ? L::min() * R(4) : kind == 2 ? L::max() / R(4 * n) : R(1);
        for (auto& v : logical) v *= scale;
        if (kind == 3) logical[size_t(n / 2)] = T(L::max() / R(2));
        if (kind == 4) logical[size_t(n / 2)] = T(L::infinity());
        if (kind == 5) logical[size_t(n / 2)] = T(L::quiet_NaN());
        std::vector<T> x(size_t(n * std::abs(inc)), T(R(7)));
        for (int64_t i = 0; i < n; ++i) x[size_t(inc > 0 ? i * inc : (n - 1 - i) * -inc)] = logical[size_t(i)];
        long double sum = 0;
        for (const T& v : logical) {
          const long double a = std::abs(std::complex<long double>(std::real(v), std::imag(v)));
          sum += a * a;
        }
        const R got = blas::nrm2<T>(h, n, x.data(), inc);
        const std::string what = "n " + std::to_string(n) + " inc " + std::to_string(inc) + " kind " + std::to_string(kind);
        if (kind == 5) {
          EXPECT_TRUE(std::isnan(got)) << what;
        } else if (kind == 4) {
          EXPECT_EQ(got, L::infinity()) << what;
        } else {
          const long double want = std::sqrt(sum);
          EXPECT_LE(std::abs((long double)got - want), want * 8 * L::epsilon() * std::sqrt(double(n))) << what;
        }
      }
}

TEST(Level1Rotations, RotgZeroesTheSecondComponent) {
  blas::Handle h;
  double a = 3, b = 4, c, s;
  blas::rotg<double>(h, &a, &b, &c, &s);
  EXPECT_DOUBLE_EQ(a, 5);
  EXPECT_DOUBLE_EQ(c, 0.6);
  EXPECT_DOUBLE_EQ(s, 0.8);
  std::complex<double> ca(3, 0), cb(0, 4), cs;
  double cc;
  blas::rotg<std::complex<double>>(h, &ca, &cb, &cc, &cs);
  EXPECT_NEAR(std::abs(cc * std::complex<double>(3, 0) + cs * std::complex<double>(0, 4) - ca), 0.0, 1e-14);
  EXPECT_NEAR(std::abs(-std::conj(cs) * std::complex<double>(3, 0) + cc * std::complex<double>(0, 4)), 0.0, 1e-14);
}

}  // namespace
}  // namespace strata::blastest
