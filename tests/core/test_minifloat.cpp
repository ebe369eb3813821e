// Exhaustive checks of the narrow float formats against an independent reference: values are
// rebuilt from the bit fields with ldexp in double, and rounding picks the nearest entry of
// the sorted table of all finite values (ties to the even code) — no bit tricks shared with
// the implementation.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "strata/core/minifloat.hpp"

using namespace strata;

namespace {

struct Format {
  int e, m;
  bool ieee;  // Inf/NaN on the all-ones exponent (false: OCP fn flavour, only S.1111.111 is NaN)
};

// Reference decode in double; NaN for NaN patterns, ±inf for infinities.
double ref_decode(uint32_t code, Format f) {
  const int bias = (1 << (f.e - 1)) - 1;
  const uint32_t sign = (code >> (f.e + f.m)) & 1;
  const uint32_t exp = (code >> f.m) & ((1u << f.e) - 1);
  const uint32_t man = code & ((1u << f.m) - 1);
  double v;
  if (f.ieee && exp == (1u << f.e) - 1) {
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (!f.ieee && exp == (1u << f.e) - 1 && man == (1u << f.m) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(double(man), 1 - bias - f.m);
  } else {
    v = std::ldexp(double(man + (1u << f.m)), int(exp) - bias - f.m);
  }
  return sign ? -v : v;
}

struct Table {
  std::vector<double> values;  // finite non-negative values, ascending
  std::vector<uint32_t> codes;
  double overflow_threshold;   // |x| at or above this rounds past the largest finite value
};

Table build_table(Format f) {
  Table t;
  const uint32_t n = 1u << (f.e + f.m);  // non-negative codes
  for (uint32_t c = 0; c < n; ++c) {
    double v = ref_decode(c, f);
    if (std::isfinite(v)) t.values.push_back(v), t.codes.push_back(c);
  }
  // Codes increase with value for non-negative patterns, so the table is already sorted.
  EXPECT_TRUE(std::is_sorted(t.values.begin(), t.values.end()));
  const double max = t.values.back();
  const int bias = (1 << (f.e - 1)) - 1;
  const int max_exp = f.ieee ? (1 << f.e) - 2 - bias : (1 << f.e) - 1 - bias;
  const double ulp = std::ldexp(1.0, max_exp - f.m);
  t.overflow_threshold = max + ulp / 2;  // the midpoint to the next (unrepresentable) value
  return t;
}

// Reference encode of a finite double (no saturation): nearest, ties to even code.
// Returns the non-negative magnitude code or UINT32_MAX for overflow.
uint32_t ref_encode_magnitude(double a, const Table& t, bool max_is_odd_tie_rule) {
  (void)max_is_odd_tie_rule;
  if (a >= t.overflow_threshold) {
    // Exactly at the midpoint: ties-to-even decides between max (code odd or even) and overflow.
    if (a == t.overflow_threshold && (t.codes.back() & 1u) == 0) return t.codes.back();
    return UINT32_MAX;
  }
  auto it = std::lower_bound(t.values.begin(), t.values.end(), a);
  size_t hi = size_t(it - t.values.begin());
  if (hi == t.values.size()) return t.codes.back();
  if (t.values[hi] == a || hi == 0) return t.codes[hi];
  size_t lo = hi - 1;
  double dlo = a - t.values[lo], dhi = t.values[hi] - a;
  if (dlo < dhi) return t.codes[lo];
  if (dhi < dlo) return t.codes[hi];
  return (t.codes[lo] & 1u) == 0 ? t.codes[lo] : t.codes[hi];
}

template <class T>
void check_format(Format f) {
  const Table t = build_table(f);
  const uint32_t sign_bit = 1u << (f.e + f.m);
  const uint32_t all = 1u << (f.e + f.m + 1);

  // 1. Decode every bit pattern.
  for (uint32_t c = 0; c < all; ++c) {
    double want = ref_decode(c, f);
    float got = T::from_bits(decltype(T::bits)(c)).to_float();
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << c;
    } else {
      EXPECT_EQ(double(got), want) << "code " << c;
      EXPECT_EQ(std::signbit(got), bool(c & sign_bit)) << "code " << c;
    }
  }

  // 2. Encode: every finite value, the midpoints between neighbours and one f32 ulp either side.
  auto check_encode = [&](float x) {
    if (std::isnan(x)) return;
    const double a = std::fabs(double(x));
    const uint32_t sign = std::signbit(x) ? sign_bit : 0u;
    uint32_t mag = std::isinf(x) ? UINT32_MAX : ref_encode_magnitude(a, t, false);
    uint32_t got = T(x).bits;
    uint32_t got_sat = T::from_float_saturate(x).bits;
    if (mag == UINT32_MAX) {
      // Overflow: Inf for IEEE formats, NaN for fn; saturating variant gives the max finite.
      float back = T::from_bits(decltype(T::bits)(got)).to_float();
      if (f.ieee) EXPECT_TRUE(std::isinf(back) && std::signbit(back) == std::signbit(x)) << x;
      else EXPECT_TRUE(std::isnan(back)) << x;
      EXPECT_EQ(got_sat, sign | t.codes.back()) << x;
    } else {
      EXPECT_EQ(got, sign | mag) << "x=" << x;
      EXPECT_EQ(got_sat, sign | mag) << "x=" << x;
    }
  };
  for (size_t i = 0; i < t.values.size(); ++i) {
    float v = float(t.values[i]);
    for (float s : {1.0f, -1.0f}) {
      check_encode(s * v);
      check_encode(s * std::nextafter(v, 0.0f));
      check_encode(s * std::nextafter(v, std::numeric_limits<float>::infinity()));
      double next = i + 1 < t.values.size() ? t.values[i + 1] : t.overflow_threshold * 2 - t.values[i];
      float mid = float((t.values[i] + next) / 2);  // exact in f32 for every format here
      if (double(mid) == (t.values[i] + next) / 2) {
        check_encode(s * mid);
        check_encode(s * std::nextafter(mid, 0.0f));
        check_encode(s * std::nextafter(mid, std::numeric_limits<float>::infinity()));
      }
    }
  }
  // 3. Specials and extremes.
  for (float x : {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                  -std::numeric_limits<float>::denorm_min()}) {
    if (std::isinf(x)) {
      float back = T(x).to_float();
      if (f.ieee) EXPECT_TRUE(std::isinf(back));
      else EXPECT_TRUE(std::isnan(back));
    } else {
      check_encode(x);
    }
  }
  for (float nan : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                    std::bit_cast<float>(0x7f800001u), std::bit_cast<float>(0xff800001u)}) {
    EXPECT_TRUE(std::isnan(T(nan).to_float()));
    EXPECT_TRUE(std::isnan(T::from_float_saturate(nan).to_float()));
  }
  // 4. Random f32 inputs over the whole range against the table.
  std::mt19937 rng(42);
  for (int i = 0; i < 200000; ++i) {
    float x = std::bit_cast<float>(uint32_t(rng()));
    check_encode(x);
  }
}

}  // namespace

