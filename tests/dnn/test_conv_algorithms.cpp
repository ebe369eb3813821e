// Every algorithm x every operation it supports, against the double-precision reference, over
// a sweep of shapes: odd sizes, padding larger than the kernel, stride > 1, dilation, groups
// and depthwise, 1x1/3x3/5x5/7x7, batch 1 and > 1, 1-D/2-D/3-D, both layouts, both filter
// layouts, convolution and cross-correlation, alpha/beta blending (beta == 0 with NaN outputs).
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "conv_test_util.hpp"
#include "strata/tile/blocking.hpp"
#include "support/gemm_trace.hpp"

namespace strata::dnn::test {
namespace {

struct Case {
  Spec spec;
  Layout layout;
  FilterLayout fl;
};

std::string case_name(const Case& c) {
  return c.spec.name + (c.layout == Layout::nchw ? "_nchw" : "_nhwc") + (c.fl == FilterLayout::kcrs ? "_kcrs" : "_krsc");
}

// Runs `op` with `algo` (throws through if unsupported) and checks it; returns false when the
// algorithm does not support the problem.
bool run_and_check(const Handle& h, const Case& cs, ConvOp op, ConvAlgo algo, float alpha, float beta) {
  const Descs d = make_descs(cs.spec, cs.layout, cs.fl);
  std::size_t ws_bytes = 0;
  try {
    switch (op) {
      case ConvOp::forward: ws_bytes = forward_workspace_size(h, d.x, d.w, d.conv, d.y, algo); break;
      case ConvOp::backward_data: ws_bytes = backward_data_workspace_size(h, d.w, d.y, d.conv, d.x, algo); break;
      case ConvOp::backward_filter: ws_bytes = backward_filter_workspace_size(h, d.x, d.y, d.conv, d.w, algo); break;
    }
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::not_supported);
    EXPECT_EQ(e.argument(), "algo");
    return false;
  }
  auto ws = make_aligned<std::byte>(std::max<std::size_t>(ws_bytes, 1));
  const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
  const auto x = random_floats(d.x.span(), 11), w = random_floats(d.w.element_count(), 12),
             y = random_floats(d.y.span(), 13);
  const int64_t reduction =
      op == ConvOp::backward_filter ? d.x.dim(0) * d.y.element_count() / (d.y.dim(0) * d.y.dim(1))
                                    : op == ConvOp::forward ? d.w.element_count() / d.w.dim(0) : d.w.element_count() / d.w.dim(1);
  const std::string what = case_name(cs) + " " + std::string(conv_op_name(op)) + " " + std::string(conv_algo_name(algo)) +
                           " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  switch (op) {
    case ConvOp::forward: {
      std::vector<float> out = beta == 0.f ? std::vector<float>(y.size(), nan) : y;
      convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, algo, ws.get(), ws_bytes, &beta, d.y,
                          out.data());
      const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
      EXPECT_EQ(check_against(out, ref, y, alpha, beta, offsets_of(d.y.dims(), d.y.strides()), reduction, algo, what), 0);
      break;
    }
    case ConvOp::backward_data: {
      std::vector<float> out = beta == 0.f ? std::vector<float>(x.size(), nan) : x;
      convolution_backward_data(h, &alpha, d.w, w.data(), d.y, y.data(), d.conv, algo, ws.get(), ws_bytes, &beta, d.x,
                                out.data());
      const auto ref = testref::ref_backward_data(geo, to_double(y), to_double(w), d.x.span());
      EXPECT_EQ(check_against(out, ref, x, alpha, beta, offsets_of(d.x.dims(), d.x.strides()), reduction, algo, what), 0);
      break;
    }
    case ConvOp::backward_filter: {
      std::vector<float> out = beta == 0.f ? std::vector<float>(w.size(), nan) : w;
      convolution_backward_filter(h, &alpha, d.x, x.data(), d.y, y.data(), d.conv, algo, ws.get(), ws_bytes, &beta,
                                  d.w, out.data());
      const auto ref = testref::ref_backward_filter(geo, to_double(x), to_double(y), d.w.element_count());
      std::vector<int64_t> offs(std::size_t(d.w.element_count()));
      for (std::size_t i = 0; i < offs.size(); ++i) offs[i] = int64_t(i);
      EXPECT_EQ(check_against(out, ref, w, alpha, beta, offs, reduction, algo, what), 0);
      break;
    }
  }
  return true;
}

