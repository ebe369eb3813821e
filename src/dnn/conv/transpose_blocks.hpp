// y[k * ldc + w] = alpha * src[w * ld + k] + beta * y[k * ldc + w] for k < kg, w < width (beta
// == 0 never reads y): a matrix transposed between two buffers. Whole 8 x 8 blocks go through registers (GCC vector extensions: shuffles
// on whichever vectors this ISA's build has); a scalar strided loop had taken a sixth of conv1's
// time when its NCHW output rows were transposed that way. Used where implicit GEMM meets NCHW
// tensors: output tiles (channels contiguous) into NCHW planes, NCHW input planes into
// channels-last copies of an image, and Winograd's staging of NCHW tensors both ways.
// Static: this header is compiled once per ISA, and the copy kept must be this build's.
#pragma once
#include <cstdint>

namespace strata::dnn::detail {

static inline void transpose_blocks(const float* __restrict src, int64_t ld, int64_t kg, int64_t width,
                                    float* __restrict y, int64_t ldc, float alpha, float beta) {
  typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));  // unaligned, aliasing floats
  typedef int i8 __attribute__((vector_size(32)));
  const int64_t kfull = kg / 8 * 8, wfull = width / 8 * 8;
  auto put = [&](float* dst, v8 v) __attribute__((always_inline)) {
    v8* d = reinterpret_cast<v8*>(dst);
    if (alpha != 1.f) v = alpha * v;
    *d = beta == 0.f ? v : v + beta * *d;
  };
  auto block = [&](int64_t k0, int64_t w0) __attribute__((always_inline)) {
    v8 r[8];  // r[w]: rows k0..k0+7 of source column w0 + w
#pragma GCC unroll 8
    for (int w = 0; w < 8; ++w) r[w] = *reinterpret_cast<const v8*>(src + (w0 + w) * ld + k0);
    // Three rounds: interleave pairs of rows, then pairs of pairs, then 128-bit halves.
    v8 a[8], b[8];
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {
      a[i] = __builtin_shuffle(r[i], r[i + 1], i8{0, 8, 1, 9, 4, 12, 5, 13});
      a[i + 1] = __builtin_shuffle(r[i], r[i + 1], i8{2, 10, 3, 11, 6, 14, 7, 15});
    }
#pragma GCC unroll 2
    for (int i = 0; i < 8; i += 4)
#pragma GCC unroll 2
      for (int j = 0; j < 2; ++j) {
        b[i + j] = __builtin_shuffle(a[i + j], a[i + j + 2], i8{0, 1, 8, 9, 4, 5, 12, 13});
        b[i + j + 2] = __builtin_shuffle(a[i + j], a[i + j + 2], i8{2, 3, 10, 11, 6, 7, 14, 15});
      }
    // b[0..3]: rows {0,4},{2,6},{1,5},{3,7} of columns 0-3 (low half: first, high: second);
    // b[4..7] the same for columns 4-7.
    static constexpr int order[4] = {0, 2, 1, 3};
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      put(y + (k0 + q) * ldc + w0, __builtin_shuffle(b[order[q]], b[order[q] + 4], i8{0, 1, 2, 3, 8, 9, 10, 11}));
      put(y + (k0 + q + 4) * ldc + w0,
          __builtin_shuffle(b[order[q]], b[order[q] + 4], i8{4, 5, 6, 7, 12, 13, 14, 15}));
    }
  };
  // Source rows far apart (an NCHW tensor's planes) and many of them: 8 at a time, walked to
  // their end (8 streams). Otherwise all blocks of one k step in turn (output tiles; a 16-row
  // strip of planes, whose copy then gets whole cache lines in one pass).
  if (ld > ldc && width > 16) {
    for (int64_t w0 = 0; w0 < wfull; w0 += 8)
      for (int64_t k0 = 0; k0 < kfull; k0 += 8) block(k0, w0);
  } else {
    for (int64_t k0 = 0; k0 < kfull; k0 += 8)
      for (int64_t w0 = 0; w0 < wfull; w0 += 8) block(k0, w0);
  }
  // The ragged right and bottom edges, element by element.
  auto one = [&](int64_t k, int64_t w) {
    const float v = alpha * src[w * ld + k];
    float& out = y[k * ldc + w];
    out = beta == 0.f ? v : v + beta * out;
  };
  for (int64_t k = 0; k < kfull; ++k)
    for (int64_t w = wfull; w < width; ++w) one(k, w);
  for (int64_t k = kfull; k < kg; ++k)
    for (int64_t w = 0; w < width; ++w) one(k, w);
}

}  // namespace strata::dnn::detail
