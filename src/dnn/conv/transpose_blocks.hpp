// y[k * ldc + w] = alpha * src[w * ld + k] + beta * y[k * ldc + w] for k < kg, w < width
// (beta == 0 never reads y): a matrix transposed between two buffers, whole 8 x 8 blocks in
// registers (tile::transpose_8x8; a scalar strided loop had taken a sixth of conv1's time when
// its NCHW output rows were transposed that way). Used where implicit GEMM meets NCHW tensors
// (output tiles into NCHW planes, NCHW input planes into channels-last copies of an image) and
// for Winograd's staging of NCHW tensors both ways.
// Static (both functions): this header is compiled once per ISA, and the copy kept must be
// this build's.
#pragma once
#include <algorithm>
#include <cstdint>

#include "strata/core/thread_pool.hpp"
#include "strata/tile/transpose.hpp"

namespace strata::dnn::detail {

static inline void transpose_blocks(const float* __restrict src, int64_t ld, int64_t kg, int64_t width,
                                    float* __restrict y, int64_t ldc, float alpha, float beta) {
  using tile::Floats8;
  const int64_t kfull = kg / 8 * 8, wfull = width / 8 * 8;
  auto block = [&](int64_t k0, int64_t w0) __attribute__((always_inline)) {
    tile::transpose_8x8(src + w0 * ld + k0, ld, [&](int q, Floats8 v) __attribute__((always_inline)) {
      Floats8* d = reinterpret_cast<Floats8*>(y + (k0 + q) * ldc + w0);
      if (alpha != 1.f) v = alpha * v;
      *d = beta == 0.f ? v : v + beta * *d;
    });
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

// dst (pixels x ch, channels contiguous, for each of n images) = the ch pixel planes of each
// image at src (plane stride cs, image stride ns), 16 planes per step among the threads: 16
// sequential read streams and whole cache lines of dst per pass (one image row at a time over
// all planes was too many streams to prefetch). `transpose` is transpose_blocks or an ISA's
// pointer to it (Winograd's kernel set).
template <class Transpose>
static void planes_to_channels_last(const float* src, int64_t ns, int64_t cs, int64_t n, int64_t ch, int64_t pixels,
                                    float* dst, int threads, Transpose&& transpose) {
  const int64_t blocks = (ch + 15) / 16;
  parallel_for(n * blocks, threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t img = b / blocks, c0 = b % blocks * 16;
      transpose(src + img * ns + c0 * cs, cs, pixels, std::min<int64_t>(16, ch - c0), dst + img * pixels * ch + c0, ch,
                1.f, 0.f);
    }
  });
}

}  // namespace strata::dnn::detail