TEST(ConvAlgorithms, SweepEveryAlgorithmAndOperationAgainstReference) {
  Handle h;
  h.set_num_threads(2);
  std::map<std::pair<int, int>, int> exercised;  // (algo, op) -> cases
  for (const Spec& s : conv_sweep())
    for (Layout layout : {Layout::nchw, Layout::nhwc})
      for (FilterLayout fl : {FilterLayout::kcrs, FilterLayout::krsc}) {
        // Mixed activation/filter layouts only for a few shapes (they take the repacking path).
        const bool natural = (layout == Layout::nchw) == (fl == FilterLayout::kcrs);
        if (!natural && s.name != "odd_3x3" && s.name != "groups2" && s.name != "k5") continue;
        const Case cs{s, layout, fl};
        for (ConvOp op : {ConvOp::forward, ConvOp::backward_data, ConvOp::backward_filter})
          for (int a = 0; a < conv_algo_count; ++a) {
            const bool blended = (a + int(op)) % 2 == 1;  // alternate plain and alpha/beta runs
            if (run_and_check(h, cs, op, ConvAlgo(a), blended ? 1.5f : 1.f, blended ? 0.5f : 0.f))
              ++exercised[{a, int(op)}];
          }
      }
  // Every algorithm must have run every operation it claims (implicit_gemm is forward only;
  // Winograd and FFT have no backward-filter).
  auto ran = [&](ConvAlgo a, ConvOp op) { return exercised[{int(a), int(op)}]; };
  for (ConvOp op : {ConvOp::forward, ConvOp::backward_data, ConvOp::backward_filter}) {
    EXPECT_GT(ran(ConvAlgo::direct, op), 40);
    EXPECT_GT(ran(ConvAlgo::im2col_gemm, op), 40);
  }
  for (ConvAlgo a : {ConvAlgo::winograd_2x2_3x3, ConvAlgo::winograd_4x4_3x3, ConvAlgo::fft_tiled}) {
    EXPECT_GT(ran(a, ConvOp::forward), 8) << conv_algo_name(a);
    EXPECT_GT(ran(a, ConvOp::backward_data), 6) << conv_algo_name(a);
    EXPECT_EQ(ran(a, ConvOp::backward_filter), 0) << conv_algo_name(a);
  }
  EXPECT_GT(ran(ConvAlgo::implicit_gemm, ConvOp::forward), 40);
  EXPECT_EQ(ran(ConvAlgo::implicit_gemm, ConvOp::backward_data), 0);
  EXPECT_EQ(ran(ConvAlgo::implicit_gemm, ConvOp::backward_filter), 0);
}

TEST(ConvAlgorithms, ImplicitGemmServesBothLayoutsForwardAndSaysWhy) {
  Handle h;
  for (Layout layout : {Layout::nchw, Layout::nhwc}) {
    const Descs d = make_descs(conv_sweep()[0], layout, FilterLayout::kcrs);
    const auto ranked = get_forward_algorithms(h, d.x, d.w, d.conv, d.y);
    bool seen = false;
    for (const auto& r : ranked)
      if (r.algo == ConvAlgo::implicit_gemm) {
        seen = true;
        EXPECT_TRUE(r.supported) << r.reason;
        EXPECT_EQ(r.workspace, 0u);
        EXPECT_NE(r.reason.find(layout == Layout::nhwc ? "channels contiguous" : "pixels contiguous"),
                  std::string::npos) << r.reason;
      }
    EXPECT_TRUE(seen);
  }
}

// x as a strided view of the same dims: NHWC with pixels C + 2 apart and padded rows, NCHW
// with padded rows and planes.
TensorDesc strided_input(const Spec& s, Layout layout) {
  const int64_t C = s.c, H = s.in[0], W = s.in[1];
  if (layout == Layout::nhwc) {
    const int64_t ps = C + 2, rs = W * ps + 5;
    return TensorDesc(DType::f32, {s.n, C, H, W}, {H * rs + 3, 1, rs, ps});
  }
  const int64_t rs = W + 3, cs = H * rs + 1;
  return TensorDesc(DType::f32, {s.n, C, H, W}, {C * cs + 2, cs, rs, 1});
}

