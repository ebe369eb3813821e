// The element types strata computes with, as a runtime enum with traits.
#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "strata/core/minifloat.hpp"

namespace strata {

enum class DType : uint8_t { f64, f32, f16, bf16, f8e4m3, f8e5m2, i8, u8, i32, c64, c128 };

inline constexpr DType all_dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16,
                                       DType::f8e4m3, DType::f8e5m2, DType::i8, DType::u8,
                                       DType::i32, DType::c64, DType::c128};

struct DTypeInfo {
  std::string_view name;
  std::size_t size;  // bytes per element
  bool is_floating;  // real or complex floating point
  bool is_complex;
  bool is_integer;
  bool is_signed;
};

constexpr DTypeInfo dtype_info(DType t) {
  switch (t) {
    case DType::f64: return {"f64", 8, true, false, false, true};
    case DType::f32: return {"f32", 4, true, false, false, true};
    case DType::f16: return {"f16", 2, true, false, false, true};
    case DType::bf16: return {"bf16", 2, true, false, false, true};
    case DType::f8e4m3: return {"f8e4m3", 1, true, false, false, true};
    case DType::f8e5m2: return {"f8e5m2", 1, true, false, false, true};
    case DType::i8: return {"i8", 1, false, false, true, true};
    case DType::u8: return {"u8", 1, false, false, true, false};
    case DType::i32: return {"i32", 4, false, false, true, true};
    case DType::c64: return {"c64", 8, true, true, false, true};
    case DType::c128: return {"c128", 16, true, true, false, true};
  }
  return {"?", 0, false, false, false, false};
}
constexpr std::size_t dtype_size(DType t) { return dtype_info(t).size; }
constexpr std::string_view dtype_name(DType t) { return dtype_info(t).name; }

// "f32", "float32", "s8"... → DType; nullopt for an unknown name.
std::optional<DType> parse_dtype(std::string_view name);

// Compile-time map from C++ element types to DType.
template <class T> struct dtype_of;
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<f16> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bf16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<f8e4m3> { static constexpr DType value = DType::f8e4m3; };
template <> struct dtype_of<f8e5m2> { static constexpr DType value = DType::f8e5m2; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::i8; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::u8; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::complex<float>> { static constexpr DType value = DType::c64; };
template <> struct dtype_of<std::complex<double>> { static constexpr DType value = DType::c128; };
template <class T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace strata
