// Implicit GEMM reading the image in place, one band of input rows per output row — for
// channels-last images with few channels, where gathering the image into packed panels is a
// large share of the time (the RGB first layer of a CNN: each contiguous input run is one
// filter row of 7 taps x 3 channels, and every value packed feeds only 64 output channels),
// and for channels-last layers with many channels, where the gather copies each input value
// R S / stride^2 times (2.25 at 3x3 stride 2) and the band reads it in place.
//
// The input rows an output row reads are kept as zero-padded rows (row[column][c], the padding
// made real, so no pixel needs a bounds test) in a small ring per thread: a row is copied
// once and serves every output row that reads it (conv1, 7 rows at stride 2: 2 new rows per
// output row instead of 7; the copies were ~4% of the layer). Rows outside the image are one
// shared row of zeros. The filter is the kernel's packed A operand (MR
// output channels per panel, depth l = (r, s, c) with c innermost, the image operand's own
// reduction order); a micro-tile of NR output pixels then reads, for filter row r, the run of
// S x C values of each pixel straight from the band:
//
//   B(l = (r, s, c), j) = row_r[(ow0 + j) * stride + s][c]
//                       = row_r[(s C + c) + j * stride C]      (R runs of S C steps)
//
// Any input layout (the row copy interleaves NCHW's channel planes). The tiles hold C = Y[k,
// pixel]: channels-last output takes them in place; pixels-first output (NCHW) stages one
// output row of tiles per thread and transposes it into y, where the epilogue then runs. 2-D,
// undilated along the row. Each output sums l = 0, 1, ... into one accumulator over the whole
// depth (no k blocks), whichever thread computes its row, so results do not depend on the
// thread count. Filters too large for L2, and some long runs (band_panels_outer), take
// run_band_padded instead: tiles across rows and images from one padded copy of each image,
// filter panels outer.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "problem.hpp"
#include "transpose_blocks.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/tile/blocking.hpp"
#include "strata/tile/conv_operand.hpp"
#include "strata/tile/epilogue_none.hpp"
#include "strata/tile/microkernel.hpp"
#include "strata/tile/workspace.hpp"