// Implicit GEMM's reason string for d (empty when it is not listed).
std::string implicit_gemm_reason(const Handle& h, const Descs& d) {
  for (const auto& r : get_forward_algorithms(h, d.x, d.w, d.conv, d.y))
    if (r.algo == ConvAlgo::implicit_gemm) return r.reason;
  return {};
}
// Whether implicit GEMM's reason for d says it reads the input rows in place (the band paths).
bool reads_rows_in_place(const Handle& h, const Descs& d) {
  return implicit_gemm_reason(h, d).find("read in place") != std::string::npos;
}

// Implicit GEMM forward (alpha 1.25, beta 0 and 0.75 over a random y) against the reference.
void expect_implicit_gemm_matches_reference(const Handle& h, const Descs& d, const std::string& what) {
  const auto x = random_floats(d.x.span(), 21), w = random_floats(d.w.element_count(), 22);
  const std::vector<float> prior = random_floats(d.y.span(), 23);
  const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
  const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
  const auto offs = offsets_of(d.y.dims(), d.y.strides());
  const int64_t reduction = d.w.element_count() / d.w.dim(0);
  for (float beta : {0.f, 0.75f}) {
    const float alpha = 1.25f;
    std::vector<float> y = prior;
    convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::implicit_gemm, nullptr, 0, &beta,
                        d.y, y.data());
    EXPECT_EQ(check_against(y, ref, prior, alpha, beta, offs, reduction, ConvAlgo::implicit_gemm,
                            what + " beta=" + std::to_string(beta)),
              0);
  }
}

// The fused forward relu(0.75 conv(x, w) + 0.5 z + bias) on implicit GEMM against the reference
// (k output channels).
void expect_fused_implicit_gemm_matches_reference(const Handle& h, const Descs& d, int64_t k, const std::string& what) {
  const auto x = random_floats(d.x.span(), 51), w = random_floats(d.w.element_count(), 52);
  const auto z = random_floats(d.y.span(), 53), bias = random_floats(std::size_t(k), 54);
  const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
  const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
  std::vector<float> y(z.size());
  const float alpha1 = 0.75f, alpha2 = 0.5f;
  convolution_bias_activation_forward(h, &alpha1, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::implicit_gemm,
                                      nullptr, 0, &alpha2, z.data(), TensorDesc::nchw(DType::f32, 1, k, 1, 1),
                                      bias.data(), Activation::relu, d.y, y.data());
  const int64_t channel_stride = d.y.strides()[1];
  int fails = 0;
  for (int64_t o : offsets_of(d.y.dims(), d.y.strides())) {
    const int64_t channel = o / channel_stride % k;
    const double want =
        std::max(0.0, alpha1 * ref.value[std::size_t(o)] + alpha2 * z[std::size_t(o)] + bias[std::size_t(channel)]);
    if (!(std::fabs(y[std::size_t(o)] - want) <= 1e-4 + 1e-4 * std::fabs(want)) && ++fails < 3)
      ADD_FAILURE() << what << " fused, offset " << o << " got " << y[std::size_t(o)] << " want " << want;
  }
}

