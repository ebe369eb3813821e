// Convolution as implicit GEMM: the two GEMM operands of a forward convolution read straight
// from the tensors, so no im2col buffer exists. The reduction index l runs over (c, t, r, s)
// — channel-innermost when the input has contiguous channels (NHWC), tap-innermost otherwise —
// and both operands decompose it the same way.
//
//   ImageOperand:  rows = output pixels (n, od, oh, ow) flattened, depth l; zero outside padding
//   FilterOperand: rows = output channels of one group, depth l
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/pack.hpp"

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
  // Taps-inner only: `run` more taps along the filter row (run <= S - s).
  void advance_taps(int64_t run) {
    s += run;
    if (s < g->filter[2]) return;
    s = 0;
    if (++r < g->filter[1]) return;
    r = 0;
    if (++t < g->filter[0]) return;
    t = 0, ++c;
  }
  // Channels-inner only: `run` more values of l, which may cross into the next taps of the
  // filter row (never past its end).
  void advance_channels(int64_t run) {
    c += run;
    if (c < g->c) return;
    s += c / g->c;
    c %= g->c;
    if (s < g->filter[2]) return;
    s = 0;
    if (++r < g->filter[1]) return;
    r = 0, ++t;
  }
  // One more l, in either order.
  void next() {
    if (g->channels_inner) advance_channels(1);
    else advance_taps(1);
  }
};

// The output pixels of one packed panel (up to W rows of the image operand) split into
// segments of consecutive pixels on one output row: along a segment the input column
// advances by the stride, so a tap reads one strided run of the input per segment.
template <int W>
struct PanelPixels {
  struct Segment {
    int begin, end;                 // panel rows [begin, end)
    int64_t base, id0, ih0, iw0;    // image offset; input coordinates of tap (0,0,0) at `begin`
  };
  Segment seg[W];
  int segments = 0;
  int rows = 0;  // live rows; rows >= `rows` are padding of the last panel

