// Forward convolution as implicit GEMM on the tile engine, compiled once per ISA
// (implicit_gemm_<isa>.cpp). Operands come from tile/conv_operand.hpp: the image operand
// gathers input pixels (zero in the padding) straight into the packed panels.
//
// Orientation is chosen so that C is the output tensor with unit row stride:
//   channels contiguous (NHWC-like):   Y[k, pixel]  = W[k, l]      X[l, pixel]     (one GEMM per group)
//   pixels contiguous (NCHW-like):     Y[pixel, k]  = X[pixel, l]  W[k, l]^T       (per image and group)
// except that NCHW output whose pixels would leave ragged row panels is computed as the first
// form into a staged block and transposed into y (pixels_first_staged). The fused forward's
// epilogue becomes a tile epilogue program: residual add, bias (per row of C when channels are
// rows, per column otherwise), activation. Problems with filters wider than 1x1 and undilated
// rows skip the gather when their input runs are short (few channels) or when they read
// channels-last input or write pixels-first output: their input rows are read in place from
// row bands (implicit_gemm_band.hpp). NCHW inputs gathered or banded through filters wider
// than 1x1 are read from a channels-last copy of the image.
#pragma once
#include <array>
#include <type_traits>

#include "implicit_gemm_band.hpp"
#include "problem.hpp"
#include "strata/core/cpu.hpp"
#include "strata/tile/conv_operand.hpp"
#include "strata/tile/epilogue.hpp"
#include "strata/tile/gemm.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::dnn::detail {

inline tile::Activation tile_activation(Activation a) {
  switch (a) {
    case Activation::identity: return tile::Activation::none;
    case Activation::relu: return tile::Activation::relu;
    case Activation::relu6: return tile::Activation::clamp;
    case Activation::sigmoid: return tile::Activation::sigmoid;
    case Activation::tanh: return tile::Activation::tanh;
  }
  return tile::Activation::none;
}

// Calls run(epilogue) with the tile epilogue of one GEMM whose C starts `y_offset` elements
// into y and covers output channels [k0, k0 + kg): NoEpilogue when there is nothing to do.
template <class Run>
void with_tile_epilogue(const ConvEpilogue* e, bool channels_are_rows, int64_t y_offset, int64_t ldc, int64_t k0,
                        Run&& run) {
  if (!e || (!e->z && !e->bias && e->act == Activation::identity)) return run(tile::NoEpilogue{});
  std::array<tile::EpilogueStep<float>, 3> steps{};
  std::size_t n = 0;
  if (e->z) {
    steps[n].kind = tile::EpilogueKind::residual_add;
    steps[n].src = e->z + y_offset;
    steps[n].ld = ldc;
    steps[n++].a = e->alpha2;
  }
  if (e->bias) {
    steps[n].kind = channels_are_rows ? tile::EpilogueKind::bias_row : tile::EpilogueKind::bias_col;
    steps[n++].vec = e->bias + k0;
  }
  if (e->act != Activation::identity) {
    steps[n].kind = tile::EpilogueKind::activation;
    steps[n].act = tile_activation(e->act);
    steps[n].a = 0.f;  // relu6 is clamp(0, 6)
    steps[n++].b = 6.f;
  }
  run(tile::EpilogueProgram<float>{steps.data(), n});
}

// Block sizes of Kernel for this machine's caches, derived once.
template <class Kernel>
const tile::BlockSizes& implicit_gemm_blocks() {
  const CpuFeatures& f = cpu_features();
  static const tile::BlockSizes bs =
      tile::derive_block_sizes(Kernel::mr, Kernel::nr, sizeof(float), f.l1d_bytes, f.l2_bytes, f.l3_bytes);
  return bs;
}

