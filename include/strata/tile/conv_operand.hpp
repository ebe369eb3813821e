// Convolution as implicit GEMM: the two GEMM operands of a forward convolution read straight
// from the tensors, so no im2col buffer exists. The reduction index l runs over (c, t, r, s)
// — channel-innermost when the input has contiguous channels (NHWC), tap-innermost otherwise —
// and both operands decompose it the same way.
//
//   ImageOperand:  rows = output pixels (n, od, oh, ow) flattened, depth l; zero outside padding
//   FilterOperand: rows = output channels of one group, depth l
#pragma once
#include <array>
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

namespace strata::tile {

// Plain data describing one group of a convolution (element strides, 3-D: unused dims are 1).
struct ConvGeometry {
  int64_t n = 1, c = 1;                  // batch, input channels of this group
  std::array<int64_t, 3> in{1, 1, 1};    // D H W
  std::array<int64_t, 3> filter{1, 1, 1};
  std::array<int64_t, 3> out{1, 1, 1};
  std::array<int64_t, 3> pad{}, stride{1, 1, 1}, dilation{1, 1, 1};
  const float* x = nullptr;              // first channel of this group
  std::array<int64_t, 5> xs{};           // n c d h w
  const float* w = nullptr;              // first filter of this group
  std::array<int64_t, 5> ws{};           // k c t r s (may be negative: flipped views)
  bool channels_inner = false;           // l = ((t R + r) S + s) C + c  (else ((c T + t) R + r) S + s)

  int64_t pixels_per_image() const { return out[0] * out[1] * out[2]; }
  int64_t depth() const { return c * filter[0] * filter[1] * filter[2]; }
};

}  // namespace strata::tile

STRATA_TILE_NS_BEGIN

// Walks l = p0, p0+1, ... as (c, t, r, s) without divisions in the loop.
struct ReductionCursor {
  const ConvGeometry* g;
  int64_t c, t, r, s;
  ReductionCursor(const ConvGeometry& geo, int64_t l) : g(&geo) {
    const int64_t T = geo.filter[0], R = geo.filter[1], S = geo.filter[2], C = geo.c;
    if (geo.channels_inner) {
      c = l % C, l /= C, s = l % S, l /= S, r = l % R, t = l / R;
    } else {
      s = l % S, l /= S, r = l % R, l /= R, t = l % T, c = l / T;
    }
  }
  void next() {
    const int64_t T = g->filter[0], R = g->filter[1], S = g->filter[2], C = g->c;
    if (g->channels_inner) {
      if (++c < C) return;
      c = 0;
      if (++s < S) return;
      s = 0;
      if (++r < R) return;
      r = 0, ++t;
    } else {
      if (++s < S) return;
      s = 0;
      if (++r < R) return;
      r = 0;
      if (++t < T) return;
      t = 0, ++c;
    }
  }
};

struct ImageOperand {
  using value_type = float;
  static constexpr bool has_view = false;
  const ConvGeometry* g;
  int64_t first = 0;  // pixel index of row 0

  ImageOperand shifted(int64_t i0) const { return {g, first + i0}; }

  template <int W, class T>
  void pack(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    const ConvGeometry& geo = *g;
    const int64_t P = geo.pixels_per_image(), OH = geo.out[1], OW = geo.out[2];
    for (int64_t r0 = 0; r0 < len; r0 += W) {
      // Per pixel of the panel: image base and the input coordinate of tap (0, 0, 0).
      int64_t base[W], id0[W], ih0[W], iw0[W];
      bool live[W];
      for (int i = 0; i < W; ++i) {
        const int64_t pix = first + i0 + r0 + i;
        live[i] = r0 + i < len;
        const int64_t q = live[i] ? pix : 0, img = q / P, rem = q % P;
        const int64_t od = rem / (OH * OW), oh = (rem / OW) % OH, ow = rem % OW;
        base[i] = img * geo.xs[0];
        id0[i] = od * geo.stride[0] - geo.pad[0];
        ih0[i] = oh * geo.stride[1] - geo.pad[1];
        iw0[i] = ow * geo.stride[2] - geo.pad[2];
      }
      ReductionCursor cur(geo, p0);
      for (int64_t p = 0; p < kc; ++p, cur.next()) {
        const float* xc = geo.x + cur.c * geo.xs[1];
        const int64_t dt = cur.t * geo.dilation[0], dr = cur.r * geo.dilation[1], ds = cur.s * geo.dilation[2];
        for (int i = 0; i < W; ++i) {
          const int64_t id = id0[i] + dt, ih = ih0[i] + dr, iw = iw0[i] + ds;
          const bool inside = live[i] && uint64_t(id) < uint64_t(geo.in[0]) && uint64_t(ih) < uint64_t(geo.in[1]) &&
                              uint64_t(iw) < uint64_t(geo.in[2]);
          dst[p * W + i] = inside ? T(xc[base[i] + id * geo.xs[2] + ih * geo.xs[3] + iw * geo.xs[4]]) : T(0);
        }
      }
      dst += W * kc;
    }
  }
};

struct FilterOperand {
  using value_type = float;
  static constexpr bool has_view = false;
  const ConvGeometry* g;
  int64_t first = 0;  // output channel (within the group) of row 0

  FilterOperand shifted(int64_t i0) const { return {g, first + i0}; }

  template <int W, class T>
  void pack(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    const ConvGeometry& geo = *g;
    for (int64_t r0 = 0; r0 < len; r0 += W) {
      const int64_t rows = len - r0 < W ? len - r0 : W;
      const float* wk = geo.w + (first + i0 + r0) * geo.ws[0];
      ReductionCursor cur(geo, p0);
      for (int64_t p = 0; p < kc; ++p, cur.next()) {
        const float* wl = wk + cur.c * geo.ws[1] + cur.t * geo.ws[2] + cur.r * geo.ws[3] + cur.s * geo.ws[4];
        for (int i = 0; i < W; ++i) dst[p * W + i] = i < rows ? T(wl[i * geo.ws[0]]) : T(0);
      }
      dst += W * kc;
    }
  }
};

STRATA_TILE_NS_END
