// The AMX convolution route (implicit_gemm_amx.hpp). Compiled with the AMX flags; runs only
// where amx_conv_serves().
#include "implicit_gemm_amx.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/tile/amx_bf16_gemm.hpp"

namespace strata::dnn::detail {

namespace {

using Kernel = tile::MicroKernelBf16Amx;
constexpr int64_t block_pixels = 32;  // a C tile's columns: two AMX tiles of 16 pixels

// Transposes 16 rows of 16 words into 16 columns (r[j] becomes column j). (Masked forms: GCC
// 12's plain unpacks and lane shuffles read an undefined vector, -Wmaybe-uninitialized.)
[[gnu::always_inline]] inline void transpose_16x16_words(__m512i (&r)[16]) {
  const __mmask16 all = 0xffff;
  const __mmask8 all64 = 0xff;
  auto lanes = [&](__m512i x, __m512i y, auto imm) { return _mm512_maskz_shuffle_i32x4(all, x, y, decltype(imm)::value); };
  using Even = std::integral_constant<int, 0x88>;  // 128-bit lanes 0, 2 of x, then of y
  using Odd = std::integral_constant<int, 0xdd>;   // lanes 1, 3
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_epi32(all, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_epi32(all, r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // r[4 i + m], 128-bit lane L: column 4 L + m of rows 4 i .. 4 i + 3
    r[4 * i] = _mm512_maskz_unpacklo_epi64(all64, t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_maskz_unpackhi_epi64(all64, t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_maskz_unpacklo_epi64(all64, t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_maskz_unpackhi_epi64(all64, t[4 * i + 1], t[4 * i + 3]);
  }
  for (int m = 0; m < 4; ++m) {
    const __m512i a = lanes(r[m], r[4 + m], Even{}), b = lanes(r[m], r[4 + m], Odd{});
    const __m512i c = lanes(r[8 + m], r[12 + m], Even{}), d = lanes(r[8 + m], r[12 + m], Odd{});
    t[m] = lanes(a, c, Even{}), t[8 + m] = lanes(a, c, Odd{});
    t[4 + m] = lanes(b, d, Even{}), t[12 + m] = lanes(b, d, Odd{});
  }
  for (int j = 0; j < 16; ++j) r[j] = t[j];
}

// The filter as the kernel's second operand: per convolution group and panel of 32 output
// channels, 2 KB per depth group (16 slot rows x 32 channels), each slot two adjacent input
// channels of one tap with the earlier in the low half -- the order in which x holds them. A
// channel's group is 64 contiguous bytes of KRSC (padded to whole channel blocks where C/G is
// not); two 16 x 16 word transposes turn 32 channels' groups into the 16 slot rows.
void pack_filter_panels(const ConvProblem& p, const AmxConvPlan& s, const uint16_t* w, uint16_t* padded,
                        char* panels) {
  const int64_t Kg = p.kg(), Cg = p.cg(), cgp = s.channel_blocks * 32, depth = s.taps * cgp;
  const int64_t per_run = s.per_run;
  const uint16_t* src = w;
  int64_t row_stride = p.ws[1], group_stride = p.ws[0];
  if (!s.filter_direct) {  // KRSC with each run (a tap's channels, or a merged row's) padded to blocks of 32
    for (int64_t g = 0; g < p.groups; ++g)
      for (int64_t k = 0; k < Kg; ++k) {
        uint16_t* row = padded + (g * Kg + k) * depth;
        const uint16_t* wk = w + g * p.ws[0] + k * p.ws[1];
        for (int64_t t = 0; t < p.filter[0]; ++t)
          for (int64_t r = 0; r < p.filter[1]; ++r)
            for (int64_t x0 = 0; x0 < p.filter[2]; x0 += per_run, row += cgp) {
              std::fill(row, row + cgp, uint16_t(0));
              for (int64_t x = x0; x < x0 + per_run; ++x) {
                const uint16_t* at = wk + t * p.ws[3] + r * p.ws[4] + x * p.ws[5];
                for (int64_t c = 0; c < Cg; ++c) row[(x - x0) * Cg + c] = at[c * p.ws[2]];
              }
            }
      }
    src = padded, row_stride = depth, group_stride = Kg * depth;
  }
  for (int64_t cg = 0; cg < p.groups; ++cg)
    for (int64_t kb = 0; kb < s.panels; ++kb) {
      char* panel = panels + std::size_t((cg * s.panels + kb) * s.depth_groups) * 2048;
      for (int64_t g = 0; g < s.depth_groups; ++g)
        for (int half = 0; half < 2; ++half) {
          __m512i r[16];
          for (int i = 0; i < 16; ++i) {
            const int64_t k = 32 * kb + 16 * half + i;
            r[i] = k < Kg ? _mm512_loadu_si512(src + cg * group_stride + k * row_stride + 32 * g) : _mm512_setzero_si512();
          }
          transpose_16x16_words(r);
          for (int q = 0; q < 16; ++q) _mm512_store_si512(panel + g * 2048 + q * 128 + half * 64, r[q]);
        }
    }
}

// One thread's buffers (AmxConvPlan::part_bytes): where each depth group's two pixel tiles lie,
// the groups that had to be staged, and the finished block (block_pixels x plan.ld f32).
struct BlockBuffers {
  tile::AmxBGroup* table;
  char* stage;
  float* out;
};

// The tiles' sources for convolution group `cg` of one pixel block: per tap (or, merged, per
// filter row) and half (16 pixels), each pixel's run of x and the part of it inside the image;
// a half whose 16 runs all lie wholly inside, equally spaced, with a whole block of 32 values
// is read from x, any other is staged: masked copies of the values present, zeros over the
// padding and past the last pixel.
void build_sources(const ConvProblem& p, const AmxConvPlan& s, const uint16_t* xg, const int64_t (&origin)[3][32],
                   int64_t np, const BlockBuffers& b) {
  const int64_t Cg = p.cg(), per_run = s.per_run, run = per_run * Cg;
  const int64_t in0 = p.in[0], in1 = p.in[1], in2 = p.in[2], xs2 = p.xs[2], xs3 = p.xs[3], xs4 = p.xs[4];
  int64_t tap = 0;
  for (int64_t t = 0; t < p.filter[0]; ++t)
    for (int64_t r = 0; r < p.filter[1]; ++r)
      for (int64_t x = 0; x < p.filter[2]; x += per_run, ++tap) {
        const int64_t at[3] = {t * p.dilation[0], r * p.dilation[1], x * p.dilation[2]};
        for (int half = 0; half < 2; ++half) {
          // Each run's start, and its values [lo, hi) inside the image. Branch-free, so that the
          // 16 pixels go as vectors: per pixel and branch by branch this loop was about 40% of
          // the bf16 conv1 (7x7 taps merged per filter row, every run staged).
          alignas(64) int64_t offset[16], lo[16], hi[16];
          for (int i = 0; i < 16; ++i) {
            const int64_t j = 16 * half + i;
            const int64_t id = origin[0][j] + at[0], ih = origin[1][j] + at[1], iw = origin[2][j] + at[2];
            const bool row = (j < np) & (id >= 0) & (id < in0) & (ih >= 0) & (ih < in1);
            lo[i] = std::min(std::max(-iw, int64_t(0)), per_run) * Cg;  // (unit dilation within a merged run)
            hi[i] = row ? std::min(std::max(in2 - iw, int64_t(0)), per_run) * Cg : 0;
            offset[i] = id * xs2 + ih * xs3 + iw * xs4;
          }
          const int64_t step = offset[1] - offset[0];
          bool spaced = true;
          for (int i = 0; i < 16; ++i)
            spaced &= (lo[i] == 0) & (hi[i] == run) & (offset[i] - offset[0] == i * step);
          for (int64_t cb = 0; cb < s.channel_blocks; ++cb) {
            const int64_t g = tap * s.channel_blocks + cb;
            const char* rows;
            int64_t stride;
            if (spaced && run - 32 * cb >= 32) {
              rows = reinterpret_cast<const char*>(xg + offset[0] + 32 * cb);
              stride = 2 * (offset[1] - offset[0]);
            } else {
              char* dst = b.stage + g * 2048 + half * 1024;
              for (int i = 0; i < 16; ++i) {
                const int64_t first = std::max<int64_t>(lo[i] - 32 * cb, 0), end = std::min<int64_t>(hi[i] - 32 * cb, 32);
                __m512i v = _mm512_setzero_si512();
                if (first < end) {
                  const __mmask32 mask = __mmask32((uint64_t(1) << end) - (uint64_t(1) << first));
                  v = _mm512_maskz_loadu_epi16(mask, xg + offset[i] + 32 * cb);
                }
                _mm512_store_si512(dst + 64 * i, v);
              }
              rows = dst, stride = 64;
            }
            if (half == 0) b.table[g].rows = rows, b.table[g].stride = stride;
            else b.table[g].rows2 = rows, b.table[g].stride2 = stride;
          }
        }
      }
}

// Each of the pixels [p0, p0 + np)'s window corner in x (tap 0's position), counted along the
// output rows from one division.
void window_origins(const ConvProblem& p, int64_t p0, int64_t np, int64_t (&origin)[3][32]) {
  int64_t ow = p0 % p.out[2], oh = p0 / p.out[2] % p.out[1], od = p0 / (p.out[1] * p.out[2]);
  for (int64_t j = 0; j < np; ++j) {
    origin[0][j] = od * p.stride[0] - p.pad[0];
    origin[1][j] = oh * p.stride[1] - p.pad[1];
    origin[2][j] = ow * p.stride[2] - p.pad[2];
    if (++ow == p.out[2]) {
      ow = 0;
      if (++oh == p.out[1]) oh = 0, ++od;
    }
  }
}

// Pixel blocks [b0, b1) of image img: every channel, panel by panel over the blocks (a panel is
// read from memory once per item, then from cache), then each block through the sink.
void run_item(const ConvProblem& p, const AmxConvPlan& s, const ConvArgs& a, const char* panels, int64_t img,
              int64_t b0, int64_t b1, const BlockBuffers* bufs) {
  const int64_t P = p.out_spatial();
  const uint16_t* x = static_cast<const uint16_t*>(a.x_narrow) + img * p.xs[0];
  const float alpha = a.alpha;
  auto pixels = [&](int64_t blk) { return std::min(block_pixels, P - blk * block_pixels); };
  for (int64_t cg = 0; cg < p.groups; ++cg) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      int64_t origin[3][32] = {};
      window_origins(p, blk * block_pixels, pixels(blk), origin);
      build_sources(p, s, x + cg * p.cg() * p.xs[1], origin, pixels(blk), bufs[blk - b0]);
    }
    for (int64_t kb = 0; kb < s.panels; ++kb) {
      const char* panel = panels + std::size_t((cg * s.panels + kb) * s.depth_groups) * 2048;
      for (int64_t blk = b0; blk < b1; ++blk) {
        const BlockBuffers& b = bufs[blk - b0];
        tile::amx_run_tile(
            s.depth_groups, panel, [&](int64_t g) { return b.table[g]; }, b.out + (cg * s.panels + kb) * 32, s.ld,
            alpha, 0.f, [] { Kernel::products(); },
            [&](float acc, float old) { return Kernel::combine(alpha, 0.f, acc, old); });
      }
    }
  }
  for (int64_t blk = b0; blk < b1; ++blk) {
    float* out = bufs[blk - b0].out;
    const int64_t np = pixels(blk);
    if (s.ld != p.k) {  // drop the panels' padding channels: rows of K (moving down only)
      const int64_t Kg = p.kg();
      for (int64_t j = 0; j < np; ++j)
        for (int64_t cg = 0; cg < p.groups; ++cg)
          std::memmove(out + j * p.k + cg * Kg, out + j * s.ld + cg * s.panels * 32, std::size_t(Kg) * 4);
    }
    a.narrow_out->store(out, (img * P + blk * block_pixels) * p.k, np * p.k);
  }
}

}  // namespace

void amx_conv_prepare_filter(const ConvProblem& p, const void* w, void* panels) {
  const AmxConvPlan s = amx_conv_plan(p);
  std::vector<uint16_t> padded(s.padded_filter_bytes / 2);
  pack_filter_panels(p, s, static_cast<const uint16_t*>(w), padded.data(), static_cast<char*>(panels));
}

void amx_conv_forward(const ConvProblem& p, const ConvArgs& a) {
  const AmxConvPlan s = amx_conv_plan(p);
  WorkspaceCarver ws(a.workspace, a.workspace_bytes);
  const char* panels = reinterpret_cast<const char*>(a.prepared_w);
  if (!panels) {
    char* packed = ws.take<char>(s.filter_bytes);
    uint16_t* padded = ws.take<uint16_t>(s.padded_filter_bytes / 2);
    pack_filter_panels(p, s, static_cast<const uint16_t*>(a.w_narrow), padded, packed);
    panels = packed;
  }
  std::byte* parts = ws.take<std::byte>(std::size_t(s.parts) * s.part_bytes);
  static_assert(sizeof(tile::AmxBGroup) == 32, "AmxConvPlan::table_bytes counts 32 bytes a depth group");
  const int64_t per_image = (s.pixel_blocks + s.item_blocks - 1) / s.item_blocks;
  parallel_for(p.n * per_image, s.parts, [&](int64_t lo, int64_t hi, int part) {
    BlockBuffers bufs[AmxConvPlan::most_item_blocks];
    for (int64_t i = 0; i < s.item_blocks; ++i) {
      std::byte* mine = parts + std::size_t(part) * s.part_bytes + std::size_t(i) * s.block_bytes;
      bufs[i] = {reinterpret_cast<tile::AmxBGroup*>(mine), reinterpret_cast<char*>(mine + s.table_bytes),
                 reinterpret_cast<float*>(mine + s.table_bytes + s.stage_bytes)};
    }
    const tile::AmxTiles tiles;
    for (int64_t item = lo; item < hi; ++item) {
      const int64_t b0 = item % per_image * s.item_blocks;
      run_item(p, s, a, panels, item / per_image, b0, std::min(s.pixel_blocks, b0 + s.item_blocks), bufs);
    }
  });
}

}  // namespace strata::dnn::detail
