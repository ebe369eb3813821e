// Prepared filters (prepare_forward_filter): the same bits as the unprepared call on every
// algorithm, layout, ISA and thread count; one preparation serving other batch and image
// sizes; and clear refusals of calls the filter was not prepared for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "conv_test_util.hpp"
#include "support/isas.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/isa.hpp"
#include "strata/core/minifloat.hpp"

namespace strata::dnn::test {
namespace {

std::vector<Isa> isas() { return strata::test::usable_isas(); }

FilterLayout filter_layout(Layout l) { return l == Layout::nchw ? FilterLayout::kcrs : FilterLayout::krsc; }

// y = alpha * conv + beta * y from a starting y of random values, unprepared or prepared.
std::vector<float> forward(const Handle& h, const Descs& d, const std::vector<float>& x, const std::vector<float>& w,
                           ConvAlgo algo, const PreparedFilter* prepared) {
  const float alpha = 0.75f, beta = 0.5f;
  std::vector<float> y = random_floats(d.y.span(), 9);
  const std::size_t ws = prepared ? forward_workspace_size(h, d.x, *prepared, d.conv, d.y)
                                  : forward_workspace_size(h, d.x, d.w, d.conv, d.y, algo);
  auto buf = make_aligned<std::byte>(ws + 1);
  if (prepared)
    convolution_forward(h, &alpha, d.x, x.data(), *prepared, d.conv, buf.get(), ws, &beta, d.y, y.data());
  else
    convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, algo, buf.get(), ws, &beta, d.y, y.data());
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

float max_abs(const std::vector<float>& v) {
  float m = 0.f;
  for (float e : v) m = std::max(m, std::fabs(e));
  return m;
}
// Largest elementwise difference; a NaN on either side makes every bound below fail.
float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.f;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Every usable ISA, spec, layout (with its filter layout), 1 and 2 threads, and algorithm that
// computes the problem (descriptors in dtype dt): body(h, d, s, layout, perf).
template <class Body>
void for_each_algorithm_case(const std::vector<Spec>& specs, DType dt, Body&& body) {
  for (Isa isa : isas())
    for (const Spec& s : specs)
      for (Layout layout : {Layout::nchw, Layout::nhwc}) {
        const Descs d = make_descs(s, layout, filter_layout(layout), dt);
        for (int threads : {1, 2}) {
          Handle h;
          h.set_isa(isa);
          h.set_num_threads(threads);
          for (const AlgoPerf& perf : get_forward_algorithms(h, d.x, d.w, d.conv, d.y))
            if (perf.supported) body(h, d, s, layout, perf);
        }
      }
}

// One problem with its input and the filter prepared on it.
struct PreparedCase {
  const Descs& d;
  const std::vector<float>& x;
  const PreparedFilter& pf;
};
// Filters prepared on two problems whose calls choose different forms: each gives the
// unprepared result bitwise on its own problem, and within 1e-4 of the largest output on the
// other (summation order; a wrong layout is O(1)). Returns the comparisons made.
int expect_each_serves_the_other(const Handle& h, ConvAlgo algo, const PreparedCase& a, const PreparedCase& b,
                                 const std::vector<float>& w, const std::string& what) {
  const auto want_a = forward(h, a.d, a.x, w, algo, nullptr), want_b = forward(h, b.d, b.x, w, algo, nullptr);
  EXPECT_TRUE(same_bits(forward(h, a.d, a.x, w, algo, &a.pf), want_a)) << what;
  EXPECT_TRUE(same_bits(forward(h, b.d, b.x, w, algo, &b.pf), want_b)) << what;
  EXPECT_LE(max_diff(forward(h, a.d, a.x, w, algo, &b.pf), want_a), 1e-4f * max_abs(want_a)) << what;
  EXPECT_LE(max_diff(forward(h, b.d, b.x, w, algo, &a.pf), want_b), 1e-4f * max_abs(want_b)) << what;
  return 4;
}

TEST(ConvPrepared, BitwiseEqualToTheUnpreparedCallOnEveryAlgorithm) {
  const std::vector<Spec> specs = {
      {"3x3", 2, 16, 24, 1, {13, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"1x1", 2, 24, 20, 1, {7, 9}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"7x7s2_rgb", 1, 3, 16, 1, {23, 23}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {"3x3_groups", 2, 12, 18, 3, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"3x3_flipped", 1, 8, 12, 1, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, ConvMode::convolution},
      {"5x5_dilated", 1, 8, 8, 1, {14, 14}, {5, 5}, {2, 2}, {1, 1}, {2, 2}},
      // Few output pixels (NCHW: one 64-row panel block) over a depth past one k block: the
      // engine takes longer k blocks against prepacked filter panels, so the unprepared call
      // must run on the same panels.
      {"3x3_deep_8x8", 1, 48, 12, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
  };
  int compared = 0, transformed = 0;
  for_each_algorithm_case(specs, DType::f32, [&](const Handle& h, const Descs& d, const Spec& s, Layout layout,
                                                 const AlgoPerf& perf) {
    const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2);
    const auto want = forward(h, d, x, w, perf.algo, nullptr);
    std::vector<float> w_copy = w;
    const PreparedFilter pf = prepare_forward_filter(h, d.x, d.w, w_copy.data(), d.conv, d.y, perf.algo);
    // The prepared filter owns what it needs: the caller's filter may change or go.
    std::fill(w_copy.begin(), w_copy.end(), std::numeric_limits<float>::quiet_NaN());
    EXPECT_EQ(pf.algo(), perf.algo);
    EXPECT_GT(pf.bytes(), 0u);
    transformed += pf.transformed();
    EXPECT_TRUE(same_bits(forward(h, d, x, w, perf.algo, &pf), want))
        << s.name << (layout == Layout::nchw ? " nchw " : " nhwc ") << isa_name(h.isa()) << " t" << h.num_threads()
        << " " << conv_algo_name(perf.algo);
    ++compared;
  });
  EXPECT_GT(compared, 60);
  EXPECT_GT(transformed, 20);  // implicit GEMM and Winograd hold their own forms
}

// bf16 and f16 filters prepared for algorithms that compute on f32 copies (every one off AMX,
// and NCHW or strided tensors on it): the f32 form of the widened filter, which the call reads
// instead of staging w. Bitwise the unprepared call on every algorithm, layout, ISA and thread
// count, alpha and beta included.
template <class T>
void expect_staged_prepared_filters_agree(DType dt) {
  const std::vector<Spec> specs = {
      {"3x3", 2, 16, 24, 1, {13, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"1x1", 2, 24, 20, 1, {7, 9}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"7x7s2_rgb", 1, 3, 16, 1, {23, 23}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {"3x3_groups_flipped", 2, 12, 18, 3, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, ConvMode::convolution},
      {"3x3_deep_8x8", 1, 48, 12, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
  };
  auto narrow = [](const std::vector<float>& f) { return std::vector<T>(f.begin(), f.end()); };
  int compared = 0, transformed = 0;
  const float alpha = 0.75f, beta = 0.5f;
  for_each_algorithm_case(specs, dt, [&](const Handle& h, const Descs& d, const Spec& s, Layout layout,
                                         const AlgoPerf& perf) {
    const auto x = narrow(random_floats(d.x.span(), 11)), w = narrow(random_floats(d.w.element_count(), 12));
    const std::string what = s.name + (layout == Layout::nchw ? " nchw " : " nhwc ") + std::string(isa_name(h.isa())) +
                             " t" + std::to_string(h.num_threads()) + " " + std::string(conv_algo_name(perf.algo));
    std::vector<T> want = narrow(random_floats(d.y.span(), 13)), got = want;
    const std::size_t ws0 = forward_workspace_size(h, d.x, d.w, d.conv, d.y, perf.algo);
    auto buf0 = make_aligned<std::byte>(ws0 + 1);
    convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, perf.algo, buf0.get(), ws0, &beta, d.y,
                        want.data());
    std::vector<T> w_copy = w;
    const PreparedFilter pf = prepare_forward_filter(h, d.x, d.w, w_copy.data(), d.conv, d.y, perf.algo);
    std::fill(w_copy.begin(), w_copy.end(), T(std::numeric_limits<float>::quiet_NaN()));
    transformed += pf.transformed();
    const std::size_t ws1 = forward_workspace_size(h, d.x, pf, d.conv, d.y);
    if (pf.transformed()) {
      EXPECT_LT(ws1, ws0) << what;
    }
    auto buf1 = make_aligned<std::byte>(ws1 + 1);
    convolution_forward(h, &alpha, d.x, x.data(), pf, d.conv, buf1.get(), ws1, &beta, d.y, got.data());
    bool same = true;
    for (std::size_t i = 0; i < got.size(); ++i) same &= got[i].bits == want[i].bits;
    EXPECT_TRUE(same) << what;
    ++compared;
  });
  EXPECT_GT(compared, 60);
  EXPECT_GT(transformed, 20);  // implicit GEMM and Winograd: the f32 form wherever they stage
}

TEST(ConvPrepared, Bf16StagedFilterBitwiseEqualToTheUnpreparedCallOnEveryAlgorithm) {
  expect_staged_prepared_filters_agree<bf16>(DType::bf16);
}

TEST(ConvPrepared, F16StagedFilterBitwiseEqualToTheUnpreparedCallOnEveryAlgorithm) {
  expect_staged_prepared_filters_agree<f16>(DType::f16);
}

// Prepared filters against few output pixels (a handful of column panels: the engine walks each
// filter tile over every panel while it is in L1, tile::Mainloop::a_stationary) and past them
// (the column-panel walk): 1x1 channels-last layers with output channels not a multiple of the
// register tile, and the Winograd products of a small image, against the reference on every ISA,
// 1 and 2 threads.
TEST(ConvPrepared, FewPixelsAgainstTheReference) {
  const std::vector<Spec> specs = {
      {"1x1_p1", 1, 70, 100, 1, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"1x1_p13", 1, 70, 100, 1, {1, 13}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"1x1_p25x2", 2, 70, 100, 1, {5, 5}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"1x1_p49", 1, 300, 72, 1, {7, 7}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"1x1_p61", 1, 70, 100, 1, {1, 61}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"3x3_p49", 1, 40, 72, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
  };
  int compared = 0;
  for (Isa isa : isas())
    for (const Spec& s : specs) {
      const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
      const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2);
      const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
      const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
      const auto offsets = offsets_of(d.y.dims(), d.y.strides());
      for (int threads : {1, 2}) {
        Handle h;
        h.set_isa(isa);
        h.set_num_threads(threads);
        for (ConvAlgo algo : {ConvAlgo::implicit_gemm, ConvAlgo::winograd_2x2_3x3, ConvAlgo::winograd_4x4_3x3}) {
          if (s.f[0] != 3 && algo != ConvAlgo::implicit_gemm) continue;
          const PreparedFilter pf = prepare_forward_filter(h, d.x, d.w, w.data(), d.conv, d.y, algo);
          const std::vector<float> prior = random_floats(d.y.span(), 9);  // forward()'s starting y
          const std::vector<float> y = forward(h, d, x, w, algo, &pf);
          EXPECT_EQ(check_against(y, ref, prior, 0.75f, 0.5f, offsets, d.w.element_count() / d.w.dim(0), algo,
                                  s.name + " " + std::string(isa_name(isa)) + " t" + std::to_string(threads)),
                    0);
          ++compared;
        }
      }
    }
  EXPECT_GT(compared, 20);
}

// Channels-last 1x1 layers with a filter up to half of L2 walk each filter tile (64 channels on
// AVX-512, 128 deep) over blocks of 192 pixels read in place (tile::PackPolicy::stationary_a):
// a ragged channel tile (100 = 64 + 36), three k blocks (300 = 128 + 128 + 44), three pixel
// blocks with a ragged last panel (2 x 13 x 17 = 442 pixels), against the reference on every
// ISA (alpha 0.75, beta 0.5); prepared bitwise equal to unprepared, and 2 threads to 1. Then
// two groups of 100 input and 80 output channels (each group's pixels every 200 values). Then
// more channels than pixels in under four tiles a thread (200 channels, 99 pixels): on 2 threads
// the walk splits the pixels, not the channels (tile::plan_partition), borders on whole panels.
void expect_pointwise_walk(const Spec& s) {
  const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
  const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2);
  const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
  const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
  const auto offsets = offsets_of(d.y.dims(), d.y.strides());
  const std::vector<float> prior = random_floats(d.y.span(), 9);  // forward()'s starting y
  int compared = 0;
  for (Isa isa : isas()) {
    std::vector<float> one_thread;
    for (int threads : {1, 2}) {
      Handle h;
      h.set_isa(isa);
      h.set_num_threads(threads);
      const std::string what = std::string(isa_name(isa)) + " t" + std::to_string(threads);
      const PreparedFilter pf = prepare_forward_filter(h, d.x, d.w, w.data(), d.conv, d.y, ConvAlgo::implicit_gemm);
      const std::vector<float> y = forward(h, d, x, w, ConvAlgo::implicit_gemm, &pf);
      EXPECT_TRUE(same_bits(forward(h, d, x, w, ConvAlgo::implicit_gemm, nullptr), y)) << what;
      EXPECT_EQ(check_against(y, ref, prior, 0.75f, 0.5f, offsets, d.w.element_count() / d.w.dim(0),
                              ConvAlgo::implicit_gemm, s.name + " " + what),
                0);
      if (threads == 1) one_thread = y;
      else EXPECT_TRUE(same_bits(y, one_thread)) << what;
      ++compared;
    }
  }
  EXPECT_GE(compared, 2) << s.name;
}

TEST(ConvPrepared, PointwiseLayersWalkedTileStationary) {
  expect_pointwise_walk({"1x1_stationary", 2, 300, 100, 1, {13, 17}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
  expect_pointwise_walk({"1x1_groups", 2, 200, 160, 2, {9, 11}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
  expect_pointwise_walk({"1x1_pixels_split", 1, 300, 200, 1, {9, 11}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
}

// 1024 input channels put the pixels 4 KB apart: where a tile's columns overflow an L1 set
// (Zen 4) and the 655 KB filter outgrows half of L2, the prepared filter meets pixels read
// through a copy of each column panel (tile::PackPolicy::copy_b_panels); elsewhere the walks
// above. 100 pixels go down the columns panel by panel; 49 (res5's 7 x 7) make a block of five
// panels the prepared filter walks tile-stationary, holding all five copies at once (each its
// own room: in one, every panel would read the last one's pixels). The same checks: reference,
// prepared = unprepared, 2 threads = 1, bitwise.
TEST(ConvPrepared, PointwiseLayerOverCopiedPixelPanels) {
  expect_pointwise_walk({"1x1_copied_pixels", 1, 1024, 160, 1, {10, 10}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
  expect_pointwise_walk({"1x1_copied_pixels_7x7", 1, 1024, 160, 1, {7, 7}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
}

TEST(ConvPrepared, OnePreparationServesOtherBatchAndImageSizes) {
  Handle h;
  const Spec small{"prep", 1, 16, 16, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  const Spec large{"run", 3, 16, 16, 1, {15, 11}, {3, 3}, {2, 0}, {1, 1}, {1, 1}};
  for (Layout layout : {Layout::nchw, Layout::nhwc})
    for (ConvAlgo algo : {ConvAlgo::implicit_gemm, ConvAlgo::winograd_4x4_3x3, ConvAlgo::winograd_2x2_3x3}) {
      const Descs dp = make_descs(small, layout, filter_layout(layout));
      const Descs dr = make_descs(large, layout, filter_layout(layout));
      const auto w = random_floats(dp.w.element_count(), 2), x = random_floats(dr.x.span(), 1);
      const PreparedFilter pf = prepare_forward_filter(h, dp.x, dp.w, w.data(), dp.conv, dp.y, algo);
      EXPECT_TRUE(same_bits(forward(h, dr, x, w, algo, &pf), forward(h, dr, x, w, algo, nullptr)))
          << conv_algo_name(algo);
    }
}

// Winograd runs its products with tiles as rows (few tiles per block) or as columns, and stores
// the prepared filter for the orientation of the problem it was prepared on. Here the two
// problems choose opposite orientations for each algorithm (F2: 16 tiles vs blocks of 24; F4: 4
// tiles vs blocks of 16): a filter prepared on one serves the other, with bitwise the
// unprepared result on its own problem and that result up to summation order (edge tiles add
// their steps in two or four chains) on the other.
TEST(ConvPrepared, WinogradFilterPreparedInEitherOrientationServesTheOther) {
  int compared = 0;
  for (Isa isa : isas()) {
    Handle h;
    h.set_isa(isa);
    bool forms_differ = false;
    // 24 output channels: AVX2's 16- and 6-wide panels pad them differently; 12: AVX-512's 32-
    // and 12-wide ones do for F(2x2) on 16 tiles (few) against 64 (many). The portable kernel's
    // 8 and 4 never do, and there both problems take columns.
    for (int k : {24, 12}) {
      const Spec few{"few_tiles", 1, 520, k, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
      const Spec many{"many_tiles", 4, 520, k, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
      const Descs df = make_descs(few, Layout::nhwc, FilterLayout::krsc);
      const Descs dm = make_descs(many, Layout::nhwc, FilterLayout::krsc);
      const auto w = random_floats(df.w.element_count(), 2);
      const auto xf = random_floats(df.x.span(), 1), xm = random_floats(dm.x.span(), 3);
      for (ConvAlgo algo : {ConvAlgo::winograd_2x2_3x3, ConvAlgo::winograd_4x4_3x3}) {
        const PreparedFilter on_few = prepare_forward_filter(h, df.x, df.w, w.data(), df.conv, df.y, algo);
        const PreparedFilter on_many = prepare_forward_filter(h, dm.x, dm.w, w.data(), dm.conv, dm.y, algo);
        forms_differ = forms_differ || on_few.bytes() != on_many.bytes();
        const std::string what = std::string(conv_algo_name(algo)) + " " + std::string(isa_name(isa)) + " k=" +
                                 std::to_string(k);
        // Summation order only: ~1e-5 of the largest output measured (-O2 and the sanitizer
        // build), far inside Winograd's own error bound (docs/dnn.md).
        compared += expect_each_serves_the_other(h, algo, {df, xf, on_few}, {dm, xm, on_many}, w, what);
      }
    }
    if (isa != Isa::generic) {
      EXPECT_TRUE(forms_differ) << "no orientation pair exercised on " << isa_name(isa);
    }
  }
  EXPECT_GE(compared, 16);
}

// Implicit GEMM on NCHW output puts pixels on the tile's rows, or channels (into a staged
// block) when whole row panels would pad the pixels by more than a sixteenth; the prepared
// filter holds the panels of the problem it was prepared on and says which. Here 7x7 images
// (49 pixels) stage and 8x8 ones (64) do not: a filter prepared on one serves the other, the
// unprepared result bitwise on its own problem and up to summation order on the other.
TEST(ConvPrepared, ImplicitGemmNchwFilterPreparedInEitherOrientationServesTheOther) {
  const std::vector<std::pair<Spec, Spec>> pairs{
      {{"1x1_7x7", 2, 40, 24, 1, {7, 7}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
       {"1x1_8x8", 1, 40, 24, 1, {8, 8}, {1, 1}, {0, 0}, {1, 1}, {1, 1}}},
      {{"3x3_7x7", 1, 24, 20, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
       {"3x3_8x8", 2, 24, 20, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}},
  };
  const ConvAlgo algo = ConvAlgo::implicit_gemm;
  int compared = 0;
  for (Isa isa : isas())
    for (const auto& [few, many] : pairs)
      for (int threads : {1, 2}) {
        Handle h;
        h.set_isa(isa);
        h.set_num_threads(threads);
        const Descs df = make_descs(few, Layout::nchw, FilterLayout::kcrs);
        const Descs dm = make_descs(many, Layout::nchw, FilterLayout::kcrs);
        const auto w = random_floats(df.w.element_count(), 2);
        const auto xf = random_floats(df.x.span(), 1), xm = random_floats(dm.x.span(), 3);
        const PreparedFilter on_few = prepare_forward_filter(h, df.x, df.w, w.data(), df.conv, df.y, algo);
        const PreparedFilter on_many = prepare_forward_filter(h, dm.x, dm.w, w.data(), dm.conv, dm.y, algo);
        const std::string what = few.name + " " + std::string(isa_name(isa)) + " t" + std::to_string(threads);
        // Summation order only (k blocks and edge chains differ).
        compared += expect_each_serves_the_other(h, algo, {df, xf, on_few}, {dm, xm, on_many}, w, what);
      }
  EXPECT_GE(compared, 16);
}

// A prepared filter serves other strides, paddings and dilations and other x strides, which
// may take implicit GEMM another way: an undilated row reads the image in place (the band
// walks: on AVX-512 on 64-row tiles, tile::KernelF32Tall, the depth channels innermost), as
// does a 1x1 layer on packed channels-last x with a filter within half of L1; a dilated row,
// or a strided view of x, gathers the image (32-row tiles; from NCHW x with taps innermost).
// The prepared filter says which panels it holds, and a call that takes the other form
// recuts them (recut_panels). 70 output channels: a full and a ragged 64-channel panel, three
// 32-channel ones. Each serves the other, the unprepared result bitwise on its own problem
// and up to summation order on the other.
TEST(ConvPrepared, ImplicitGemmFilterPreparedInAnotherFormIsRecut) {
  struct Pair {
    Spec in_place, gathered;
    Layout x_layout;
    bool gathered_x_strided;  // the gathered problem: x a view with pixels C + 2 floats apart
  };
  const std::vector<Pair> pairs{
      {{"3x3_rows", 2, 24, 70, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
       {"3x3_dilated", 1, 24, 70, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 2}},
       Layout::nhwc,
       false},
      {{"stem_nchw_x", 1, 3, 70, 1, {11, 12}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
       {"stem_nchw_x_dilated", 2, 3, 70, 1, {11, 12}, {7, 7}, {3, 3}, {2, 2}, {1, 2}},
       Layout::nchw,
       false},
      {{"1x1_packed", 2, 24, 70, 1, {9, 10}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
       {"1x1_strided_view", 1, 24, 70, 1, {9, 10}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
       Layout::nhwc,
       true},
  };
  const ConvAlgo algo = ConvAlgo::implicit_gemm;
  int compared = 0;
  for (Isa isa : isas())
    for (const Pair& pair : pairs)
      for (int threads : {1, 2}) {
        Handle h;
        h.set_isa(isa);
        h.set_num_threads(threads);
        auto descs = [&](const Spec& s, bool strided) {
          Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
          d.x = make_descs(s, pair.x_layout, FilterLayout::krsc).x;
          if (strided) {
            const int64_t C = s.c, H = s.in[0], W = s.in[1], rs = W * (C + 2) + 3;
            d.x = TensorDesc(DType::f32, {s.n, C, H, W}, {H * rs, 1, rs, C + 2});
          }
          return d;
        };
        const Descs di = descs(pair.in_place, false), dg = descs(pair.gathered, pair.gathered_x_strided);
        const auto w = random_floats(di.w.element_count(), 2);
        const auto xi = random_floats(di.x.span(), 1), xg = random_floats(dg.x.span(), 3);
        const PreparedFilter on_in_place = prepare_forward_filter(h, di.x, di.w, w.data(), di.conv, di.y, algo);
        const PreparedFilter on_gathered = prepare_forward_filter(h, dg.x, dg.w, w.data(), dg.conv, dg.y, algo);
        const std::string what =
            pair.in_place.name + " " + std::string(isa_name(isa)) + " t" + std::to_string(threads);
        compared += expect_each_serves_the_other(h, algo, {di, xi, on_in_place}, {dg, xg, on_gathered}, w, what);
      }
  EXPECT_GE(compared, 24);
}

TEST(ConvPrepared, FusedForwardWithAPreparedFilter) {
  Handle h;
  const Spec s{"fused", 2, 8, 16, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  for (Layout layout : {Layout::nchw, Layout::nhwc}) {
    const Descs d = make_descs(s, layout, filter_layout(layout));
    const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2);
    const auto z = random_floats(d.y.span(), 3), bias = random_floats(16, 4);
    const auto bias_desc = TensorDesc::nchw(DType::f32, 1, 16, 1, 1);
    const float alpha1 = 0.75f, alpha2 = 0.5f;
    for (const AlgoPerf& perf : get_forward_algorithms(h, d.x, d.w, d.conv, d.y)) {
      if (!perf.supported) continue;
      const PreparedFilter pf = prepare_forward_filter(h, d.x, d.w, w.data(), d.conv, d.y, perf.algo);
      const std::size_t ws = forward_workspace_size(h, d.x, d.w, d.conv, d.y, perf.algo);
      auto buf = make_aligned<std::byte>(ws + 1);
      std::vector<float> want(z.size()), got(z.size());
      convolution_bias_activation_forward(h, &alpha1, d.x, x.data(), d.w, w.data(), d.conv, perf.algo, buf.get(), ws,
                                          &alpha2, z.data(), bias_desc, bias.data(), Activation::relu, d.y,
                                          want.data());
      convolution_bias_activation_forward(h, &alpha1, d.x, x.data(), pf, d.conv, buf.get(), ws, &alpha2, z.data(),
                                          bias_desc, bias.data(), Activation::relu, d.y, got.data());
      EXPECT_TRUE(same_bits(got, want)) << conv_algo_name(perf.algo);
    }
  }
}

TEST(ConvPrepared, FindTimesPreparedCallsAndPrepareUsesItsChoice) {
  clear_algorithm_cache();
  Handle h;
  const Spec s{"find", 1, 32, 32, 1, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
  const auto w = random_floats(d.w.element_count(), 2), x = random_floats(d.x.span(), 1);
  const auto ranked = find_prepared_forward_algorithms(h, d.x, d.w, d.conv, d.y);
  ASSERT_FALSE(ranked.empty());
  ASSERT_TRUE(ranked.front().supported && ranked.front().within_budget);
  EXPECT_GE(ranked.front().time_ms, 0.0);
  for (std::size_t i = 1; i < ranked.size() && ranked[i].time_ms >= 0; ++i)
    EXPECT_LE(ranked[i - 1].time_ms, ranked[i].time_ms);
  // Winograd reports the prepared call's workspace (no room for U).
  for (const AlgoPerf& r : ranked) {
    if (r.algo == ConvAlgo::winograd_4x4_3x3) {
      EXPECT_LT(r.workspace, forward_workspace_size(h, d.x, d.w, d.conv, d.y, r.algo));
    }
  }
  // The convenience preparation picks the cached prepared winner and computes the same bits.
  const PreparedFilter pf = prepare_forward_filter(h, d.x, d.w, w.data(), d.conv, d.y);
  EXPECT_EQ(pf.algo(), ranked.front().algo);
  EXPECT_TRUE(same_bits(forward(h, d, x, w, pf.algo(), &pf), forward(h, d, x, w, pf.algo(), nullptr)));
  // The per-call find keeps its own cache entry.
  const std::size_t entries = algorithm_cache_size();
  find_forward_algorithms(h, d.x, d.w, d.conv, d.y);
  EXPECT_EQ(algorithm_cache_size(), entries + 1);
  clear_algorithm_cache();
}

// The heuristic for prepared filters leaves out the per-call filter transform: on res5's 7x7
// images at batch 1 Winograd's transform of a 512 x 512 filter costs about what the products
// do, so per call im2col ranks first, while a prepared filter makes Winograd the first choice —
// and the convenience preparation (nothing cached) follows that ranking.
TEST(ConvPrepared, HeuristicForPreparedFiltersLeavesOutTheFilterTransform) {
  clear_algorithm_cache();
  Handle h;
  h.set_num_threads(1);
  const Spec s{"res5_3x3", 1, 512, 512, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
  const auto prepared = get_prepared_forward_algorithms(h, d.x, d.w, d.conv, d.y);
  const auto per_call = get_forward_algorithms(h, d.x, d.w, d.conv, d.y);
  ASSERT_FALSE(prepared.empty());
  ASSERT_TRUE(prepared.front().supported && prepared.front().within_budget);
  auto is_winograd = [](ConvAlgo a) { return a == ConvAlgo::winograd_2x2_3x3 || a == ConvAlgo::winograd_4x4_3x3; };
  EXPECT_TRUE(is_winograd(prepared.front().algo)) << conv_algo_name(prepared.front().algo);
  EXPECT_FALSE(is_winograd(per_call.front().algo)) << conv_algo_name(per_call.front().algo);
  // Winograd's prepared calls need no room for U.
  for (const AlgoPerf& r : prepared) {
    if (is_winograd(r.algo)) {
      EXPECT_LT(r.workspace, forward_workspace_size(h, d.x, d.w, d.conv, d.y, r.algo));
    }
  }
  const auto w = random_floats(d.w.element_count(), 2);
  EXPECT_EQ(prepare_forward_filter(h, d.x, d.w, w.data(), d.conv, d.y).algo(), prepared.front().algo);
  // Other data types rank too (their filters are kept as given unless an algorithm packs them).
  const auto w16 = FilterDesc::krsc(DType::f16, 512, 512, 3, 3);
  const auto x16 = TensorDesc::nhwc(DType::f16, 1, 512, 7, 7), y16 = TensorDesc::nhwc(DType::f16, 1, 512, 7, 7);
  EXPECT_TRUE(get_prepared_forward_algorithms(h, x16, w16, d.conv, y16).front().supported);
}

// The heuristic on strided layers, as measured (docs/dnn.md): implicit GEMM for a prepared
// filter on channels-last input (no window gather for 1x1, none of the lowering im2col pays),
// im2col for a large filter used per call (implicit GEMM packs the filter on every call).
TEST(ConvPrepared, HeuristicOnStridedLayersFollowsTheFilterPacking) {
  Handle h;
  h.set_num_threads(1);
  const Spec proj{"res5_proj_s2", 1, 1024, 2048, 1, {14, 14}, {1, 1}, {0, 0}, {2, 2}, {1, 1}};
  const Spec s2{"res5_3x3_s2", 1, 512, 512, 1, {14, 14}, {3, 3}, {1, 1}, {2, 2}, {1, 1}};
  for (const Spec& s : {proj, s2}) {
    const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc);
    const auto prepared = get_prepared_forward_algorithms(h, d.x, d.w, d.conv, d.y);
    const auto per_call = get_forward_algorithms(h, d.x, d.w, d.conv, d.y);
    ASSERT_FALSE(prepared.empty());
    ASSERT_FALSE(per_call.empty());
    EXPECT_EQ(prepared.front().algo, ConvAlgo::implicit_gemm) << s.name << ": " << prepared.front().reason;
    EXPECT_EQ(per_call.front().algo, ConvAlgo::im2col_gemm) << s.name << ": " << per_call.front().reason;
  }
}

// NCHW 1x1 layers with prepared filters, as measured (docs/dnn.md): im2col multiplies the
// filter as it lies, which costs per call on large filters, so implicit GEMM (prepared panels)
// ranks first there; on small filters with many pixels im2col's plain GEMM stays first.
TEST(ConvPrepared, HeuristicOnNchwPointwiseLayersChargesIm2colItsFilter) {
  Handle h;
  h.set_num_threads(1);
  const Spec big{"res5_1x1_2048_512", 1, 2048, 512, 1, {7, 7}, {1, 1}, {0, 0}, {1, 1}, {1, 1}};
  const Spec wide{"res4_1x1_256_1024", 1, 256, 1024, 1, {14, 14}, {1, 1}, {0, 0}, {1, 1}, {1, 1}};
  const Spec small{"res2_1x1_64_64", 1, 64, 64, 1, {56, 56}, {1, 1}, {0, 0}, {1, 1}, {1, 1}};
  for (const Spec& s : {big, wide, small}) {
    const Descs d = make_descs(s, Layout::nchw, FilterLayout::kcrs);
    const auto prepared = get_prepared_forward_algorithms(h, d.x, d.w, d.conv, d.y);
    ASSERT_FALSE(prepared.empty());
    const ConvAlgo want = s.name == small.name ? ConvAlgo::im2col_gemm : ConvAlgo::implicit_gemm;
    EXPECT_EQ(prepared.front().algo, want) << s.name << ": " << prepared.front().reason;
  }
}

TEST(ConvPrepared, RefusesCallsItWasNotPreparedForAndWritesNothing) {
  Handle h;
  const Spec s{"refuse", 1, 8, 8, 1, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  const Descs nchw = make_descs(s, Layout::nchw, FilterLayout::kcrs);
  const Descs nhwc_x = [&] {
    Descs d = nchw;
    d.x = TensorDesc::packed(DType::f32, Layout::nhwc, nchw.x.dims());
    return d;
  }();
  const auto x = random_floats(nchw.x.span(), 1), w = random_floats(nchw.w.element_count(), 2);
  const PreparedFilter pf = prepare_forward_filter(h, nchw.x, nchw.w, w.data(), nchw.conv, nchw.y, ConvAlgo::implicit_gemm);
  const float one = 1.f, zero = 0.f;
  std::vector<float> y(std::size_t(nchw.y.span()), 3.f);
  auto untouched = [&] { return std::all_of(y.begin(), y.end(), [](float f) { return f == 3.f; }); };
  // x now channels-last: the packed filter's reduction order no longer matches.
  expect_error([&] { convolution_forward(h, &one, nhwc_x.x, x.data(), pf, nchw.conv, nullptr, 0, &zero, nchw.y, y.data()); },
               Status::invalid_argument, "w");
  // Another ISA than the one the panels were packed for.
  for (Isa other : isas())
    if (other != h.isa()) {
      Handle h2;
      h2.set_isa(other);
      expect_error([&] { convolution_forward(h2, &one, nchw.x, x.data(), pf, nchw.conv, nullptr, 0, &zero, nchw.y, y.data()); },
                   Status::invalid_argument, "w");
    }
  expect_error([&] { convolution_forward(h, &one, nchw.x, x.data(), PreparedFilter{}, nchw.conv, nullptr, 0, &zero, nchw.y, y.data()); },
               Status::invalid_argument, "w");
  // Winograd's prepared call needs no filter workspace, but still its block buffers.
  const PreparedFilter wino =
      prepare_forward_filter(h, nchw.x, nchw.w, w.data(), nchw.conv, nchw.y, ConvAlgo::winograd_4x4_3x3);
  const std::size_t ws = forward_workspace_size(h, nchw.x, wino, nchw.conv, nchw.y);
  EXPECT_LT(ws, forward_workspace_size(h, nchw.x, nchw.w, nchw.conv, nchw.y, ConvAlgo::winograd_4x4_3x3));
  auto buf = make_aligned<std::byte>(ws);
  expect_error([&] { convolution_forward(h, &one, nchw.x, x.data(), wino, nchw.conv, buf.get(), ws - 1, &zero, nchw.y, y.data()); },
               Status::insufficient_workspace, "workspace_bytes");
  EXPECT_TRUE(untouched());
  // What cannot be prepared.
  const Spec strided{"s2", 1, 8, 8, 1, {10, 10}, {3, 3}, {1, 1}, {2, 2}, {1, 1}};
  const Descs ds = make_descs(strided, Layout::nchw, FilterLayout::kcrs);
  expect_error([&] { prepare_forward_filter(h, ds.x, ds.w, w.data(), ds.conv, ds.y, ConvAlgo::winograd_4x4_3x3); },
               Status::not_supported, "algo");
  expect_error([&] { prepare_forward_filter(h, nchw.x, nchw.w, nullptr, nchw.conv, nchw.y, ConvAlgo::direct); },
               Status::invalid_argument, "w");
}

// A bf16 filter prepared: packed into implicit GEMM's AMX panels where that route serves
// (channels-last, AMX tiles), else into the f32 panels of the widened filter (the call stages x
// and y in f32 and no longer w); either way the result is bitwise the unprepared call's, a call
// with f32 tensors is refused naming "w", and so is a call the other form would serve.
TEST(ConvPrepared, Bf16FilterIsPackedForItsRouteAndAgreesBitwise) {
  const Spec s{"bf16_3x3", 2, 64, 40, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  // AMX serves on the AVX-512 path only (STRATA_ISA=avx2 or generic turns it off).
  const bool amx =
      cpu_features().amx_bf16 && cpu_features().avx512_bf16 && amx_ready() && Handle().isa() == Isa::avx512;
  auto to_bf16 = [](const std::vector<float>& f) { return std::vector<bf16>(f.begin(), f.end()); };
  const float one = 1.f, zero = 0.f;
  for (auto [layout, fl] : {std::pair{Layout::nhwc, FilterLayout::krsc}, std::pair{Layout::nchw, FilterLayout::kcrs}}) {
    const Descs d = make_descs(s, layout, fl, DType::bf16);
    const int64_t C = s.c, H = s.in[0], W = s.in[1], ps = C + 2;  // x as a view with padded pixels
    const TensorDesc strided(DType::bf16, {s.n, C, H, W}, {H * W * ps, 1, W * ps, ps});
    const auto x = to_bf16(random_floats(std::max(d.x.span(), strided.span()), 61));
    const auto w = to_bf16(random_floats(d.w.element_count(), 62));
    Handle h;
    h.set_num_threads(2);
    const bool narrow = amx && layout == Layout::nhwc;
    // Each form, the call it serves, bitwise the unprepared call.
    auto agrees = [&](const TensorDesc& xd, const PreparedFilter& pf) {
      const std::size_t ws0 = forward_workspace_size(h, xd, d.w, d.conv, d.y, ConvAlgo::implicit_gemm);
      const std::size_t ws1 = forward_workspace_size(h, xd, pf, d.conv, d.y);
      EXPECT_LT(ws1, ws0);  // no filter panels (AMX) or staged filter (f32 copies) in the prepared call
      auto buf = make_aligned<std::byte>(std::max(ws0, ws1) + 1);
      std::vector<bf16> y0(std::size_t(d.y.span())), y1(y0.size());
      convolution_forward(h, &one, xd, x.data(), d.w, w.data(), d.conv, ConvAlgo::implicit_gemm, buf.get(), ws0,
                          &zero, d.y, y0.data());
      convolution_forward(h, &one, xd, x.data(), pf, d.conv, buf.get(), ws1, &zero, d.y, y1.data());
      for (std::size_t i = 0; i < y0.size(); ++i) ASSERT_EQ(y0[i].bits, y1[i].bits) << int(layout) << " at " << i;
    };
    const PreparedFilter pf = prepare_forward_filter(h, d.x, d.w, w.data(), d.conv, d.y, ConvAlgo::implicit_gemm);
    EXPECT_TRUE(pf.transformed()) << int(layout);
    agrees(d.x, pf);
    const Descs df = make_descs(s, layout, fl);
    expect_error([&] { (void)forward_workspace_size(h, df.x, pf, df.conv, df.y); }, Status::invalid_argument, "w");
    if (layout != Layout::nhwc) continue;
    // The strided view is staged: the AMX panels refuse it, the f32 form serves it; and a form
    // prepared on the view refuses the packed tensors where AMX reads those as stored.
    const PreparedFilter on_view =
        prepare_forward_filter(h, strided, d.w, w.data(), d.conv, d.y, ConvAlgo::implicit_gemm);
    EXPECT_TRUE(on_view.transformed());
    agrees(strided, on_view);
    if (narrow) {
      expect_error([&] { (void)forward_workspace_size(h, strided, pf, d.conv, d.y); }, Status::invalid_argument, "w");
      expect_error([&] { (void)forward_workspace_size(h, d.x, on_view, d.conv, d.y); }, Status::invalid_argument, "w");
    } else {
      agrees(strided, pf);
    }
  }
}

}  // namespace
}  // namespace strata::dnn::test