  PanelPixels(const ConvGeometry& geo, int64_t pixel0, int live) : rows(live) {
    const int64_t P = geo.pixels_per_image(), OH = geo.out[1], OW = geo.out[2];
    int64_t img = pixel0 / P, rem = pixel0 % P;
    int64_t od = rem / (OH * OW), oh = (rem / OW) % OH, ow = rem % OW;
    for (int i = 0; i < live;) {
      const int n = int(std::min<int64_t>(live - i, OW - ow));
      seg[segments++] = {i, i + n, img * geo.xs[0], od * geo.stride[0] - geo.pad[0], oh * geo.stride[1] - geo.pad[1],
                         ow * geo.stride[2] - geo.pad[2]};
      i += n;
      ow = 0;  // the next segment starts a new output row
      if (++oh == OH) {
        oh = 0;
        if (++od == geo.out[0]) od = 0, ++img;
      }
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
    if (!g->channels_inner) return pack_taps_inner<W>(i0, len, p0, kc, dst);
    for (int64_t r0 = 0; r0 < len; r0 += W) {
      const PanelPixels<W> px(*g, first + i0 + r0, int(std::min<int64_t>(W, len - r0)));
      pack_channels_inner<W>(px, p0, kc, dst);
      dst += W * kc;
    }
  }

 private:
  bool inside_rows(int64_t id, int64_t ih) const {
    return uint64_t(id) < uint64_t(g->in[0]) && uint64_t(ih) < uint64_t(g->in[1]);
  }

  // l = (tap, c) with c innermost (contiguous channels): within a run of channels the tap is
  // fixed, so each pixel is either inside the image for the whole run (a contiguous read) or
  // in the padding (read from a run of zeros). The copy is then a W-stream transpose.
  // When pixels are packed (column stride C) and the filter row undilated, the channels of
  // taps s, s+1, ... are contiguous too: a run then spans the rest of the filter row whenever
  // every pixel of the panel is inside (or wholly outside) for all of it — what keeps few-
  // channel layers (RGB input: 3 channels x 7 taps) from paying the per-run cost every 3 values.
  template <int W, class T>
  void pack_channels_inner(const PanelPixels<W>& px, int64_t p0, int64_t kc, T* __restrict dst) const {
    const ConvGeometry& geo = *g;
    const bool rows_merge = geo.xs[4] == geo.c && geo.dilation[2] == 1;
    const float* zeros = zero_run(geo.c * (rows_merge ? geo.filter[2] : 1));
    ReductionCursor cur(geo, p0);
    for (int64_t p = 0; p < kc;) {
      const int64_t taps_left = rows_merge ? geo.filter[2] - cur.s : 1;  // taps the run may span
      const float* src[W];
      for (int i = 0; i < W; ++i) src[i] = zeros;
      const int64_t dt = cur.t * geo.dilation[0], dr = cur.r * geo.dilation[1], ds = cur.s * geo.dilation[2];
      bool whole = true;  // every live pixel inside (or in padding) for all taps_left taps
      for (int sgi = 0; sgi < px.segments; ++sgi) {
        const auto& sg = px.seg[sgi];
        const int64_t id = sg.id0 + dt, ih = sg.ih0 + dr;
        if (!inside_rows(id, ih)) continue;
        const float* row = geo.x + sg.base + cur.c * geo.xs[1] + id * geo.xs[2] + ih * geo.xs[3];
        for (int i = sg.begin; i < sg.end; ++i) {
          const int64_t iw = sg.iw0 + (i - sg.begin) * geo.stride[2] + ds;
          if (uint64_t(iw) < uint64_t(geo.in[2])) src[i] = row + iw * geo.xs[4];
          if (taps_left > 1) {
            const bool first_in = uint64_t(iw) < uint64_t(geo.in[2]);
            const bool last_in = uint64_t(iw + taps_left - 1) < uint64_t(geo.in[2]);
            whole = whole && first_in == last_in && (first_in || iw + taps_left - 1 < 0 || iw >= geo.in[2]);
          }
        }
      }
      const int64_t span = whole ? geo.c * taps_left - cur.c : geo.c - cur.c;
      const int64_t run = std::min(span, kc - p);
      T* __restrict d = dst + p * W;
#if defined(__AVX2__)
      if constexpr (std::is_same_v<T, float> && transposes_streams<W, T>()) {
        // Through register transposes, whole lines of each pixel's run at a time (res3_proj_s2:
        // 256 channels of 12 pixels 2 KB apart).
        transpose_streams<W>([&](int i) { return src[i]; }, W, run, d);
        p += run;
        cur.advance_channels(run);
        continue;
      }
#endif
      for (int64_t q = 0; q < run; ++q)
#pragma GCC unroll 16
        for (int i = 0; i < W; ++i) d[q * W + i] = T(src[i][q]);
      p += run;
      cur.advance_channels(run);
    }
  }

  // At least n zeros (per thread, grown on demand): the source of padding pixels.
  static const float* zero_run(int64_t n) {
    thread_local std::vector<float> zeros;
    if (int64_t(zeros.size()) < n) zeros.assign(std::size_t(n), 0.f);
    return zeros.data();
  }

  // l = (c, tap) with the tap innermost (NCHW-like). Consecutive l walk the filter row
  // s = 0, 1, ... of one (c, t, r). The loop over panels is inside the loop over l, so that
  // for one tap consecutive panels read consecutive pieces of the same input rows (a stream
  // the prefetcher follows) rather than each panel visiting every row of every channel.
  // Each segment's input row is found once per (c, t, r); each tap is that row shifted by s
  // (a straight copy when stride and column stride are 1), zeros where it leaves the image.
  template <int W, class T>
  void pack_taps_inner(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    const ConvGeometry& geo = *g;
    const bool unit = geo.stride[2] == 1 && geo.xs[4] == 1;
    const int64_t in_w = geo.in[2], S = geo.filter[2];
    const int64_t panels = (len + W - 1) / W;
    thread_local std::vector<PanelPixels<W>> px;
    px.clear();
    for (int64_t r0 = 0; r0 < len; r0 += W) px.emplace_back(geo, first + i0 + r0, int(std::min<int64_t>(W, len - r0)));
    ReductionCursor cur(geo, p0);
    for (int64_t p = 0; p < kc;) {
      const int64_t run = std::min(S - cur.s, kc - p);
      const float* xc = geo.x + cur.c * geo.xs[1];
      const int64_t dt = cur.t * geo.dilation[0], dr = cur.r * geo.dilation[1];
      for (int64_t panel = 0; panel < panels; ++panel) {
        const PanelPixels<W>& pp = px[std::size_t(panel)];
        T* __restrict pdst = dst + panel * W * kc;
        for (int sgi = 0; sgi < pp.segments; ++sgi) {
          const auto& sg = pp.seg[sgi];
          const int n = sg.end - sg.begin;
          const int64_t id = sg.id0 + dt, ih = sg.ih0 + dr;
          if (!inside_rows(id, ih)) {
            for (int64_t q = 0; q < run; ++q)
              for (int i = 0; i < n; ++i) pdst[(p + q) * W + sg.begin + i] = T(0);
            continue;
          }
          const float* row = xc + sg.base + id * geo.xs[2] + ih * geo.xs[3];
          for (int64_t q = 0; q < run; ++q) {
            T* __restrict o = pdst + (p + q) * W + sg.begin;
            const int64_t iw = sg.iw0 + (cur.s + q) * geo.dilation[2];
            if (unit) {
              const float* __restrict r = row + iw;
              if (n == W && iw >= 0 && iw + W <= in_w) {  // the whole panel from one row
#pragma GCC unroll 32
                for (int i = 0; i < W; ++i) o[i] = T(r[i]);
                continue;
              }
              const int lo = int(std::clamp<int64_t>(-iw, 0, n)), hi = int(std::clamp<int64_t>(in_w - iw, lo, n));
              for (int i = 0; i < lo; ++i) o[i] = T(0);
              for (int i = lo; i < hi; ++i) o[i] = T(r[i]);
              for (int i = hi; i < n; ++i) o[i] = T(0);
            } else {
              // Pixels [lo, hi) of the segment read inside the row, the rest is padding; the
              // common stride 2 over a unit-stride row gets a loop with a constant stride.
              const int64_t st = geo.stride[2];
              // Divisions only at the image's left and right edges (they were a sixth of the
              // packing time of NCHW 3x3 stride-2 layers when done for every tap).
              const bool inside = iw >= 0 && iw + (n - 1) * st < in_w;
              const int lo = inside ? 0 : int(std::clamp<int64_t>(iw < 0 ? (-iw + st - 1) / st : 0, 0, n));
              const int hi = inside ? n : int(std::clamp<int64_t>(in_w > iw ? (in_w - iw + st - 1) / st : 0, lo, n));
              for (int i = 0; i < lo; ++i) o[i] = T(0);
              const float* __restrict r = row + (iw + lo * st) * geo.xs[4];  // pixel lo
              T* __restrict ol = o + lo;
              if (st == 2 && geo.xs[4] == 1) {
                for (int i = 0; i < hi - lo; ++i) ol[i] = T(r[2 * i]);
              } else {
                const int64_t step = st * geo.xs[4];
                for (int i = 0; i < hi - lo; ++i) ol[i] = T(r[i * step]);
              }
              for (int i = hi; i < n; ++i) o[i] = T(0);
            }
          }
        }
        for (int64_t q = 0; q < run; ++q)
          for (int i = pp.rows; i < W; ++i) pdst[(p + q) * W + i] = T(0);
      }
      p += run;
      cur.advance_taps(run);
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