namespace strata::dnn::detail {

// Output layouts the GEMM can write directly (C needs unit row stride and one column stride).
// Size-1 dimensions may carry any stride, as in ConvProblem's own layout predicates.
inline bool implicit_gemm_channels_last(const ConvProblem& p) { return p.y_nhwc(); }
inline bool implicit_gemm_pixels_first(const ConvProblem& p) { return pixel_planes(p.out, p.ys); }

inline constexpr int64_t kMaxBandRows = 16;  // filter rows the band path takes (rows kept per thread)

// Pixels per tile of the f32 kernel `isa` runs (tile::KernelF32's NR: AVX-512 12, AVX2 6);
// defined with the ISA table (algo_implicit_gemm.cpp).
int64_t implicit_gemm_tile_columns(Isa isa);

// L2 per core (256 KiB where the CPU does not say).
inline int64_t band_l2_bytes() {
  const std::size_t l2_bytes = cpu_features().l2_bytes;
  return l2_bytes ? int64_t(l2_bytes) : 256 * 1024;
}
// Elements from one packed filter panel (`width` output channels over `depth` steps) to the
// next: the panel plus 8 KiB and a line. Back to back, panels of depth 1024 (128 KiB apart)
// started at the same offset within each way of a 2 MiB 16-way L2, and on huge pages (the
// prepared filters' own) every panel's slice of a k block fell in the same sets: the 16 slices
// of a 512 x 512 A block evicted each other and the layer re-read them from L3. Shifted by
// 8 KiB, 16 panels' slices cover the way; the extra line shifts L1's sets too. In-process
// against back-to-back panels (prepared filters, 1 thread): res5_1x1_1024_512 alone 1.10-1.19x
// at batch 1; the whole ResNet-50 list 0.99x summed at batch 1 and 8, each layer within the
// A/A spread (where its filter had not landed on huge pages: scattered physical pages do not
// stack the slices).
inline constexpr int64_t kFilterPanelPadBytes = 8192 + 64;
inline int64_t filter_panel_stride(int64_t depth, int64_t width) {
  return depth * width + kFilterPanelPadBytes / int64_t(sizeof(float));
}
inline int64_t band_filter_bytes(const ConvProblem& p) {
  return p.kg() * p.cg() * p.filter_spatial() * int64_t(sizeof(float));
}

// Which walk the band path takes: run_band (output rows outer, every filter panel read for
// each row's tiles, so the filter must stay in L2; only the border columns copied) or
// run_band_padded (each MR-channel panel over every tile of the image while it is in L2, the
// rows from one padded copy of the image). Panels outer where the filter outgrows 3/4 of L2;
// for short runs (at most 64 values per filter row, the RGB stem) a quarter, as before; for
// NCHW inputs with long runs always (the padded walk reads a channels-last copy; the rows
// would gather the planes value by value). With long runs from channels-last input the rows
// pay at stride 2 (res3_3x3_s2, 590 KB of filter: in-process 1.02-1.07x at batch 1 and 8 on 1
// and 2 threads; the padded copy of its 56 x 56 input was ~6% of the layer) and for small
// filters (res2_3x3, 147 KB: 1.04-1.20x), not at stride 1 with a larger one (res3_3x3, 590
// KB: 0.96-0.99x on 1 thread, its 28-pixel rows leave a 4-pixel tile each), so that stays
// padded above an eighth of L2. Between half and 3/4 of L2 the rows still pay: res3_3x3_s2's
// 590 KB filter in Zen 4's 1 MB L2, in-process against the padded walk, 1.01x on 1 thread
// (three runs), 1.02-1.10x on 2 at batch 1, 0.99-1.05x at batch 8.
// STRATA_CONV_BAND=rows or =panels forces one walk (the tests cover both on any cache size).
inline bool band_panels_outer(const ConvProblem& p) {
  if (const char* force = std::getenv("STRATA_CONV_BAND")) {
    if (std::strcmp(force, "rows") == 0) return false;
    if (std::strcmp(force, "panels") == 0) return true;
  }
  const int64_t filter = band_filter_bytes(p), l2 = band_l2_bytes();
  if (filter > l2 * 3 / 4) return true;
  if (p.filter[2] * p.cg() <= 64) return filter > l2 / 4;
  if (p.xs[1] != 1) return true;
  return p.stride[2] == 1 && filter > l2 / 8;
}

// Whether the band path serves a forward convolution (and pays): an output the GEMM can write
// (channels-last, or pixels-first through a staged row), 2-D, undilated along the row, and
// either short input runs (S x C values: per-run gathering dominates below this) with a
// filter small enough to stay in L2 while every pixel tile of a row reads all of it, or long
// runs from channels-last input or into pixels-first output (the gather copies each input
// value about R S / stride^2 times; the band reads it in place).
// Depends on the problem (and the machine's caches) only, so the choice is the same for any
// thread count or preparation.
inline bool band_serves(const ConvProblem& p) {
  if (p.op != ConvOp::forward || !(implicit_gemm_channels_last(p) || implicit_gemm_pixels_first(p)) ||
      p.in[0] != 1 || p.filter[0] != 1 || p.dilation[2] != 1 || p.filter[1] > kMaxBandRows)
    return false;
  // A 1x1 filter reads each input value once at most: the gather copies no more than the
  // band would read (strided 1x1 layers in place: 0.90-1.05x of the gather).
  if (p.filter_spatial() == 1) return false;
  if (p.filter[2] * p.cg() <= 64 && band_filter_bytes(p) <= band_l2_bytes() / 4) return true;
  // A tile's pixels, `stride` pixels apart in x (or in its channels-last copy), read in place:
  // where their columns overflow an L1 set (tile::in_place_columns_fit_l1), each k step's
  // values come from L2, and the gather packs them. res5_3x3_s2 (512 channels at stride 2: 4
  // KB apart) on Zen 4's 8-way L1 with AVX-512's 12-pixel tiles, in-process against the band:
  // 2 threads 1.05-1.09x (four runs of five), 1 thread 0.94-1.04x; AVX2's 6-pixel tiles fit
  // (the band 1.06x there).
  const int64_t pixel_floats = p.xs[1] == 1 ? p.xs[4] : p.c;
  if (!tile::in_place_columns_fit_l1(p.stride[2] * pixel_floats * int64_t(sizeof(float)),
                                     implicit_gemm_tile_columns(p.isa)))
    return false;
  // Long runs (run_band_padded): from channels-last input, or into pixels-first output (NCHW
  // images then go through a channels-last copy, as for the gather).
  return p.xs[1] == 1 || implicit_gemm_pixels_first(p);
}

// Input row (img, ih), inside the image, as a dense zero-padded row of row_floats values; or
// only its columns [from, to) (of row_floats / C).
static inline void fill_band_row(const ConvProblem& p, const tile::ConvGeometry& geo, int64_t img, int64_t ih,
                                 int64_t row_floats, float* dst, int64_t from = 0, int64_t to = INT64_MAX) {
  const int64_t C = geo.c, cols = std::min(row_floats / C, to);
  const int64_t iw_begin = -p.pad[2];  // input column of row column 0
  // Row columns [lo, hi) lie inside the image.
  const int64_t lo = std::clamp<int64_t>(-iw_begin, from, std::max(from, cols));
  const int64_t hi = std::clamp<int64_t>(p.in[2] - iw_begin, lo, std::max(lo, cols));
  std::fill(dst + from * C, dst + lo * C, 0.f);
  std::fill(dst + hi * C, dst + std::max(hi, cols) * C, 0.f);
  const float* src = geo.x + img * geo.xs[0] + ih * geo.xs[3];
  const int64_t cs = geo.xs[1], ps = geo.xs[4];
  if (cs == 1 && ps == C) {  // channels contiguous and pixels packed: one copy
    std::memcpy(dst + lo * C, src + (lo + iw_begin) * C, sizeof(float) * std::size_t((hi - lo) * C));
  } else if (cs == 1) {
    for (int64_t col = lo; col < hi; ++col)
      std::memcpy(dst + col * C, src + (col + iw_begin) * ps, sizeof(float) * std::size_t(C));
  } else {  // channel planes (NCHW) interleaved
    for (int64_t c = 0; c < C; ++c)
      for (int64_t col = lo; col < hi; ++col) dst[col * C + c] = src[c * cs + (col + iw_begin) * ps];
  }
}

// The width of an output row's tile from pixel ow0 (OW pixels, tiles of up to Kernel's NR, all
// MR rows tall): as the tile library's column panels (panel_width: 28 = 12 + 8 + 8, not
// 12 + 12 + 4; 112 = 8 x 12 + 8 + 8). In-process, res3_3x3_s2 (where the 32x4 tiles were 17% of
// the time for 14% of the products) 1.03x at batch 1, 1.01x at batch 8; conv1 1.00x.
template <class Kernel>
int64_t band_tile_width(int64_t OW, int64_t ow0) {
  return tile::panel_width<Kernel>(OW, ow0, Kernel::mr);
}

// The tiles of an output row (band_tile_width) whose windows lie inside the image's columns and
// whose kernels cover them exactly: those starting at pixels [first, end), which may read
// channels-last input rows where they lie. A tile of w pixels from ow0 reads zero-padded row
// columns [ow0 stride, (ow0 + w - 1) stride + S); the others, and a ragged last one (its
// kernels may run past the row), read the padded copies, which then need only the columns
// those read: [0, copy_left) and [copy_right, row end).
struct InteriorTiles {
  int64_t first = 0, end = 0, copy_left = INT64_MAX, copy_right = INT64_MAX;
};
template <class Kernel>
InteriorTiles band_interior_tiles(const ConvProblem& p) {
  const int64_t st = p.stride[2], S = p.filter[2], pad = p.pad[2], W = p.in[2], OW = p.out[2];
  auto inside = [&](int64_t ow0, int64_t w) {
    return tile::covers_exactly<Kernel, true>(Kernel::mr, w) && ow0 * st >= pad && (ow0 + w - 1) * st + S <= pad + W;
  };
  InteriorTiles t;
  int64_t ow0 = 0, w = 0;
  for (; ow0 < OW; ow0 += w) {
    w = band_tile_width<Kernel>(OW, ow0);
    if (inside(ow0, w)) break;
  }
  if (ow0 >= OW) return InteriorTiles{};
  t.first = t.end = ow0;
  while (t.end < OW && inside(t.end, w = band_tile_width<Kernel>(OW, t.end))) t.end += w;
  t.copy_left = t.first > 0 ? (t.first - 1) * st + S : 0;
  t.copy_right = t.end * st;
  return t;
}

// One thread's ring of input rows: slot ih mod `slots` holds row ih of some image (its tag), so
// the rows one output row reads, (R - 1) * dilation + 1 apart at most, never share a slot.
class BandRing {
 public:
  // With `interior` (channels-last input, pixels packed: x_rows in rows_for), the copies hold
  // only the columns the other tiles read.
  BandRing(const ConvProblem& p, int64_t row_floats, int64_t slack_floats, float* memory, InteriorTiles interior = {})
      : p_(p),
        interior_(interior),
        row_floats_(row_floats),
        slots_(slots(p)),
        memory_(memory),
        zero_row_(memory + slots_ * row_floats),
        tags_(std::size_t(slots_), -1) {
    // Zeroed once: the zero row and the slack after it stay zero, and a ragged last tile that
    // reads past a row into a slot not filled yet reads zeros (into columns it discards).
    std::fill(memory_, zero_row_ + row_floats_ + slack_floats, 0.f);
  }
  // Rows held: the span of rows one output row reads.
  static int64_t slots(const ConvProblem& p) { return (p.filter[1] - 1) * p.dilation[1] + 1; }
  // Memory needed: the slots, the zero row, and the slack after it.
  static int64_t floats(const ConvProblem& p, int64_t row_floats, int64_t slack_floats) {
    return (slots(p) + 1) * row_floats + slack_floats;
  }