// One group's geometry (x may be null when only the filter is read). Static: this header is
// compiled once per ISA, and an inline copy built with wider vectors must not be the one kept.
static inline tile::ConvGeometry group_geometry(const ConvProblem& p, const float* x, const float* w, int64_t g) {
  tile::ConvGeometry geo;
  geo.n = p.n, geo.c = p.cg();
  geo.in = p.in, geo.filter = p.filter, geo.out = p.out;
  geo.pad = p.pad, geo.stride = p.stride, geo.dilation = p.dilation;
  geo.x = x ? x + g * p.cg() * p.xs[1] : nullptr;
  geo.xs = p.xs;
  geo.w = w + g * p.ws[0];
  geo.ws = {p.ws[1], p.ws[2], p.ws[3], p.ws[4], p.ws[5]};
  geo.channels_inner = p.xs[1] == 1;
  return geo;
}

// Pixels-first (NCHW) output puts pixels on the tile's rows (C = Y[pixel, k], written in
// place), except where whole row panels would pad the pixels by more than a sixteenth (res5's
// 49 = 3 x 16 + 1: the last row ran a half-height tile for one pixel): there the channels
// are the rows, as for channels-last output, into a staging block transposed into y
// ("staged"). Measured on the NCHW res5 1x1 layers (prepared filters, b1, 1 thread):
// 0.83-0.86x -> 0.91-0.95x of oneDNN, res5_proj_s2 0.77-0.80x -> 0.87-0.90x; staging every
// layer lost 5-15% on the larger images (the staged block many times the input).
template <class Kernel>
bool pixels_first_staged(const ConvProblem& p) {
  if (implicit_gemm_channels_last(p) || band_serves(p)) return false;
  constexpr int64_t rows = Kernel::HalfRows::mr;  // the finest row granularity of the kernels
  const int64_t P = p.out_spatial();
  return ((P + rows - 1) / rows * rows - P) * 16 > P;
}

