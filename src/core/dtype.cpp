#include "strata/core/dtype.hpp"

namespace strata {

std::optional<DType> parse_dtype(std::string_view name) {
  struct Alias { std::string_view name; DType type; };
  static constexpr Alias aliases[] = {
      {"float64", DType::f64}, {"double", DType::f64}, {"d", DType::f64},
      {"float32", DType::f32}, {"float", DType::f32}, {"s", DType::f32},
      {"float16", DType::f16}, {"half", DType::f16}, {"bfloat16", DType::bf16},
      {"e4m3", DType::f8e4m3}, {"e5m2", DType::f8e5m2},
      {"s8", DType::i8}, {"int8", DType::i8}, {"uint8", DType::u8},
      {"s32", DType::i32}, {"int32", DType::i32},
      {"complex64", DType::c64}, {"c", DType::c64}, {"complex128", DType::c128}, {"z", DType::c128}};
  for (DType t : all_dtypes)
    if (dtype_name(t) == name) return t;
  for (const Alias& a : aliases)
    if (a.name == name) return a.type;
  return std::nullopt;
}

}  // namespace strata
