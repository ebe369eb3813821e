// Element access to caller tensors of any supported dtype and strides, in f32. Used for the
// f16/bf16/i8 staging copies, the bias/activation epilogue and bias-add; the algorithms
// themselves only ever see f32.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "strata/core/dtype.hpp"
#include "strata/core/minifloat.hpp"

namespace strata::dnn::detail {

inline float load_f32(DType t, const void* base, int64_t i) {
  switch (t) {
    case DType::f16: return static_cast<const f16*>(base)[i].to_float();
    case DType::bf16: return static_cast<const bf16*>(base)[i].to_float();
    case DType::i8: return float(static_cast<const int8_t*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

// i8 rounds to nearest (ties to even) and saturates, as a quantised output must.
inline void store_f32(DType t, void* base, int64_t i, float v) {
  switch (t) {
    case DType::f16: static_cast<f16*>(base)[i] = f16(v); break;
    case DType::bf16: static_cast<bf16*>(base)[i] = bf16(v); break;
    case DType::i8: {
      float r = std::isnan(v) ? 0.f : std::nearbyint(v);
      r = r < -128.f ? -128.f : r > 127.f ? 127.f : r;
      static_cast<int8_t*>(base)[i] = int8_t(r);
      break;
    }
    default: static_cast<float*>(base)[i] = v; break;
  }
}

// bf16 <-> f32 for n consecutive elements (convert.cpp): exact one way, rounded as bf16(float)
// rounds the other (nearest even, quiet NaNs keeping their top payload bits).
void bf16_to_f32(const uint16_t* src, float* dst, int64_t n);
void f32_to_bf16(const float* src, uint16_t* dst, int64_t n);

// n consecutive elements of type t at src into f32 (exact), and back (rounded as store_f32 rounds).
inline void convert_to_f32(DType t, const void* src, float* dst, int64_t n) {
  if (t == DType::bf16) return bf16_to_f32(static_cast<const uint16_t*>(src), dst, n);
  for (int64_t i = 0; i < n; ++i) dst[i] = load_f32(t, src, i);
}
inline void convert_from_f32(DType t, const float* src, void* dst, int64_t n) {
  if (t == DType::bf16) return f32_to_bf16(src, static_cast<uint16_t*>(dst), n);
  for (int64_t i = 0; i < n; ++i) store_f32(t, dst, i, src[i]);
}

// Calls f(offset, channel) for every element of a tensor with `dims`/`strides` (N, C, ...),
// in logical row-major order, with the element offset under `strides`.
template <class F>
void for_each_element(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, F&& f) {
  const std::size_t r = dims.size();
  for (int64_t d : dims)
    if (d == 0) return;
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  while (true) {
    f(off, idx[1]);
    std::size_t i = r;
    while (i-- > 0) {
      if (++idx[i] < dims[i]) {
        off += strides[i];
        break;
      }
      off -= (dims[i] - 1) * strides[i];
      idx[i] = 0;
      if (i == 0) return;
    }
  }
}

}  // namespace strata::dnn::detail