// The prepared filter (dnn::prepare_forward_filter): a header (kPreparedHeaderFloats floats, so
// the panels stay aligned) saying whether a pixels-first output is staged, the panels' width
// and their depth order, then per group the filter packed once as the GEMM operand it is —
// panels of MR output channels when channels are the rows (channels-last output, the band
// path, staged; the tall kernel's MR where it runs), of NR when pixels are — over the whole
// reduction depth, in the image operand's reduction order: channels innermost, except for a
// channels-last output gathered from an input without contiguous channels (pixels-first
// outputs gather from channels-last copies of such inputs). A filter prepared on one problem
// serves calls with other batch and image sizes in its own orientation (the unprepared result
// bitwise when that is the call's own, else up to summation order), and other strides,
// paddings and dilations, its panels recut per call where these take another form.
inline constexpr int64_t kPreparedHeaderFloats = 16;
inline bool filter_as_rows(const ConvProblem& p, bool staged) {
  return implicit_gemm_channels_last(p) || band_serves(p) || staged;
}
// Whether the band walks (implicit_gemm_band.hpp) take the ISA's tall kernel (Tall:
// tile::KernelF32Tall, 64x6 on AVX-512) instead of Kernel (32x12): where one of its filter
// panels (Tall::mr channels over the whole depth) fits in half of L2. A band tile reads the
// image in place, each pixel's run in lines of its own, so a step of a 12-pixel tile
// broadcasts from 12 places and the loads, not the FMAs, set the pace; a 6-pixel tile loads 10
// values per 24 FMAs, not 14, and reads twice the filter bytes per FMA, from L1 or L2.
// In-process on AVX-512 against 32x12 (docs/PERFORMANCE.md): conv1 1.07-1.13x, res3_3x3_s2
// 1.06-1.10x, res4_3x3_s2 1.07-1.15x; res5_3x3_s2 (1.2 MB panels) 0.93-0.94x at batch 1, so
// not there. The channels-last 1x1 layers read B in place too; walked down the columns, their
// filter, where it outgrows L1, comes from L2 for every 6 pixels instead of 12 (0.92-1.02x), so
// on 64x6 they walk tile-stationary (pointwise_stationary, below), and down the columns only
// where the filter fits in half of L1 (res2_1x1_64_64, 16 KB: 0.96-1.04x on 1 thread, 1.01-1.17x
// on 2).
// plain_pointwise: a 1x1, stride-1, unpadded layer, a plain GEMM on the tensors as they lie.
// pointwise_in_place: such a layer from packed channels-last x into channels-last y, whose B
// (pixel j's channels at x + j C) is read in place.
inline bool plain_pointwise(const ConvProblem& p) {
  return p.filter_spatial() == 1 && p.unit_stride() && p.pad == std::array<int64_t, 3>{0, 0, 0};
}
inline bool pointwise_in_place(const ConvProblem& p) {
  return implicit_gemm_channels_last(p) && p.x_nhwc() && plain_pointwise(p);
}
// pointwise_stationary: such a layer walked tile-stationary on the tall kernel (a distinct one:
// AVX-512's 64x6), filters up to half of L2: each 64-channel tile, 128 deep (tile::
// stationary_blocks), stays in L1 while it meets 192 pixels' runs, which stream from L2 -- the
// filter is read from L2 once per 192 pixels, not once per 12, and a step loads 10 values per
// 24 FMAs, not 14. Stand-alone against the 32x12 column walk (fractions of an FMA-only loop,
// interleaved): 0.90-0.93 against 0.92-0.96 in quiet minutes, 0.76-0.86 against 0.62-0.81 in
// the host's slow phases, which the column walk's L2 stream of the filter suffers most from.
// In the library (res2-res4 1x1 layers summed, batch 1, 1 thread, 25 runs alternating with the
// column-walk build): 0.95-0.99x of oneDNN, against 0.87-1.01x down the columns (0.87-0.92x in
// every slow run); in-process 0.97-1.02x of the column walk in quiet minutes, 1.02-1.12x in slow
// ones. Larger filters (res5) keep the column walks, which fetch their A slices from memory; one
// tile's worth of channels (res2_1x1_256_64) has nothing to hold still: 0.96-1.00x on 64x6.
template <class Kernel, class Tall>
bool pointwise_stationary(const ConvProblem& p) {
  return !std::is_same_v<Kernel, Tall> && pointwise_in_place(p) && p.kg() > Tall::mr &&
         band_filter_bytes(p) <= int64_t(cpu_features().l2_bytes) / 2;
}
template <class Kernel, class Tall>
bool takes_tall_kernel(const ConvProblem& p) {
  if (pointwise_stationary<Kernel, Tall>(p)) return true;
  if (pointwise_in_place(p)) return band_filter_bytes(p) <= int64_t(cpu_features().l1d_bytes) / 2;
  if (!band_serves(p)) return false;
  return Tall::mr * p.cg() * p.filter_spatial() * int64_t(sizeof(float)) <= band_l2_bytes() / 2;
}
// Calls run.template operator()<K>() with the channels-as-rows kernel K for p where it reads
// the image in place (the band walks, the channels-last 1x1 layers).
template <class Kernel, class Tall, class Run>
void with_rows_kernel(const ConvProblem& p, Run&& run) {
  if (takes_tall_kernel<Kernel, Tall>(p)) run.template operator()<Tall>();
  else run.template operator()<Kernel>();
}
// Output channels per filter panel: the tall kernel's rows, or Kernel's rows or columns.
template <class Kernel, class Tall>
int64_t filter_panel_width(const ConvProblem& p, bool staged) {
  if (takes_tall_kernel<Kernel, Tall>(p)) return Tall::mr;
  return filter_as_rows(p, staged) ? Kernel::mr : Kernel::nr;
}
template <class Kernel, class Tall>
int64_t prepared_group_floats(const ConvProblem& p, bool staged) {
  const int64_t w = filter_panel_width<Kernel, Tall>(p, staged);
  return (p.kg() + w - 1) / w * filter_panel_stride(p.cg() * p.filter_spatial(), w);
}
template <class Kernel, class Tall>
std::size_t prepared_filter_floats(const ConvProblem& p) {
  // Room for either orientation: the call may take the other one (see above).
  const int64_t most =
      std::max(prepared_group_floats<Kernel, Tall>(p, false), prepared_group_floats<Kernel, Tall>(p, true));
  return std::size_t(kPreparedHeaderFloats + p.groups * most);
}
// Whether the filter panels' depth runs over channels innermost (l = tap C + c), the image
// operand's order, else over taps innermost (l = c taps + tap).
inline bool filter_channels_inner(const ConvProblem& p) {
  return p.xs[1] == 1 || band_serves(p) || !implicit_gemm_channels_last(p);
}
// One group's filter (geo) into dst as panels for the orientation `staged` says.
template <class Kernel, class Tall>
void pack_group_filter(const ConvProblem& p, const tile::ConvGeometry& geo, bool staged, float* dst) {
  tile::ConvGeometry order = geo;
  order.channels_inner = filter_channels_inner(p);
  const tile::FilterOperand filter{&order, 0};
  auto pack = [&]<int W>(std::integral_constant<int, W>) {
    const int64_t stride = filter_panel_stride(geo.depth(), W);
    for (int64_t i = 0; i < p.kg(); i += W)
      filter.template pack<W>(i, std::min<int64_t>(W, p.kg() - i), 0, geo.depth(), dst + i / W * stride);
  };
  const int64_t width = filter_panel_width<Kernel, Tall>(p, staged);
  if (width == Tall::mr) pack(std::integral_constant<int, Tall::mr>{});
  else if (width == Kernel::mr) pack(std::integral_constant<int, Kernel::mr>{});
  else pack(std::integral_constant<int, Kernel::nr>{});
}
template <class Kernel, class Tall>
void prepare_filter(const ConvProblem& p, const float* w, float* out) {
  const bool staged = pixels_first_staged<Kernel>(p);
  std::fill(out, out + kPreparedHeaderFloats, 0.f);
  out[0] = staged ? 1.f : 0.f;
  out[1] = float(filter_panel_width<Kernel, Tall>(p, staged));
  out[2] = filter_channels_inner(p) ? 1.f : 0.f;
  for (int64_t g = 0; g < p.groups; ++g)
    pack_group_filter<Kernel, Tall>(p, group_geometry(p, nullptr, w, g), staged,
                                    out + kPreparedHeaderFloats + g * prepared_group_floats<Kernel, Tall>(p, staged));
}