TEST(MiniFloat, F16ExhaustiveAgainstReference) { check_format<f16>({5, 10, true}); }
TEST(MiniFloat, Bf16ExhaustiveAgainstReference) { check_format<bf16>({8, 7, true}); }
TEST(MiniFloat, F8E4M3ExhaustiveAgainstReference) { check_format<f8e4m3>({4, 3, false}); }
TEST(MiniFloat, F8E5M2ExhaustiveAgainstReference) { check_format<f8e5m2>({5, 2, true}); }

TEST(MiniFloat, KnownValues) {
  EXPECT_EQ(f16(1.0f).bits, 0x3c00);
  EXPECT_EQ(f16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(f16(65520.0f).bits, 0x7c00);  // midpoint to 2^16 rounds to even → Inf
  EXPECT_EQ(bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(f8e4m3(448.0f).bits, 0x7e);
  EXPECT_EQ(f8e4m3(464.0f).bits, 0x7e);   // tie between 448 (even) and 480 (NaN code) → 448
  EXPECT_EQ(f8e4m3::from_float_saturate(1e9f).bits, 0x7e);
  EXPECT_EQ(f8e5m2(57344.0f).bits, 0x7b);
  EXPECT_EQ(f8e5m2(1e9f).bits, 0x7c);
  EXPECT_EQ(f8e4m3(std::ldexp(1.0f, -9)).bits, 0x01);  // smallest subnormal
}

#if defined(__x86_64__)
#include <immintrin.h>
#include "strata/core/cpu.hpp"
__attribute__((target("f16c"))) static uint16_t hw_f16(float x) {
  return uint16_t(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
}
// A second independent oracle: the CPU's own F16C conversion, over 2^24 strided f32 patterns.
TEST(MiniFloat, F16MatchesF16CHardware) {
  if (!strata::cpu_features().f16c) GTEST_SKIP() << "no F16C";
  for (uint64_t u = 0; u < (1ull << 32); u += 251) {
    float x = std::bit_cast<float>(uint32_t(u));
    uint16_t want = hw_f16(x), got = f16(x).bits;
    if (std::isnan(x)) ASSERT_TRUE((got & 0x7c00) == 0x7c00 && (got & 0x3ff)) << u;
    else ASSERT_EQ(got, want) << "pattern " << u;
  }
}
#endif