// Few-channel inputs (the RGB stem) take implicit GEMM's row-band path in either layout: the
// input rows each output row reads are copied into a zero-padded band (NCHW's channel planes
// interleaved) and read in place by the microkernel; NCHW output rows are staged and
// transposed. Shapes aim at its edges: padding wider than the filter, ragged pixel tiles
// (OW not a multiple of the tile; with 12-pixel tiles a remainder of 4 taken as two tiles of
// 8), output channels not a multiple of the register tile, row dilation, groups (channel runs
// inside wider pixels), interior tiles read from x itself, a strided input view, an input in
// the other layout than the output, 1 and 2 threads, alpha/beta.
TEST(ConvAlgorithms, ImplicitGemmReadsFewChannelInputRowsInPlace) {
  const std::vector<Spec> shapes{
      {"stem", 2, 3, 20, 1, {23, 29}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {"pad_gt_kernel", 1, 7, 33, 1, {9, 14}, {3, 3}, {4, 4}, {1, 1}, {1, 1}},
      {"rect_stride3", 2, 5, 16, 1, {8, 13}, {3, 5}, {0, 2}, {1, 3}, {1, 1}},
      {"row_dilation", 1, 4, 9, 1, {12, 11}, {3, 3}, {2, 1}, {1, 1}, {2, 1}},
      {"groups", 2, 6, 8, 2, {7, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      // Rows wide enough for interior tiles, which read dense channels-last x where it lies
      // (the copies then hold only the border tiles' columns): a ragged last tile, and a
      // full last tile that reaches into the right padding.
      {"stem_wide", 2, 3, 20, 1, {9, 100}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {"wide_full_border_tiles", 1, 4, 12, 1, {5, 48}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      // 40 output pixels a row: with 12-pixel tiles 12, 12, 8 and 8 (band_tile_width), the
      // first 8 from x, the last from the copies; with 6-pixel tiles six of 6 and one of 4.
      {"stem_split_tail", 1, 3, 20, 1, {7, 80}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      // Whole panels of the stem kernel's 64 output channels (AVX-512: 64x6 tiles), written in
      // place (30 pixels a row: five tiles of 6), and 64 + 6 channels over 23-pixel rows (a
      // ragged channel panel through the edge tile, a ragged last pixel tile).
      {"stem_64_channels", 1, 3, 64, 1, {9, 60}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {"stem_70_channels", 2, 3, 70, 1, {7, 46}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
  };
  // x as made (dense), as a strided view, or dense in the other layout (y keeps its own).
  enum class Input { dense, strided, other_layout };
  for (const Spec& s : shapes)
    for (Layout layout : {Layout::nhwc, Layout::nchw})
      for (Input input : {Input::dense, Input::strided, Input::other_layout})
        for (int threads : {1, 2}) {
          Handle h;
          h.set_num_threads(threads);
          Descs d = make_descs(s, layout, layout == Layout::nhwc ? FilterLayout::krsc : FilterLayout::kcrs);
          if (input == Input::strided) d.x = strided_input(s, layout);
          if (input == Input::other_layout)
            d.x = make_descs(s, layout == Layout::nhwc ? Layout::nchw : Layout::nhwc, FilterLayout::kcrs).x;
          EXPECT_TRUE(reads_rows_in_place(h, d)) << s.name << ": " << implicit_gemm_reason(h, d);
          const char* x_name = input == Input::dense ? "" : input == Input::strided ? " strided x" : " x other layout";
          expect_implicit_gemm_matches_reference(h, d, s.name + (layout == Layout::nhwc ? " nhwc" : " nchw") +
                                                           x_name + " threads=" + std::to_string(threads));
        }
}

// A channels-last 3x3 layer whose tile pixels lie 4 KB apart (512 channels at stride 2:
// res5_3x3_s2) is gathered where a tile's columns overflow one L1 set (Zen 4's 8-way L1 with
// AVX-512's 12-pixel tiles), and read from its rows in place where they fit (6-pixel tiles,
// a 12-way L1); 500 channels (4000 bytes apart) always from its rows. Against the reference.
TEST(ConvAlgorithms, ImplicitGemmGathersPixelsThatOverflowAnL1Set) {
  for (int64_t c : {512, 500}) {
    const Spec s{"s2_" + std::to_string(c), 1, c, 24, 1, {8, 8}, {3, 3}, {1, 1}, {2, 2}, {1, 1}};
    Handle h;
    const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
    const int64_t nr = strata::test::sgemm_tile(blas::Handle{}).nr;  // the pixels of a tile
    const bool fits = tile::in_place_columns_fit_l1(2 * c * int64_t(sizeof(float)), nr);
    EXPECT_EQ(reads_rows_in_place(h, d), fits) << s.name << ": " << implicit_gemm_reason(h, d);
    if (c == 500) {
      EXPECT_TRUE(fits);
    }
    expect_implicit_gemm_matches_reference(h, d, s.name);
  }
}

// Channels-last layers with many channels and filters wider than 1x1 (ResNet's 3x3 layers)
// take the row-band path too: the gather would copy each input value about R S / stride^2
// times. Both walks, forced in turn: output rows outer, the interior tiles read from x in
// place (run_band), and the filter panels outer over one zero-padded copy of each image, in
// tiles of pixels that span output rows where rows are narrow (run_band_padded). Edges: output
// channels not a multiple of the register tile, rows narrower than a tile (7 and 3 pixels),
// filter-row runs that are no multiple of the accumulator sets (odd_runs), unpadded layers
// read from x in place (tiles across images; with groups, copied),
// stride 2 with row dilation and uneven padding, padding wider than the filter (border tiles
// skip the taps over it), groups, a strided input view, batch 2; 1 and 2 threads must give
// the same bits. Against the reference.
TEST(ConvAlgorithms, ImplicitGemmReadsWideChannelsLastRowsInPlace) {
  const std::vector<Spec> shapes{
      {"wide_s2", 2, 40, 45, 1, {17, 21}, {3, 3}, {1, 1}, {2, 2}, {1, 1}},
      {"large_filter", 2, 256, 72, 1, {9, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"large_filter_s2_dilated", 1, 160, 100, 1, {19, 20}, {3, 3}, {2, 1}, {2, 2}, {2, 1}},
      {"groups", 1, 192, 80, 2, {10, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"k5_rect", 1, 24, 33, 1, {11, 19}, {5, 3}, {2, 0}, {1, 2}, {1, 1}},
      {"7_pixel_rows", 2, 128, 64, 1, {14, 14}, {3, 3}, {1, 1}, {2, 2}, {1, 1}},
      // 28 pixels a row as 12 + 8 + 8 on 12-pixel tiles (band_tile_width), as 4 x 6 + 4 on the
      // tall kernel's 6-pixel ones, the last tile reading x up to its last column.
      {"28_pixel_rows_s2", 1, 48, 40, 1, {9, 56}, {3, 3}, {1, 1}, {2, 2}, {1, 1}},
      {"3_pixel_rows", 1, 72, 40, 1, {5, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"odd_runs", 2, 37, 20, 1, {7, 7}, {3, 3}, {0, 0}, {1, 1}, {1, 1}},  // 111 steps per filter row, 25 pixels
      {"3x3_unpadded", 3, 40, 24, 1, {9, 10}, {3, 3}, {0, 0}, {1, 1}, {1, 1}},
      {"3x3_unpadded_groups", 1, 80, 24, 2, {9, 10}, {3, 3}, {0, 0}, {1, 1}, {1, 1}},
      // Padding wider than the filter: corner outputs see no tap inside the image (their
      // tiles skip the whole depth and write alpha * 0 + beta * y).
      {"pad_gt_kernel", 2, 32, 20, 1, {6, 7}, {3, 3}, {4, 4}, {2, 2}, {1, 1}},
      // A depth of 4680: the tall kernel's 64-channel panel (1.2 MB) outgrows half of a 2 MB L2,
      // so the walks run on the ISA's own kernel (32x12 on AVX-512; takes_tall_kernel).
      {"deep_filter", 1, 520, 40, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
  };
  // Both walks (band_panels_outer), whichever this machine's L2 would choose for each shape.
  for (const char* walk : {"rows", "panels"}) {
    setenv("STRATA_CONV_BAND", walk, 1);
    for (const Spec& s : shapes)
      for (bool strided_x : {false, true}) {
        std::vector<float> bits[2];
        for (int threads : {1, 2}) {
          Handle h;
          h.set_num_threads(threads);
          Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
          if (strided_x) d.x = strided_input(s, Layout::nhwc);
          EXPECT_TRUE(reads_rows_in_place(h, d)) << s.name << ": " << implicit_gemm_reason(h, d);
          EXPECT_NE(implicit_gemm_reason(h, d).find(std::string(walk) == "rows" ? "band of rows per output row"
                                                                                 : "zero-padded copy of each image"),
                    std::string::npos)
              << s.name << ": " << implicit_gemm_reason(h, d);
          const std::string what = s.name + (strided_x ? " strided x" : "") + " threads=" + std::to_string(threads) +
                                   " walk=" + walk;
          expect_implicit_gemm_matches_reference(h, d, what);
          const auto x = random_floats(d.x.span(), 41), w = random_floats(d.w.element_count(), 42);
          bits[threads - 1].assign(std::size_t(d.y.span()), 0.f);
          const float alpha = 1.f, beta = 0.f;
          convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::implicit_gemm, nullptr, 0,
                              &beta, d.y, bits[threads - 1].data());
        }
        EXPECT_EQ(std::memcmp(bits[0].data(), bits[1].data(), bits[0].size() * sizeof(float)), 0) << s.name << walk;
      }
    // The fused epilogue (residual, bias, ReLU) once every panel of a tile is done.
    {
      Handle h;
      h.set_num_threads(2);
      expect_fused_implicit_gemm_matches_reference(h, make_descs(shapes[1], Layout::nhwc, FilterLayout::krsc),
                                                   shapes[1].k, shapes[1].name + " walk=" + walk);
    }
  }
  unsetenv("STRATA_CONV_BAND");
}

// NCHW inputs with more than 64 values per filter row are transposed into a channels-last
// copy of each image first (dense planes as one matrix, 16 planes per step, 8x8 blocks with
// ragged edges: C and K not multiples of 8; strided views, padded rows and planes, element by
// element), then read by the row bands (filters wider than 1x1, undilated along the row:
// run_band_padded, its output staged and transposed into the planes) or gathered (a dilated
// row). 1x1 strided layers gather from the planes directly. Groups take each group's
// channels. Against the reference, 1 and 2 threads, alpha/beta.
TEST(ConvAlgorithms, ImplicitGemmReadsNchwInputsFromAChannelsLastCopy) {
  struct NchwCase {
    Spec spec;
    bool band;
  };
  const std::vector<NchwCase> cases{
      {{"3x3_c23", 2, 23, 21, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, true},
      {{"3x3_s2_c24", 1, 24, 10, 1, {13, 12}, {3, 3}, {1, 1}, {2, 2}, {1, 1}}, true},
      {{"3x3_s2_c96_k40", 2, 96, 40, 1, {11, 14}, {3, 3}, {1, 1}, {2, 2}, {1, 1}}, true},
      {{"5x5_dilated", 1, 17, 9, 1, {12, 12}, {5, 5}, {4, 4}, {1, 1}, {2, 2}}, false},
      {{"1x1_s2", 2, 33, 12, 1, {9, 8}, {1, 1}, {0, 0}, {2, 2}, {1, 1}}, false},
      {{"3x3_groups", 2, 46, 12, 2, {7, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, true},
  };
  for (const NchwCase& c : cases)
    for (bool strided_x : {false, true})
      for (int threads : {1, 2}) {
        const Spec& s = c.spec;
        Handle h;
        h.set_num_threads(threads);
        Descs d = make_descs(s, Layout::nchw, FilterLayout::kcrs);
        if (strided_x) d.x = strided_input(s, Layout::nchw);
        const std::string reason = implicit_gemm_reason(h, d);
        EXPECT_NE(reason.find("pixels contiguous"), std::string::npos) << s.name << ": " << reason;
        EXPECT_EQ(reads_rows_in_place(h, d), c.band) << s.name << ": " << reason;
        expect_implicit_gemm_matches_reference(
            h, d, s.name + (strided_x ? " strided x" : "") + " threads=" + std::to_string(threads));
        if (c.band && !strided_x && s.g == 1) expect_fused_implicit_gemm_matches_reference(h, d, s.k, s.name);
      }
}

// Random few-channel channels-last shapes (fixed seed) through implicit GEMM against the
// reference: filter sizes 1-7 per side, strides 1-3, padding 0-4 (wider than the filter
// too), row dilation 1-2, groups 1-2, 1-40 output channels, images down to one pixel wide.
// Most take the row-band path, the rest (1x1, dilated rows) the gathering one; both must agree
// with the reference.
TEST(ConvAlgorithms, ImplicitGemmRandomFewChannelShapes) {
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  int banded = 0;
  for (int t = 0; t < 60; ++t) {
    const int64_t g = pick(1, 2), cg = pick(1, 8), kg = pick(1, 20);
    const int64_t r = pick(1, 7), sz = pick(1, 7), dh = pick(1, 2), dw = pick(1, 4) == 1 ? 2 : 1;
    const int64_t ph = pick(0, 4), pw = pick(0, 4), sh = pick(1, 3), sw = pick(1, 3);
    // Input large enough for at least one output pixel.
    const int64_t ih = std::max<int64_t>(pick(1, 12), (r - 1) * dh + 1 - 2 * ph);
    const int64_t iw = std::max<int64_t>(pick(1, 14), (sz - 1) * dw + 1 - 2 * pw);
    const Spec s{"random" + std::to_string(t), pick(1, 2), g * cg, g * kg, g, {ih, iw}, {r, sz}, {ph, pw},
                 {sh, sw}, {dh, dw}};
    Handle h;
    h.set_num_threads(int(pick(1, 2)));
    const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
    banded += reads_rows_in_place(h, d);
    const auto x = random_floats(d.x.span(), 31), w = random_floats(d.w.element_count(), 32);
    const std::vector<float> prior = random_floats(d.y.span(), 33);
    const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
    const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
    const float alpha = 0.75f, beta = t % 2 ? 0.5f : 0.f;
    std::vector<float> y = prior;
    convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::implicit_gemm, nullptr, 0, &beta,
                        d.y, y.data());
    EXPECT_EQ(check_against(y, ref, prior, alpha, beta, offsets_of(d.y.dims(), d.y.strides()),
                            d.w.element_count() / d.w.dim(0), ConvAlgo::implicit_gemm, s.name),
              0);
  }
  EXPECT_GT(banded, 30);  // the shapes above are meant for the band path
}

TEST(ConvAlgorithms, StridedViewsRunOnDirectAndAreRefusedByPackedOnlyAlgorithms) {
  Handle h;
  h.set_num_threads(2);
  // x is a view with padded row and channel strides (as a slice of a larger tensor).
  const Spec s{"strided", 2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  Descs d = make_descs(s, Layout::nchw, FilterLayout::kcrs);
  d.x = TensorDesc(DType::f32, {2, 3, 5, 6}, {3 * 5 * 9 + 7, 5 * 9 + 1, 9, 1});
  d.y = TensorDesc(DType::f32, {2, 4, 5, 6}, {4 * 40 + 3, 40, 8, 1});
  EXPECT_THROW((void)forward_workspace_size(h, d.x, d.w, d.conv, d.y, ConvAlgo::im2col_gemm), Error);
  const auto x = random_floats(d.x.span(), 5), w = random_floats(d.w.element_count(), 6);
  std::vector<float> y(std::size_t(d.y.span()), 7.f);
  const float alpha = 1.f, beta = 0.f;
  convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::direct, nullptr, 0, &beta, d.y, y.data());
  const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
  const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
  const auto offs = offsets_of(d.y.dims(), d.y.strides());
  EXPECT_EQ(check_against(y, ref, y, alpha, beta, offs, 27, ConvAlgo::direct, "strided direct"), 0);
  // Gaps between rows are not part of y and must be untouched.
  std::set<int64_t> inside(offs.begin(), offs.end());
  for (int64_t i = 0; i < d.y.span(); ++i) {
    if (!inside.count(i)) {
      EXPECT_EQ(y[std::size_t(i)], 7.f) << i;
    }
  }
  // Winograd stages views with non-contiguous channels through channels-last copies: same
  // results, alpha/beta blended into the view, gaps untouched.
  for (ConvAlgo a : {ConvAlgo::winograd_2x2_3x3, ConvAlgo::winograd_4x4_3x3}) {
    const std::size_t ws = forward_workspace_size(h, d.x, d.w, d.conv, d.y, a);
    auto buf = make_aligned<std::byte>(ws + 1);
    const std::vector<float> prior = random_floats(d.y.span(), 8);
    std::vector<float> yw = prior;
    const float a2 = 0.5f, b2 = 0.25f;
    convolution_forward(h, &a2, d.x, x.data(), d.w, w.data(), d.conv, a, buf.get(), ws, &b2, d.y, yw.data());
    EXPECT_EQ(check_against(yw, ref, prior, a2, b2, offs, 27, a, "strided winograd"), 0);
    for (int64_t i = 0; i < d.y.span(); ++i) {
      if (!inside.count(i)) {
        EXPECT_EQ(yw[std::size_t(i)], prior[std::size_t(i)]) << i;
      }
    }
  }
  // The automatic choice must pick an algorithm that serves the view.
  std::vector<float> y2(std::size_t(d.y.span()), 7.f);
  convolution_forward(h, 1.f, d.x, x.data(), d.w, w.data(), d.conv, 0.f, d.y, y2.data());
  EXPECT_EQ(check_against(y2, ref, y2, alpha, beta, offs, 27, ConvAlgo::direct, "strided auto"), 0);
}

}  // namespace
}  // namespace strata::dnn::test