// The panels of a filter prepared on another problem (the same channels and filter; the call
// may differ in stride, padding or dilation) recut for this call where it takes panels of
// another width (the tall kernel's band against a gathered image) or another depth order
// (filter_channels_inner): kg channels over taps x C steps, panels filter_panel_stride apart,
// lanes past kg zero. Before the order was recorded, a filter prepared on the band over NCHW x
// gave wrong results on a call with a dilated row (gathered from the planes, taps innermost).
struct PanelForm {
  int64_t width;
  bool channels_inner;
  bool operator==(const PanelForm&) const = default;
};
inline void recut_panels(const float* src, PanelForm from, float* dst, PanelForm to, int64_t taps, int64_t C,
                         int64_t kg) {
  const int64_t depth = taps * C;
  const int64_t src_stride = filter_panel_stride(depth, from.width), dst_stride = filter_panel_stride(depth, to.width);
  for (int64_t k0 = 0; k0 < kg; k0 += to.width) {
    float* panel = dst + k0 / to.width * dst_stride;
    for (int64_t l = 0; l < depth; ++l) {
      // Step l of `to` as (tap, c), then as a step of `from`.
      const int64_t tap = to.channels_inner ? l / C : l % taps, c = to.channels_inner ? l % C : l / taps;
      const int64_t ls = from.channels_inner ? tap * C + c : c * taps + tap;
      for (int64_t i = 0; i < to.width; ++i) {
        const int64_t k = k0 + i;
        panel[l * to.width + i] =
            k < kg ? src[k / from.width * src_stride + ls * from.width + k % from.width] : 0.f;
      }
    }
  }
}