  // The R rows output row (img, oh) reads, filling the slots of those not yet held; with
  // x_rows, also the rows in x itself, x_shift() floats on (row column c of an interior tile
  // at x_rows[r] + c C - x_shift()).
  void rows_for(const tile::ConvGeometry& geo, int64_t img, int64_t oh, const float** rows,
                const float** x_rows = nullptr) {
    for (int64_t r = 0; r < p_.filter[1]; ++r) {
      const int64_t ih = oh * p_.stride[1] - p_.pad[1] + r * p_.dilation[1];
      if (ih < 0 || ih >= p_.in[1]) {
        rows[r] = zero_row_;
        if (x_rows) x_rows[r] = zero_row_ + x_shift();
        continue;
      }
      if (x_rows) x_rows[r] = geo.x + img * geo.xs[0] + ih * geo.xs[3];
      const int64_t slot = ih % slots_, tag = img * p_.in[1] + ih;
      float* row = memory_ + slot * row_floats_;
      if (tags_[std::size_t(slot)] != tag) {
        if (!x_rows) {
          fill_band_row(p_, geo, img, ih, row_floats_, row);
        } else {
          fill_band_row(p_, geo, img, ih, row_floats_, row, 0, interior_.copy_left);
          fill_band_row(p_, geo, img, ih, row_floats_, row, interior_.copy_right);
        }
        tags_[std::size_t(slot)] = tag;
      }
      rows[r] = row;
    }
  }
  // Floats of the left padding in a copied row (pad columns of C channels).
  int64_t x_shift() const { return p_.pad[2] * row_floats_ / ((p_.out[2] - 1) * p_.stride[2] + p_.filter[2]); }

