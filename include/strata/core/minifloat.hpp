// Narrow floating-point formats stored as bits: f16 (IEEE binary16), bf16, and the OCP 8-bit
// formats f8e4m3 ("fn": no infinities, one NaN pattern per sign, max 448) and f8e5m2
// (IEEE-like, with infinities). Conversions from f32 round to nearest, ties to even.
//
// Overflow: f16, bf16 and f8e5m2 overflow to infinity; f8e4m3 has no infinity and overflows
// to NaN (as ml_dtypes' float8_e4m3fn does). `from_float_saturate` clamps to the largest
// finite value instead (the quantising epilogues use it). NaN stays NaN (quiet) everywhere.
#pragma once
#include <bit>
#include <cstdint>

namespace strata {

namespace detail {

// A binary format with E exponent bits and M mantissa bits, stored in the low bits of T.
// `ieee_specials`: the all-ones exponent encodes Inf/NaN (true) or only the all-ones pattern
// is NaN and everything else is finite (false, the OCP "fn" flavour).
template <class T, int E, int M, bool ieee_specials>
struct MiniFloatCodec {
  static constexpr int bias = (1 << (E - 1)) - 1;
  static constexpr int shift = 23 - M;
  static constexpr uint32_t sign_bit = 1u << (E + M);
  static constexpr uint32_t exp_all_ones = ((1u << E) - 1) << M;
  static constexpr uint32_t max_finite = ieee_specials ? exp_all_ones - 1 : exp_all_ones | ((1u << M) - 2);
  static constexpr uint32_t nan_code = ieee_specials ? exp_all_ones | (1u << (M - 1)) : exp_all_ones | ((1u << M) - 1);

  static constexpr T encode(float f, bool saturate) noexcept {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (u >> 31) ? sign_bit : 0u;
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return T(sign | nan_code | ((a >> shift) & ((1u << M) - 1)));
    if (a == 0x7f800000u) {
      if (saturate) return T(sign | max_finite);
      return T(sign | (ieee_specials ? exp_all_ones : nan_code));
    }
    const int e32 = int(a >> 23);
    uint32_t code;
    if (e32 >= 128 - bias) {  // the result is normal (or overflows)
      const uint32_t rebased = a - (uint32_t(127 - bias) << 23);
      code = (rebased + ((1u << (shift - 1)) - 1) + ((rebased >> shift) & 1u)) >> shift;
    } else {                  // subnormal or zero result: round m * 2^-s to an integer
      const uint32_t m = (a & 0x7fffffu) | (e32 ? 0x800000u : 0u);
      const int e_in = (e32 ? e32 : 1) - 127;
      const int s = 24 - bias - M - e_in;  // > shift here
      if (s > 25) return T(sign);
      const uint32_t q = m >> s, rem = m & ((1u << s) - 1), half = 1u << (s - 1);
      code = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    }
    if (code > max_finite) {
      if (saturate) return T(sign | max_finite);
      return T(sign | (ieee_specials ? exp_all_ones : nan_code));
    }
    return T(sign | code);
  }

  static constexpr float decode(T bits) noexcept {
    const uint32_t b = bits;
    const uint32_t sign = (b & sign_bit) ? 0x80000000u : 0u;
    const uint32_t exp = (b & exp_all_ones) >> M;
    const uint32_t man = b & ((1u << M) - 1);
    if (ieee_specials && exp == (1u << E) - 1)
      return std::bit_cast<float>(sign | 0x7f800000u | (man << shift) | (man ? 0x400000u : 0u));
    if (!ieee_specials && (b & ~sign_bit) == nan_code) return std::bit_cast<float>(sign | 0x7fc00000u);
    if (exp != 0) return std::bit_cast<float>(sign | ((exp - bias + 127) << 23) | (man << shift));
    if constexpr (bias == 127) {
      return std::bit_cast<float>(sign | (man << shift));  // f32 subnormal, same layout
    } else {
      // man * 2^(1 - bias - M), exact in f32 for every format here.
      constexpr float unit = std::bit_cast<float>(uint32_t(127 + 1 - bias - M) << 23);
      const float v = float(man) * unit;
      return sign ? -v : v;
    }
  }
};

}  // namespace detail

#define STRATA_MINIFLOAT(NAME, STORAGE, E, M, IEEE)                                          \
  struct NAME {                                                                              \
    using codec = detail::MiniFloatCodec<STORAGE, E, M, IEEE>;                               \
    STORAGE bits = 0;                                                                        \
    constexpr NAME() = default;                                                              \
    constexpr explicit NAME(float f) noexcept : bits(codec::encode(f, false)) {}             \
    static constexpr NAME from_bits(STORAGE b) noexcept { NAME r; r.bits = b; return r; }    \
    static constexpr NAME from_float_saturate(float f) noexcept {                            \
      return from_bits(codec::encode(f, true));                                              \
    }                                                                                        \
    constexpr explicit operator float() const noexcept { return codec::decode(bits); }       \
    constexpr float to_float() const noexcept { return codec::decode(bits); }                \
    friend constexpr bool operator==(NAME a, NAME b) noexcept { return a.bits == b.bits; }   \
  };                                                                                         \
  static_assert(sizeof(NAME) == sizeof(STORAGE))

// One macro instead of four copies of the same six-line wrapper.
STRATA_MINIFLOAT(f16, uint16_t, 5, 10, true);
STRATA_MINIFLOAT(bf16, uint16_t, 8, 7, true);
STRATA_MINIFLOAT(f8e4m3, uint8_t, 4, 3, false);
STRATA_MINIFLOAT(f8e5m2, uint8_t, 5, 2, true);
#undef STRATA_MINIFLOAT

}  // namespace strata