// Pixels per staging block of a staged output: the whole image when its kg x P block fits in
// L2, else blocks of half of L2.
template <class Kernel>
int64_t pixel_block(int64_t kg, int64_t P) {
  const int64_t l2 = band_l2_bytes() / int64_t(sizeof(float));
  if (kg * P <= l2) return P;
  return std::max<int64_t>(8 * Kernel::nr, l2 / 2 / kg / Kernel::nr * Kernel::nr);
}

// Image x_img's channels of one group (geo) as a channels-last copy (pixel-major, channels
// contiguous) in this thread's staging buffer; returns it.
static inline const float* to_channels_last(const ConvProblem& p, const tile::ConvGeometry& geo, const float* x_img) {
  const int64_t C = geo.c, H = p.in[1], W = p.in[2], pixels = p.in_spatial();
  float* dst = static_cast<float*>(tile::thread_pack_buffer(2).get(sizeof(float) * std::size_t(pixels * C)));
  const auto& xs = p.xs;
  if (pixel_planes(p.in, xs)) {
    planes_to_channels_last(x_img, 0, xs[1], 1, C, pixels, dst, p.threads, transpose_blocks);
    return dst;
  }
  parallel_for(p.in[0] * H, p.threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t row = lo; row < hi; ++row) {
      const float* src = x_img + (row / H) * xs[2] + (row % H) * xs[3];
      float* out = dst + row * W * C;
      for (int64_t w = 0; w < W; ++w)
        for (int64_t c = 0; c < C; ++c) out[w * C + c] = src[c * xs[1] + w * xs[4]];
    }
  });
  return dst;
}

// One image of group geo as its channels-last copy at x (to_channels_last) lies.
static inline tile::ConvGeometry channels_last_copy(const ConvProblem& p, const tile::ConvGeometry& geo,
                                                    const float* x) {
  tile::ConvGeometry c = geo;
  const int64_t cg = geo.c;
  c.channels_inner = true;
  c.n = 1, c.x = x;
  c.xs = {p.in_spatial() * cg, 1, p.in[1] * p.in[2] * cg, p.in[2] * cg, cg};
  return c;
}