 private:
  const ConvProblem& p_;
  InteriorTiles interior_;
  int64_t row_floats_, slots_;
  float* memory_;
  float* zero_row_;
  std::vector<int64_t> tags_;  // per slot: img * H + ih of the row it holds, or -1
};

// The input rows one output row reads: zero-padded copies, and optionally (x_rows) the rows in
// x itself for the interior tiles, row column c at x_rows[r] + c C - x_shift.
struct BandRows {
  const float* const* copies;
  const float* const* x_rows = nullptr;
  int64_t x_shift = 0;
  InteriorTiles interior{};
};

// The tiles of one output row, all kg channels of its OW pixels: channel i of pixel ow at
// c[i + ow * ldc]. `whole_tiles`: c has room for whole MR x NR tiles (rows up to the panels'
// padding, columns up to OW rounded up to NR), so ragged tiles need no copy. after(ow0, live)
// runs once each NR pixels' channels are done, while they are in L1.
template <class Kernel, class After>
void band_row_tiles(const ConvProblem& p, int64_t C, const BandRows& rows, const float* filter_panels, float* c,
                    int64_t ldc, bool whole_tiles, float alpha, float beta, float* edge, After&& after) {
  constexpr int MR = Kernel::mr, NR = Kernel::nr;
  const int64_t R = p.filter[1], S = p.filter[2], OW = p.out[2];
  const int64_t run = S * C, b_js = p.stride[2] * C;
  const int64_t kg = p.kg(), panels = (kg + MR - 1) / MR, depth = R * S * C;
  for (int64_t ow0 = 0, live = 0; ow0 < OW; ow0 += live) {
    live = band_tile_width<Kernel>(OW, ow0);
    const bool in_x = rows.x_rows && ow0 >= rows.interior.first && ow0 < rows.interior.end;
    const float* const* pieces = in_x ? rows.x_rows : rows.copies;
    const int64_t shift = in_x ? rows.x_shift : 0;
    for (int64_t i = 0; i < panels; ++i) {
      const float* a = filter_panels + i * filter_panel_stride(depth, MR);
      // Narrower columns only (MR rows): run_pieces reads A as K's own panels. Into whole
      // tiles a kernel may run past the last pixel where that is cheaper.
      auto tiles = [&](float* ct, int64_t ld) __attribute__((always_inline)) {
        tile::cover_narrowest<Kernel, true>(MR, live, [&]<class K>(int64_t j0) {
          K::run_pieces(R, run, a, pieces, (ow0 + j0) * b_js - shift, b_js, ct + j0 * ld, ld, alpha, beta);
        });
      };
      float* ct = c + i * MR + ow0 * ldc;
      // A narrower tile its kernels cover exactly goes in place too (no edge copy).
      if (whole_tiles || (kg - i * MR >= MR && tile::covers_exactly<Kernel, true>(MR, live))) tiles(ct, ldc);
      else tile::ragged_tile<MR, NR>(std::min<int64_t>(MR, kg - i * MR), live, ct, ldc, beta, edge, tiles);
    }
    after(ow0, live);
  }
}

// Floats of one band row: the input columns one output row reads, C values each.
inline int64_t band_row_floats(const ConvProblem& p, int64_t C) {
  return ((p.out[2] - 1) * p.stride[2] + p.filter[2]) * C;
}
// Channel stride of a staged output row (pixels-first output): whole MR-channel panels.
template <class Kernel>
int64_t band_stage_ld(const ConvProblem& p) {
  return (p.kg() + Kernel::mr - 1) / Kernel::mr * Kernel::mr;
}

// The filter taps an output pixel's window sees inside the image: rows [r0, r1), columns
// [s0, s1) (the others lie over the zero padding and would add only zeros). Rows may be
// dilated, columns not (the band path's condition).
struct TapRange {
  int64_t r0, r1, s0, s1;
  bool operator==(const TapRange&) const = default;
};
inline TapRange pixel_taps(const ConvProblem& p, int64_t oh, int64_t ow) {
  const int64_t R = p.filter[1], S = p.filter[2], dil = p.dilation[1];
  const int64_t top = oh * p.stride[1] - p.pad[1], left = ow * p.stride[2] - p.pad[2];
  TapRange t;
  t.r0 = top >= 0 ? 0 : std::min(R, (-top + dil - 1) / dil);  // rows top + r dil < 0
  t.r1 = top >= p.in[1] ? t.r0 : std::clamp<int64_t>((p.in[1] - 1 - top) / dil + 1, t.r0, R);
  t.s0 = std::clamp<int64_t>(-left, 0, S);
  t.s1 = std::clamp<int64_t>(p.in[2] - left, t.s0, S);
  return t;
}

// run_band_padded's tiles: the pixels of a chunk of images (n P + oh OW + ow) grouped by the
// taps they see (pixel_taps: the interior, then each kind of border pixel, those with more
// taps first), each group in order and cut into tiles of at most NR, so a border tile's depth
// skips the taps over the padding (res5's 7 x 7 stride-2 outputs: 9% of the products). A tile
// whose pixels are consecutive writes C in place; the others go through the edge tile.
// Fixed by the problem and the chunk, whatever the thread count.
struct BandTiles {
  struct Tile {
    int64_t first, count;  // consecutive: pixels first, first + 1, ...; else offset[first, first + count)
    TapRange taps;
    bool consecutive;
  };
  std::vector<Tile> tiles;
  std::vector<int64_t> offset;  // scattered tiles' pixels: where the first tap's run starts (from image 0)
  std::vector<int64_t> pixel;   // and which pixel (n P + oh OW + ow) each is

