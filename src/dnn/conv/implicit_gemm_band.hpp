// Implicit GEMM reading the image in place, one band of input rows per output row — for
// channels-last images with few channels, where gathering the image into packed panels is a
// large share of the time (the RGB first layer of a CNN: each contiguous input run is one
// filter row of 7 taps x 3 channels, and every value packed feeds only 64 output channels).
//
// For each output row the R input rows it reads are copied into a zero-padded band
// (band[r][column][c], the padding made real, so no pixel needs a bounds test; the copy is R
// rows for OW x K x depth multiply-adds). The filter is the kernel's packed A operand (MR
// output channels per panel, depth l = (r, s, c) with c innermost, the image operand's own
// reduction order); a micro-tile of NR output pixels then reads, for filter row r, the run of
// S x C values of each pixel straight from the band:
//
//   B(l = (r, s, c), j) = band[r][(ow0 + j) * stride + s][c]
//                       = b_r[(s C + c) + j * stride C]        (R runs of S C steps)
//
// Channels-last output only (C = Y[k, pixel]); 2-D, undilated along the row. Each output sums
// l = 0, 1, ... into one accumulator over the whole depth (no k blocks), whichever thread
// computes its row, so results do not depend on the thread count.
#pragma once
#include <algorithm>
#include <cstring>

#include "problem.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/tile/conv_operand.hpp"
#include "strata/tile/microkernel.hpp"
#include "strata/tile/workspace.hpp"

namespace strata::dnn::detail {

// Whether the band path serves a forward convolution (and pays): channels-last output and
// input, 2-D, undilated along the row, with short input runs (S x C values: per-run gathering
// dominates below this) and a filter small enough to stay in L2 while every pixel tile of a
// row reads all of it. Depends on the problem only, so the choice is the same for any thread
// count or preparation.
inline bool band_serves(const ConvProblem& p) {
  if (p.op != ConvOp::forward || !p.y_nhwc() || p.xs[1] != 1 || p.in[0] != 1 || p.filter[0] != 1 ||
      p.dilation[2] != 1 || p.filter_spatial() == 1)
    return false;
  const int64_t filter_bytes = p.kg() * p.cg() * p.filter_spatial() * int64_t(sizeof(float));
  const std::size_t l2_bytes = cpu_features().l2_bytes;
  const int64_t l2 = l2_bytes ? int64_t(l2_bytes) : 256 * 1024;
  return p.filter[2] * p.cg() <= 64 && filter_bytes <= l2 / 4;
}

// The R input rows output row (img, oh) reads, as dense zero-padded rows of row_floats values.
static inline void fill_band(const ConvProblem& p, const tile::ConvGeometry& geo, int64_t img, int64_t oh,
                             int64_t row_floats, float* band) {
  const int64_t C = geo.c, cols = row_floats / C;
  const int64_t iw_begin = -p.pad[2];  // input column of band column 0
  // Band columns [lo, hi) lie inside the image.
  const int64_t lo = std::clamp<int64_t>(-iw_begin, 0, cols), hi = std::clamp<int64_t>(p.in[2] - iw_begin, lo, cols);
  for (int64_t r = 0; r < p.filter[1]; ++r) {
    float* dst = band + r * row_floats;
    const int64_t ih = oh * p.stride[1] - p.pad[1] + r * p.dilation[1];
    if (ih < 0 || ih >= p.in[1]) {
      std::fill(dst, dst + row_floats, 0.f);
      continue;
    }
    std::fill(dst, dst + lo * C, 0.f);
    std::fill(dst + hi * C, dst + row_floats, 0.f);
    const float* src = geo.x + img * geo.xs[0] + ih * geo.xs[3];
    if (geo.xs[4] == C) {  // channels contiguous (channels_inner) and pixels packed: one copy
      std::memcpy(dst + lo * C, src + (lo + iw_begin) * C, sizeof(float) * std::size_t((hi - lo) * C));
      continue;
    }
    for (int64_t col = lo; col < hi; ++col)
      std::memcpy(dst + col * C, src + (col + iw_begin) * geo.xs[4], sizeof(float) * std::size_t(C));
  }
}

// One group: filter_panels = the filter as packed MR panels over the whole depth (prepared,
// or packed by the caller); yg = its output channels, pixel stride ldc.
template <class Kernel, class Epilogue>
void run_band(const ConvProblem& p, const tile::ConvGeometry& geo, const float* filter_panels, float* yg, int64_t ldc,
              float alpha, float beta, const Epilogue& epi) {
  constexpr int MR = Kernel::mr, NR = Kernel::nr;
  const int64_t C = geo.c, R = p.filter[1], S = p.filter[2];
  const int64_t OH = p.out[1], OW = p.out[2], sw = p.stride[2];
  const int64_t run = S * C, b_js = sw * C;
  const int64_t row_floats = ((OW - 1) * sw + S) * C;  // one band row: the columns the output row reads
  const int64_t band_floats = R * row_floats + NR * b_js;  // + slack read by a ragged last tile
  const int64_t kg = p.kg(), panels = (kg + MR - 1) / MR, depth = geo.depth();

  parallel_for(p.n * OH, p.threads, [&](int64_t lo, int64_t hi, int) {
    float* band = static_cast<float*>(tile::thread_pack_buffer(1).get(sizeof(float) * std::size_t(band_floats)));
    std::fill(band + R * row_floats, band + band_floats, 0.f);
    alignas(64) float edge[MR * NR];
    for (int64_t q = lo; q < hi; ++q) {
      const int64_t img = q / OH, oh = q % OH;
      fill_band(p, geo, img, oh, row_floats, band);
      for (int64_t ow0 = 0; ow0 < OW; ow0 += NR) {
        const int64_t live = std::min<int64_t>(NR, OW - ow0);
        const float* b = band + ow0 * b_js;
        const int64_t pixel = q * OW + ow0;
        for (int64_t i = 0; i < panels; ++i) {
          const float* a = filter_panels + i * depth * MR;
          tile::ragged_tile<MR, NR>(std::min<int64_t>(MR, kg - i * MR), live, yg + i * MR + pixel * ldc, ldc, beta,
                                    edge, [&](float* c, int64_t ld) {
                                      Kernel::run_pieces(R, run, a, b, row_floats, b_js, c, ld, alpha, beta);
                                    });
        }
        if constexpr (!Epilogue::is_identity) epi(yg + pixel * ldc, ldc, 0, pixel, kg, live);
      }
    }
  });
}

}  // namespace strata::dnn::detail