template <class Kernel, class Tall>
void run_implicit_gemm(const ConvProblem& p, const ConvArgs& a) {
  float* x = a.x;
  float* y = a.y;
  const float alpha = a.alpha, beta = a.beta;
  const bool prepared = a.prepared_w != nullptr;
  const tile::BlockSizes& bs = implicit_gemm_blocks<Kernel>();
  const int64_t cg = p.cg(), kg = p.kg(), P = p.out_spatial();
  // A plain 1x1 layer (plain_pointwise) gives the engine matrix views, so that it can use its
  // in-place and fast packing paths.
  // A prepared filter's orientation is its header's; an unprepared call chooses by shape.
  const bool staged = prepared ? a.prepared_w[0] != 0.f : pixels_first_staged<Kernel>(p);
  const int64_t group_floats = prepared_group_floats<Kernel, Tall>(p, staged);
  // Filter panels (W: the kernel's MR or NR) as the mainloop reads them; group g's prepared ones.
  auto panels_operand = [&]<int W>(std::integral_constant<int, W>, const float* panels) {
    const int64_t depth = p.cg() * p.filter_spatial();
    return tile::PrepackedOperand<float, W>{panels, depth, 0, filter_panel_stride(depth, W)};
  };
  // The prepared panels, recut where they were prepared in another form (recut_panels).
  const float* prepared_groups = prepared ? a.prepared_w + kPreparedHeaderFloats : nullptr;
  if (prepared) {
    const PanelForm from{int64_t(a.prepared_w[1]), a.prepared_w[2] != 0.f};
    const PanelForm to{filter_panel_width<Kernel, Tall>(p, staged), filter_channels_inner(p)};
    if (from != to) {
      const int64_t depth = cg * p.filter_spatial();
      const int64_t from_floats = (kg + from.width - 1) / from.width * filter_panel_stride(depth, from.width);
      float* cut = static_cast<float*>(
          tile::thread_pack_buffer(5).get(sizeof(float) * std::size_t(p.groups * group_floats)));
      for (int64_t g = 0; g < p.groups; ++g)
        recut_panels(prepared_groups + g * from_floats, from, cut + g * group_floats, to, p.filter_spatial(), cg, kg);
      prepared_groups = cut;
    }
  }
  auto prepared_panels = [&](int64_t g) { return prepared_groups + g * group_floats; };
  auto prepared_operand = [&]<int W>(std::integral_constant<int, W> width, int64_t g) {
    return panels_operand(width, prepared_panels(g));
  };
  constexpr std::integral_constant<int, Kernel::mr> rows{};
  constexpr std::integral_constant<int, Kernel::nr> cols{};
  constexpr std::integral_constant<int, Tall::mr> tall_rows{};
  // Group g's filter as its prepared panels (unstaged orientation): from the call, or packed
  // now into this thread's pack buffer `buffer`.
  auto filter_panels = [&](const tile::ConvGeometry& geo, int64_t g, int buffer) -> const float* {
    if (prepared) return prepared_panels(g);
    float* packed =
        static_cast<float*>(tile::thread_pack_buffer(buffer).get(sizeof(float) * std::size_t(group_floats)));
    pack_group_filter<Kernel, Tall>(p, geo, false, packed);
    return packed;
  };
  for (int64_t g = 0; g < p.groups; ++g) {
    const tile::ConvGeometry geo = group_geometry(p, x, prepared ? nullptr : a.w, g);
    const tile::ImageOperand image{&geo, 0};
    const tile::FilterOperand filter{&geo, 0};
    const int64_t group_offset = g * kg * p.ys[1];
    float* yg = y + group_offset;
    const tile::MatrixView<float> filter_view{geo.w, geo.ws[0], geo.ws[1]};  // (kk, c)
    if (implicit_gemm_channels_last(p)) {
      // C = Y[k, pixel] for the whole batch: channels are rows.
      with_tile_epilogue(a.epilogue, true, group_offset, p.k, g * kg, [&](const auto& epi) {
        const int64_t m = kg, n = p.n * P;
        const tile::MatrixView<float> pixels{geo.x, 1, p.c};  // (c, pixel) in place: channels contiguous
        if (pointwise_stationary<Kernel, Tall>(p)) {
          // The filter as panels (prepared, or packed now), walked tile-stationary over x in place.
          tile::PackPolicy policy;
          policy.pack_b = false, policy.stationary_a = true;
          tile::gemm_operands<Tall>(m, n, cg, alpha, panels_operand(tall_rows, filter_panels(geo, g, 0)),
                                    tile::b_operand(pixels), beta, yg, p.k, p.threads, implicit_gemm_blocks<Tall>(),
                                    epi, policy);
        } else if (pointwise_in_place(p)) {
          with_rows_kernel<Kernel, Tall>(p, [&]<class K>() {
            const tile::BlockSizes& kbs = implicit_gemm_blocks<K>();
            tile::GemmArgs<float> args;
            args.m = m, args.n = n, args.k = cg, args.alpha = alpha, args.beta = beta, args.c = yg, args.ldc = p.k;
            args.a = filter_view;
            args.b = pixels;
            if (!prepared) return tile::gemm<K>(args, p.threads, kbs, epi);
            tile::gemm_operands<K>(m, n, cg, alpha, prepared_operand(std::integral_constant<int, K::mr>{}, g),
                                   tile::b_operand(args.b), beta, yg, p.k, p.threads, kbs, epi,
                                   tile::choose_pack_policy<K>(args, kbs));
          });
        } else if (band_serves(p)) {
          with_rows_kernel<Kernel, Tall>(p, [&]<class K>() {
            if (band_panels_outer(p)) run_band_padded<K>(p, geo, filter_panels(geo, g, 0), yg, p.k, alpha, beta, epi);
            else run_band<K>(p, geo, filter_panels(geo, g, 0), yg, p.k, alpha, beta, epi);
          });
        } else {
          auto run = [&](const auto& filter_op) {
            tile::gemm_operands<Kernel>(m, n, geo.depth(), alpha, filter_op, image, beta, yg, p.k, p.threads, bs, epi,
                                        tile::PackPolicy{});
          };
          if (prepared) run(prepared_operand(rows, g));
          else run(filter);
        }
      });
      continue;
    }
    // Pixels-first output (NCHW), per image: the row-band path, the staged channels-as-rows
    // GEMM, or C = Y[pixel, k] in place.
    const bool pointwise_view = plain_pointwise(p) && pixel_planes(p.in, p.xs);
    const int64_t ldc = std::max<int64_t>(p.ys[1], P);
    if (band_serves(p)) {  // rows read from bands, each output row (or image) staged and transposed
      const float* panels = filter_panels(geo, g, 0);
      for (int64_t img = 0; img < p.n; ++img) {
        const int64_t offset = group_offset + img * p.ys[0];
        with_tile_epilogue(a.epilogue, false, offset, ldc, g * kg, [&](const auto& epi) {
          with_rows_kernel<Kernel, Tall>(p, [&]<class K>() {
            if (!band_panels_outer(p)) return run_band<K>(p, geo, panels, y + offset, ldc, alpha, beta, epi, img);
            // Long runs: the image channels-last (a copy of an NCHW one), then the padded band.
            const float* x_img = geo.x + img * p.xs[0];
            tile::ConvGeometry one = geo;
            if (geo.channels_inner) one.n = 1, one.x = x_img;
            else one = channels_last_copy(p, geo, to_channels_last(p, geo, x_img));
            run_band_padded<K>(p, one, panels, y + offset, ldc, alpha, beta, epi, true);
          });
        });
      }
      continue;
    }
    // The gathered operand reads channel runs: an input without contiguous channels is first
    // transposed, one image at a time, into a channels-last copy (NCHW res3_3x3_s2: the gather
    // of stride-2 runs from each plane was a quarter of the time; the copy costs ~1%). Not for
    // 1x1 filters: a strided one reads each input pixel at most once anyway (and the copy
    // would move all of them for a quarter read).
    const bool convert = !pointwise_view && !geo.channels_inner && p.filter_spatial() > 1;
    // The image as the gather reads it (a 1x1 filter has one order).
    tile::ConvGeometry cgeo = convert ? channels_last_copy(p, geo, nullptr) : geo;
    const tile::FilterOperand filter_gathered{&cgeo, 0};  // in the gather's order
    if (staged) {
      // Channels as rows, per image and block of pixels, into a staging block transposed into
      // y (beta and the epilogue applied there).
      const int64_t block = pixel_block<Kernel>(kg, P);
      float* stage = static_cast<float*>(tile::thread_pack_buffer(3).get(sizeof(float) * std::size_t(kg * block)));
      for (int64_t img = 0; img < p.n; ++img) {
        const int64_t offset = group_offset + img * p.ys[0];
        float* y_img = y + offset;
        const float* x_img = geo.x + img * p.xs[0];
        if (convert) cgeo.x = to_channels_last(p, geo, x_img);
        with_tile_epilogue(a.epilogue, false, offset, ldc, g * kg, [&](const auto& epi) {
          for (int64_t p0 = 0; p0 < P; p0 += block) {
            const int64_t nb = std::min(block, P - p0);
            if (pointwise_view) {
              tile::GemmArgs<float> args;  // (c, pixel): planes xs[1] apart, pixels contiguous
              args.m = kg, args.n = nb, args.k = cg, args.alpha = alpha, args.c = stage, args.ldc = kg;
              args.a = filter_view;
              args.b = {x_img + p0, p.xs[1], 1};
              if (!prepared) tile::gemm<Kernel>(args, p.threads, bs);
              else
                tile::gemm_operands<Kernel>(kg, nb, cg, alpha, prepared_operand(rows, g), tile::b_operand(args.b),
                                            0.f, stage, kg, p.threads, bs, tile::NoEpilogue{},
                                            tile::choose_pack_policy<Kernel>(args, bs));
            } else {
              const tile::ImageOperand pixels{&cgeo, (convert ? 0 : img * P) + p0};
              auto run = [&](const auto& filter_op) {
                tile::gemm_operands<Kernel>(kg, nb, cgeo.depth(), alpha, filter_op, pixels, 0.f, stage, kg,
                                            p.threads, bs, tile::NoEpilogue{}, tile::PackPolicy{});
              };
              if (prepared) run(prepared_operand(rows, g));
              else run(filter_gathered);
            }
            // Channel blocks of 8 among the threads: transposed, then finished while in cache.
            parallel_for((kg + 7) / 8, p.threads, [&](int64_t lo, int64_t hi, int) {
              const int64_t k0 = lo * 8, k1 = std::min(kg, hi * 8);
              if (k0 >= k1) return;
              transpose_blocks(stage + k0, kg, k1 - k0, nb, y_img + k0 * ldc + p0, ldc, 1.f, beta);
              if constexpr (!std::decay_t<decltype(epi)>::is_identity)
                epi(y_img + k0 * ldc + p0, ldc, p0, k0, nb, k1 - k0);
            });
          }
        });
      }
      continue;
    }
    // Pixels as rows: C = Y[pixel, k] per image, written in place. A gathered image takes the
    // filter as prepacked panels, the prepared ones or packed here once for all images: the
    // prepared call's operand, so the two agree bitwise (the engine's k blocks depend on it).
    const float* panels = pointwise_view ? nullptr : filter_panels(geo, g, 4);
    for (int64_t img = 0; img < p.n; ++img) {
      const int64_t offset = group_offset + img * p.ys[0];
      if (convert) cgeo.x = to_channels_last(p, geo, geo.x + img * p.xs[0]);
      with_tile_epilogue(a.epilogue, false, offset, ldc, g * kg, [&](const auto& epi) {
        if (pointwise_view) {
          tile::GemmArgs<float> args;
          args.m = P, args.n = kg, args.k = cg, args.alpha = alpha, args.beta = beta;
          args.c = y + offset, args.ldc = ldc;
          args.a = {geo.x + img * p.xs[0], 1, p.xs[1]};  // (pixel, c)
          args.b = filter_view.transposed();             // (c, kk)
          if (!prepared) return tile::gemm<Kernel>(args, p.threads, bs, epi);
          tile::gemm_operands<Kernel>(P, kg, cg, alpha, tile::a_operand(args.a),
                                      prepared_operand(cols, g), beta, y + offset, ldc, p.threads,
                                      bs, epi, tile::choose_pack_policy<Kernel>(args, bs));
        } else {
          const tile::ImageOperand pixels{&cgeo, convert ? 0 : img * P};
          tile::gemm_operands<Kernel>(P, kg, geo.depth(), alpha, pixels, panels_operand(cols, panels), beta,
                                      y + offset, ldc, p.threads, bs, epi, tile::PackPolicy{});
        }
      });
    }
  }
}

// What implicit_gemm_<isa>.cpp provides: the forward and the filter preparation for its kernel.
struct ImplicitGemmIsa {
  void (*forward)(const ConvProblem&, const ConvArgs&);
  std::size_t (*prepared_floats)(const ConvProblem&);
  void (*prepare)(const ConvProblem&, const float* w, float* out);
  int64_t tile_columns;  // Kernel::nr (implicit_gemm_tile_columns)
};

template <class Kernel, class Tall>
constexpr ImplicitGemmIsa implicit_gemm_isa() {
  return {run_implicit_gemm<Kernel, Tall>, prepared_filter_floats<Kernel, Tall>, prepare_filter<Kernel, Tall>,
          Kernel::nr};
}

// One entry per ISA (implicit_gemm_<isa>.cpp).
extern const ImplicitGemmIsa implicit_gemm_portable, implicit_gemm_avx2, implicit_gemm_avx512;

}  // namespace strata::dnn::detail