  // image_stride, row_stride, pixel_stride: where the pixels' input rows lie (a padded copy or x);
  // origin: the offset of padded row and column 0 from there (x read in place: minus the padding).
  BandTiles(const ConvProblem& p, int64_t images, int64_t nr, int64_t image_stride, int64_t row_stride,
            int64_t pixel_stride, int64_t origin) {
    const int64_t OH = p.out[1], OW = p.out[2], P = OH * OW, R = p.filter[1], S = p.filter[2];
    const TapRange all{0, R, 0, S};
    std::vector<TapRange> by_row, by_col;
    taps_by_line(p, by_row, by_col);
    if (!groups_taps(p, by_row, by_col)) {
      for (int64_t f = 0; f < images * P; f += nr) add({f, std::min<int64_t>(nr, images * P - f), all, true});
      return;
    }
    auto taps_of = [&](int64_t q) {
      const TapRange &r = by_row[std::size_t(q / OW)], &c = by_col[std::size_t(q % OW)];
      return TapRange{r.r0, r.r1, c.s0, c.s1};
    };
    std::vector<TapRange> kinds;
    std::vector<int> kind(std::size_t(P), 0);
    for (int64_t q = 0; q < P; ++q) {
      const TapRange t = taps_of(q);
      const auto found = std::find(kinds.begin(), kinds.end(), t);
      kind[std::size_t(q)] = int(found - kinds.begin());
      if (found == kinds.end()) kinds.push_back(t);
    }
    // The kinds with the most taps first (the interior): a filter panel's first tile, which
    // fetches the panel from memory ahead of its reads, then reads all of it.
    std::vector<std::size_t> order(kinds.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    auto taps = [&](std::size_t k) { return (kinds[k].r1 - kinds[k].r0) * (kinds[k].s1 - kinds[k].s0); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return taps(x) > taps(y); });
    std::vector<int64_t> group;
    for (std::size_t k : order) {
      group.clear();
      for (int64_t n = 0; n < images; ++n)
        for (int64_t q = 0; q < P; ++q)
          if (kind[std::size_t(q)] == int(k)) group.push_back(n * P + q);
      const TapRange& t = kinds[k];
      for (std::size_t b = 0; b < group.size(); b += std::size_t(nr)) {
        const int64_t count = std::min<int64_t>(nr, int64_t(group.size() - b));
        if (group[b + std::size_t(count) - 1] - group[b] == count - 1) {
          add({group[b], count, t, true});
          continue;
        }
        add({int64_t(offset.size()), count, t, false});
        for (int64_t j = 0; j < count; ++j) {
          const int64_t f = group[b + std::size_t(j)], n = f / P, oh = f % P / OW, ow = f % OW;
          pixel.push_back(f);
          offset.push_back(origin + n * image_stride + (oh * p.stride[1] + t.r0 * p.dilation[1]) * row_stride +
                           (ow * p.stride[2] + t.s0) * pixel_stride);
        }
      }
    }
  }

  // Whether the tiles are grouped by the taps their pixels see (each tile then reads only
  // input inside the image): where the padding's share of the products pays for the narrower
  // border tiles and the copies of scattered ones (in-process, batch 1: res5_3x3_s2, 8.8% over
  // the padding, 1.04-1.07x; res4_3x3_s2, 4.6%, 1.02-1.03x; res3_3x3_s2, 2.3%, 1.00x; a 3x3
  // stride-1 layer at 56 x 56, 2.3%, 0.97x); else tiles of consecutive pixels, all taps.
  static bool groups_taps(const ConvProblem& p) {
    std::vector<TapRange> by_row, by_col;
    taps_by_line(p, by_row, by_col);
    return groups_taps(p, by_row, by_col);
  }
  static bool groups_taps(const ConvProblem& p, const std::vector<TapRange>& by_row,
                          const std::vector<TapRange>& by_col) {
    int64_t rows_seen = 0, cols_seen = 0;
    for (const TapRange& t : by_row) rows_seen += t.r1 - t.r0;
    for (const TapRange& t : by_col) cols_seen += t.s1 - t.s0;
    return rows_seen * cols_seen * 100 <= p.out[1] * p.out[2] * p.filter[1] * p.filter[2] * 96;
  }
  // The taps each output row and each output column sees (separable: rows by oh, columns by ow).
  static void taps_by_line(const ConvProblem& p, std::vector<TapRange>& by_row, std::vector<TapRange>& by_col) {
    by_row.resize(std::size_t(p.out[1]));
    by_col.resize(std::size_t(p.out[2]));
    for (int64_t oh = 0; oh < p.out[1]; ++oh) by_row[std::size_t(oh)] = pixel_taps(p, oh, 0);
    for (int64_t ow = 0; ow < p.out[2]; ++ow) by_col[std::size_t(ow)] = pixel_taps(p, 0, ow);
  }

  void add(const Tile& t) {
    tiles.push_back(t);
    work_before.push_back(work_before.back() + t.count * (t.taps.r1 - t.taps.r0) * (t.taps.s1 - t.taps.s0));
  }

