// Packing policies: copy a block of op(A) or op(B) into the micro-panel order the microkernel
// streams, padding the ragged edge with zeros so the kernel never branches on size.
//
//   A block (mc x kc) → ceil(mc/MR) panels; panel r holds, for each p, MR rows r*MR..r*MR+MR-1
//   B block (kc x nc) → ceil(nc/NR) panels; panel s holds, for each p, NR columns
//
// Both operands are packed by one routine over a "panel-major" view: for A the panel dimension
// is rows, for B it is columns (pack_b packs the transposed view). The loop order follows the
// source's contiguous direction, so each source line and page is touched once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "strata/core/minifloat.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/transpose.hpp"


STRATA_TILE_NS_BEGIN


// Element conversion while packing (mixed-precision GEMM: narrow inputs, f32 compute).
// bf16 → f32 is a 16-bit shift for every pattern (NaN, Inf, subnormals included), which
// vectorises; f16 goes through the exact bit-level decoder.
template <class T, class S>
inline T widen(S v) {
  if constexpr (std::is_same_v<S, bf16>) {
    const uint32_t bits = uint32_t(v.bits) << 16;
    float f;
    __builtin_memcpy(&f, &bits, sizeof f);
    return T(f);
  } else if constexpr (std::is_same_v<S, f16>) {
    return T(v.to_float());
  } else {
    return T(v);
  }
}

inline constexpr int64_t kPackAhead = 8;  // columns a panel pack prefetches ahead

// Packs `len` x kc of x (x(i, p): i along the panel dimension) into panels of width W.
template <int W, class T, class S>
void pack_panels(int64_t len, int64_t kc, MatrixView<S> x, T* __restrict dst) {
  const int64_t panels = (len + W - 1) / W;
  if (x.rs == 1) {
    // The panel dimension is contiguous: walk p outermost, copying a whole column segment
    // (all panels) per p — one streaming read per p.
    const int64_t lines = (len * int64_t(sizeof(S)) + 63) / 64;
    for (int64_t p = 0; p < kc; ++p) {
      const S* src = x.data + p * x.cs;
      // Each column segment is a few lines on a page of its own (a short stream the hardware
      // prefetcher barely starts on): fetch all of the segment a few columns ahead.
      if (p + kPackAhead < kc)
        for (int64_t l = 0; l < lines; ++l)
          __builtin_prefetch(reinterpret_cast<const char*>(src + kPackAhead * x.cs) + 64 * l);
      for (int64_t r = 0; r < panels; ++r) {
        T* d = dst + r * W * kc + p * W;
        const int64_t w = std::min<int64_t>(W, len - r * W);
        if (w == W) {
          for (int i = 0; i < W; ++i) d[i] = widen<T>(src[r * W + i]);
        } else {
          for (int64_t i = 0; i < W; ++i) d[i] = i < w ? widen<T>(src[r * W + i]) : T(0);
        }
      }
    }
    return;
  }
  // The k dimension is contiguous (or neither is): walk each source line along p.
  for (int64_t r = 0; r < panels; ++r) {
    const int64_t w = std::min<int64_t>(W, len - r * W);
    T* d = dst + r * W * kc;
#if defined(__AVX2__)
    if constexpr (std::is_same_v<T, float> && std::is_same_v<S, float> && W % 8 == 0) {
      // Full f32 panels with contiguous k: 8 x 8 register transposes instead of W scattered
      // stores per element row (the filter operand of channels-last convolutions, A^T).
      if (x.cs == 1 && w == W) {
        const float* base = x.data + r * W * x.rs;
        int64_t p = 0;
        for (; p + 8 <= kc; p += 8)
          for (int i0 = 0; i0 < W; i0 += 8) transpose_8x8(base + i0 * x.rs + p, x.rs, d + p * W + i0, W);
        for (; p < kc; ++p)
          for (int i = 0; i < W; ++i) d[p * W + i] = base[i * x.rs + p];
        continue;
      }
    }
#endif
    for (int64_t i = 0; i < W; ++i) {
      if (i < w) {
        const S* src = x.data + (r * W + i) * x.rs;
        if (x.cs == 1 && r + 1 < panels)  // fetch the same line of the next panel meanwhile
          for (int64_t p = 0; p < kc; p += int64_t(64 / sizeof(T))) __builtin_prefetch(src + W * x.rs + p);
        for (int64_t p = 0; p < kc; ++p) d[p * W + i] = widen<T>(src[p * x.cs]);
      } else {
        for (int64_t p = 0; p < kc; ++p) d[p * W + i] = T(0);
      }
    }
  }
}

template <int MR, class T, class S>
void pack_a(int64_t mc, int64_t kc, MatrixView<S> a, T* __restrict dst) {
  pack_panels<MR>(mc, kc, a, dst);
}

template <int NR, class T, class S>
void pack_b(int64_t kc, int64_t nc, MatrixView<S> b, T* __restrict dst) {
  pack_panels<NR>(nc, kc, b.transposed(), dst);
}

STRATA_TILE_NS_END