  // Tiles [lo, hi) of part q of `parts` with about equal work (pixels x taps) each.
  void range(int q, int parts, int64_t& lo, int64_t& hi) const {
    auto border = [&](int x) {
      const int64_t share = work_before.back() * x / parts;
      return int64_t(std::lower_bound(work_before.begin(), work_before.end(), share) - work_before.begin());
    };
    lo = std::min<int64_t>(border(q), int64_t(tiles.size()));
    hi = q + 1 == parts ? int64_t(tiles.size()) : std::min<int64_t>(border(q + 1), int64_t(tiles.size()));
  }
  int64_t work(int64_t lo, int64_t hi) const { return work_before[std::size_t(hi)] - work_before[std::size_t(lo)]; }

  std::vector<int64_t> work_before{0};  // prefix sums of the tiles' work
};

// Whether run_band_padded reads the input where it lies, with no padded copy: each filter
// row's run of S x C values contiguous in x, and no tile reading the padding -- there is none,
// or the tiles skip the taps over it (BandTiles::groups_taps). In-process against the padded
// copy (NHWC): res4_3x3_s2 1.02-1.04x and res5_3x3_s2 1.02-1.03x at batch 1 and 8 on 1
// thread, 1.02-1.22x on 2 (the copy and its 0.9 MB in L2 gone).
inline bool band_reads_x_in_place(const ConvProblem& p) {
  if (p.filter[2] != 1 && p.xs[4] != p.cg()) return false;
  if (p.pad == std::array<int64_t, 3>{0, 0, 0}) return true;
  return p.xs[1] == 1 && p.pad[0] == 0 && BandTiles::groups_taps(p);
}

// Steps ahead the first tile of each filter panel fetches the panel (~64 steps of 12 cycles
// cover the latency of memory).
inline constexpr int64_t kBandFetchSteps = 64;
// Bytes of padded image copies run_band_padded keeps at once (whole images, at least one).
inline constexpr int64_t kBandCopyBytes = int64_t(4) << 20;

// The band path for long runs (band_panels_outer), channels-last output, or with
// `pixels_first` one image's pixels-first output through a staged block. The input rows every
// output row reads come from one zero-padded copy of each image (row rho = input row
// rho - pad, band_row_floats each; rows outside the image are zeros), or from x itself when
// no tile reads the padding (band_reads_x_in_place). Images go in chunks (all of them when read in
// place, else as many as kBandCopyBytes of copies hold), and a chunk's pixels, across rows and
// images, are cut into tiles of NR (fixed by the problem, whatever the thread count): a tile
// spans output rows where they are narrower than NR (run_columns takes a pointer per pixel:
// res5's 7-pixel rows ran as 4 + 2 + 1 columns each). Each thread takes a range of tiles and
// walks the filter panels outer, its tiles inner, so a panel (MR channels over the whole
// depth) is read from memory once per chunk and thread and from L2 after that (per image, a
// batch of 8 res5 images read their 9 MB filter 8 times). Each output is one accumulation
// over the whole depth, by the kernel its tile's width chooses, so results do not depend on
// the thread count; the epilogue visits each tile once all its panels are done.
template <class Kernel, class Epilogue>
void run_band_padded(const ConvProblem& p, const tile::ConvGeometry& geo, const float* filter_panels, float* yg,
                     int64_t ldc, float alpha, float beta, const Epilogue& epi, bool pixels_first = false) {
  constexpr int MR = Kernel::mr, NR = Kernel::nr;
  const int64_t C = geo.c, OW = p.out[2], P = p.out[1] * OW, kg = p.kg();
  if (pixels_first) {
    // One image (geo: channels-last), pixels-first output: channel k's plane at yg + k * ldc.
    // The tiles go to a channels-last block, transposed into the planes with beta, then the
    // epilogue (pixels as rows), channel blocks of 8 among the threads.
    ConvProblem one = p;
    one.n = 1;
    one.xs = geo.xs;
    float* stage = static_cast<float*>(tile::thread_pack_buffer(3).get(sizeof(float) * std::size_t(P * kg)));
    run_band_padded<Kernel>(one, geo, filter_panels, stage, kg, alpha, 0.f, tile::NoEpilogue{});
    parallel_for((kg + 7) / 8, p.threads, [&](int64_t lo, int64_t hi, int) {
      const int64_t k0 = lo * 8, k1 = std::min(kg, hi * 8);
      if (k0 >= k1) return;
      transpose_blocks(stage + k0, kg, k1 - k0, P, yg + k0 * ldc, ldc, 1.f, beta);
      if constexpr (!Epilogue::is_identity) epi(yg + k0 * ldc, ldc, 0, k0, P, k1 - k0);
    });
    return;
  }
  const int64_t R = p.filter[1], run = p.filter[2] * C;
  const int64_t panels = (kg + MR - 1) / MR, depth = R * run;
  const int64_t row_floats = band_row_floats(p, C);
  const int64_t padded_rows = (p.out[1] - 1) * p.stride[1] + (R - 1) * p.dilation[1] + 1;
  // Pixel (n, oh, ow) of a chunk reads from
  //   image(n) + oh * stride * row_stride + ow * stride * pixel_stride   (filter row r: + r * piece_stride).
  const bool in_place = band_reads_x_in_place(p);
  const int64_t copy_floats = padded_rows * row_floats;
  const int64_t chunk =
      in_place ? p.n : std::clamp<int64_t>(kBandCopyBytes / (copy_floats * int64_t(sizeof(float))), 1, p.n);
  const float* copies =
      in_place ? nullptr
               : static_cast<float*>(tile::thread_pack_buffer(4).get(sizeof(float) * std::size_t(chunk * copy_floats)));
  const int64_t image_stride = in_place ? geo.xs[0] : copy_floats;
  const int64_t row_stride = in_place ? geo.xs[3] : row_floats, pixel_stride = in_place ? geo.xs[4] : C;
  const int64_t piece_stride = p.dilation[1] * row_stride;
  // Where padded row and column 0 lie from an image's start: in x read in place, that many
  // rows and columns before it (no tile reads them).
  const int64_t origin = in_place ? -(p.pad[1] * row_stride + p.pad[2] * pixel_stride) : 0;
  for (int64_t n0 = 0; n0 < p.n; n0 += chunk) {
    const int64_t images = std::min(chunk, p.n - n0);
    const float* image0 = in_place ? geo.x + n0 * geo.xs[0] : copies;
    if (!in_place)
      parallel_for(images * padded_rows, p.threads, [&](int64_t lo, int64_t hi, int) {
        for (int64_t q = lo; q < hi; ++q) {
          const int64_t n = q / padded_rows, ih = q % padded_rows - p.pad[1];
          float* dst = const_cast<float*>(copies) + q * row_floats;
          if (ih < 0 || ih >= p.in[1]) std::fill(dst, dst + row_floats, 0.f);
          else fill_band_row(p, geo, n0 + n, ih, row_floats, dst);
        }
      });
    float* yc = yg + n0 * P * ldc;
    const BandTiles bt(p, images, NR, image_stride, row_stride, pixel_stride, origin);
    const int64_t tiles = int64_t(bt.tiles.size());
    // Panels [i0, i1) over tiles [lo, hi): each panel over the tiles in turn.
    auto walk = [&](int64_t i0, int64_t i1, int64_t lo, int64_t hi) {
      alignas(64) float edge[Kernel::mr * Kernel::nr];
      const float* cols[NR];
      for (int64_t i = i0; i < i1; ++i) {
        const float* a = filter_panels + i * filter_panel_stride(depth, MR);
        const int64_t live_rows = std::min<int64_t>(MR, kg - i * MR);
        for (int64_t t = lo; t < hi; ++t) {
          const BandTiles::Tile& tile = bt.tiles[std::size_t(t)];
          const TapRange& taps = tile.taps;
          const int64_t live = tile.count;
          if (tile.consecutive) {  // the pixel (n, oh, ow) each column reads, walked without divisions
            int64_t n = tile.first / P, oh = tile.first % P / OW, ow = tile.first % OW;
            const int64_t tap0 = origin + taps.r0 * p.dilation[1] * row_stride + taps.s0 * pixel_stride;
            for (int64_t j = 0; j < live; ++j) {
              cols[j] =
                  image0 + (tap0 + n * image_stride + oh * p.stride[1] * row_stride + ow * p.stride[2] * pixel_stride);
              if (++ow == OW) {
                ow = 0;
                if (++oh == p.out[1]) oh = 0, ++n;
              }
            }
          } else {
            for (int64_t j = 0; j < live; ++j) cols[j] = image0 + bt.offset[std::size_t(tile.first + j)];
          }
          // A ragged last tile's kernel may run past its pixels (cover_narrowest may take a
          // wider kernel into the edge copy): those columns read the tile's first pixel.
          for (int64_t j = live; j < NR; ++j) cols[j] = cols[0];
          const float* at = a + (taps.r0 * p.filter[2] + taps.s0) * C * MR;
          const int64_t runs = taps.r1 - taps.r0, len = (taps.s1 - taps.s0) * C;
          // The panel's first tile reads it from memory: fetch ahead along it.
          const int64_t fetch_ahead = t == lo ? kBandFetchSteps : 0;
          auto compute = [&](float* ct, int64_t ld) __attribute__((always_inline)) {
            tile::cover_narrowest<Kernel, true>(MR, live, [&]<class K>(int64_t j0) {
              K::run_columns(runs, len, at, run * MR, cols + j0, piece_stride, ct + j0 * ld, ld, alpha, beta,
                             j0 == 0 ? fetch_ahead : 0);
            });
          };
          if (tile.consecutive) {
            tile::ragged_tile<MR, NR>(live_rows, live, yc + tile.first * ldc + i * MR, ldc, beta, edge, compute);
            continue;
          }
          // Scattered pixels: through the edge tile, as ragged_tile does (the same arithmetic).
          const int64_t* pix = bt.pixel.data() + tile.first;
          if (beta != 0.f)
            for (int64_t j = 0; j < live; ++j) std::copy_n(yc + pix[j] * ldc + i * MR, live_rows, edge + j * MR);
          compute(edge, MR);
          for (int64_t j = 0; j < live; ++j) std::copy_n(edge + j * MR, live_rows, yc + pix[j] * ldc + i * MR);
        }
      }
    };
    auto finish = [&](int64_t lo, int64_t hi) {  // the epilogue over tiles [lo, hi), all panels done
      if constexpr (!Epilogue::is_identity)
        for (int64_t t = lo; t < hi; ++t) {
          const BandTiles::Tile& tile = bt.tiles[std::size_t(t)];
          if (tile.consecutive) {
            epi(yc + tile.first * ldc, ldc, 0, n0 * P + tile.first, kg, tile.count);
            continue;
          }
          const int64_t* pix = bt.pixel.data() + tile.first;
          for (int64_t j = 0; j < tile.count; ++j) epi(yc + pix[j] * ldc, ldc, 0, n0 * P + pix[j], kg, 1);
        }
    };
    // Threads take ranges of tiles of about equal work (each walking every panel), or, where
    // that spreads the work less evenly, ranges of panels (each over every tile: few tiles,
    // small images at batch 1, whose filter each thread would otherwise read whole). Either
    // way every output is the same kernel call, so the bits do not depend on the split; panels
    // go to whichever thread is free once it has walked its own share (parallel_chunks).
    // In-process on 2 threads at batch 1, panels against tiles: res5_3x3_s2 (5 tiles, 16
    // panels) 1.03-1.05x, res4_3x3_s2 (17 tiles, 8 panels) 0.98-1.01x.
    const int parts = std::max(1, p.threads);
    int64_t heaviest = 0;  // the most work one part of the tiles gets
    for (int q = 0; q < parts; ++q) {
      int64_t lo, hi;
      bt.range(q, parts, lo, hi);
      heaviest = std::max(heaviest, lo < hi ? bt.work(lo, hi) : 0);
    }
    if ((panels + parts - 1) / parts * bt.work(0, tiles) < heaviest * panels) {
      parallel_chunks(panels, p.threads, [&](int64_t lo, int64_t hi, int) { walk(lo, hi, 0, tiles); });
      if constexpr (!Epilogue::is_identity)
        parallel_for(tiles, p.threads, [&](int64_t lo, int64_t hi, int) { finish(lo, hi); });
    } else if (parts == 1) {
      walk(0, panels, 0, tiles);
      finish(0, tiles);
    } else {
      parallel_run(parts, [&](int q) {
        int64_t lo, hi;
        bt.range(q, parts, lo, hi);
        if (lo >= hi) return;
        walk(0, panels, lo, hi);
        finish(lo, hi);
      });
    }
  }
}

// One group: filter_panels = the filter as packed MR panels over the whole depth (prepared,
// or packed by the caller); yg = its output, channels-last (pixel stride ldc) for every image,
// or pixels-first (channel stride ldc) for image `img` only.
template <class Kernel, class Epilogue>
void run_band(const ConvProblem& p, const tile::ConvGeometry& geo, const float* filter_panels, float* yg, int64_t ldc,
              float alpha, float beta, const Epilogue& epi, int64_t img = -1) {
  constexpr int NR = Kernel::nr;
  const int64_t C = geo.c, OH = p.out[1], OW = p.out[2], kg = p.kg();
  const bool staged = !implicit_gemm_channels_last(p);
  const int64_t row_floats = band_row_floats(p, C);
  const int64_t slack = NR * p.stride[2] * C;  // read past a row by a ragged last tile
  const int64_t stage_ld = band_stage_ld<Kernel>(p), stage_floats = (OW + NR - 1) / NR * NR * stage_ld;
  const int64_t first = img < 0 ? 0 : img * OH, count = img < 0 ? p.n * OH : OH;

  // Channels-last input with its pixels packed: the interior tiles read x's rows in place and
  // the copies hold only the border columns (conv1's row copies were 3-5% of the layer).
  const bool x_in_place = geo.xs[1] == 1 && geo.xs[4] == C;
  const InteriorTiles interior = x_in_place ? band_interior_tiles<Kernel>(p) : InteriorTiles{};

  parallel_for(count, p.threads, [&](int64_t lo, int64_t hi, int) {
    const int64_t ring_floats = BandRing::floats(p, row_floats, slack);
    float* memory = static_cast<float*>(
        tile::thread_pack_buffer(1).get(sizeof(float) * std::size_t(ring_floats + (staged ? stage_floats : 0))));
    BandRing ring(p, row_floats, slack, memory, interior);
    float* stage = memory + ring_floats;  // pixels-first output: one output row, channels contiguous
    const float* copies[kMaxBandRows];
    const float* x_rows[kMaxBandRows];
    const bool any_in_x = interior.first < interior.end;
    const BandRows rows{copies, any_in_x ? x_rows : nullptr, ring.x_shift(), interior};
    alignas(64) float edge[Kernel::mr * Kernel::nr];
    for (int64_t q = first + lo; q < first + hi; ++q) {
      const int64_t n = q / OH, oh = q % OH;
      ring.rows_for(geo, n, oh, copies, rows.x_rows ? x_rows : nullptr);
      if (!staged) {
        band_row_tiles<Kernel>(p, C, rows, filter_panels, yg + q * OW * ldc, ldc, false, alpha, beta, edge,
                               [&](int64_t ow0, int64_t live) {
                                 if constexpr (!Epilogue::is_identity)
                                   epi(yg + (q * OW + ow0) * ldc, ldc, 0, q * OW + ow0, kg, live);
                               });
        continue;
      }
      band_row_tiles<Kernel>(p, C, rows, filter_panels, stage, stage_ld, true, alpha, 0.f, edge,
                             [](int64_t, int64_t) {});
      // Transposed into y (channel k's row at yg + k * ldc + oh * OW), beta applied here; then
      // the epilogue on the pixels-first rows (pixels as rows, channels as columns).
      float* yr = yg + oh * OW;
      transpose_blocks(stage, stage_ld, kg, OW, yr, ldc, 1.f, beta);
      if constexpr (!Epilogue::is_identity) epi(yr, ldc, oh * OW, 0, OW, kg);
    }
  });
}

}  // namespace strata::dnn::detail
