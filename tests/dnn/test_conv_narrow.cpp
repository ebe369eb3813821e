// bf16/f16 forward convolution on inputs read as stored -- im2col_gemm's narrow route (the
// lowering on 2-byte elements, blas::gemm_ex, only y staged in f32) and implicit GEMM's bf16
// route on AMX tiles: against the double reference over the shape sweep and larger products
// (AMX tiles where this CPU has them), every ISA, 1 and 2 threads (bitwise alike), alpha/beta,
// the fused forward, strided inputs (staged instead), and the workspace im2col asks for.
#include <gtest/gtest.h>

#include <optional>
#include <type_traits>

#include "conv_test_util.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/isa.hpp"
#include "strata/core/log.hpp"
#include "strata/core/minifloat.hpp"
#include "support/isas.hpp"

namespace strata::dnn::test {
namespace {

// Products big enough for the native bf16 kernels' tile paths (the sweep's are tiny): a 1x1
// with 64 output channels (few-row route), a 3x3 with 96 (tiled route), grouped, strided.
const std::vector<Spec>& large_specs() {
  static const std::vector<Spec> s{
      {"pointwise_64x64", 2, 64, 64, 1, {16, 16}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"wide_3x3_96", 1, 32, 96, 1, {14, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"groups2_3x3", 2, 64, 128, 2, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"stride2_5x5", 1, 24, 40, 1, {21, 21}, {5, 5}, {2, 2}, {2, 2}, {1, 1}},
  };
  return s;
}

template <class T>
constexpr double half_step() {  // the relative rounding error of T: 2^-8 (bf16), 2^-11 (f16)
  return std::is_same_v<T, bf16> ? 1.0 / 256 : 1.0 / 2048;
}
template <class T>
DType dtype_of() {
  return std::is_same_v<T, bf16> ? DType::bf16 : DType::f16;
}

// Values rounded to T (f is overwritten with what T holds).
template <class T>
std::vector<T> rounded(std::vector<float>& f) {
  std::vector<T> v(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) v[i] = T(f[i]), f[i] = v[i].to_float();
  return v;
}

// One forward call on `algo`; returns the verbose line it printed.
template <class T>
std::string forward(const Handle& h, const Descs& d, const std::vector<T>& x, const std::vector<T>& w, float alpha,
                    float beta, std::vector<T>& y, ConvAlgo algo = ConvAlgo::im2col_gemm) {
  const std::size_t ws = forward_workspace_size(h, d.x, d.w, d.conv, d.y, algo);
  auto buf = make_aligned<std::byte>(ws + 1);
  testing::internal::CaptureStderr();
  set_verbose_level(1);
  convolution_forward(h, &alpha, d.x, x.data(), d.w, w.data(), d.conv, algo, buf.get(), ws, &beta, d.y, y.data());
  set_verbose_level(0);
  return testing::internal::GetCapturedStderr();
}

// y (rounded to T) against round(alpha * ref + beta * prior): the f32 accumulation bound
// (k eps sum|x||w|) carried through one rounding to T.
template <class T>
int check(const std::vector<T>& y, const testref::RefResult& ref, const std::vector<float>& prior, float alpha,
          float beta, const Descs& d, const std::string& what) {
  const double eps = std::numeric_limits<float>::epsilon(), rel = half_step<T>();
  const int64_t k_len = d.w.element_count() / d.w.dim(0);
  int fails = 0;
  for (int64_t o : offsets_of(d.y.dims(), d.y.strides())) {
    const auto i = std::size_t(o);
    const double want = alpha * ref.value[i] + (beta == 0.f ? 0.0 : beta * double(prior[i]));
    const double acc = double(k_len) * eps * std::fabs(alpha) * ref.abs[i] + 2 * eps * std::fabs(beta * prior[i]);
    const double bound = rel * (std::fabs(want) + acc) + acc + 1e-30;
    const double got = y[i].to_float();
    if (!(std::fabs(got - want) <= bound) && ++fails <= 3)
      ADD_FAILURE() << what << ": offset " << o << " got " << got << " want " << want << " bound " << bound;
  }
  return fails;
}

template <class T>
void sweep_one(const Spec& s, Layout layout, FilterLayout fl, Isa isa, ConvAlgo algo = ConvAlgo::im2col_gemm) {
  const Descs d = make_descs(s, layout, fl, dtype_of<T>());
  auto xf = random_floats(d.x.span(), 21), wf = random_floats(d.w.element_count(), 22),
       yf = random_floats(d.y.span(), 23);
  const auto x = rounded<T>(xf), w = rounded<T>(wf), prior = rounded<T>(yf);
  const auto ref = testref::ref_forward(testref::Conv3d(d.x, d.w, d.conv, d.y), to_double(xf), to_double(wf), d.y.span());
  const std::string what = s.name + (layout == Layout::nchw ? " nchw" : " nhwc") +
                           (fl == FilterLayout::kcrs ? " kcrs " : " krsc ") + std::string(dtype_name(dtype_of<T>())) +
                           " " + std::string(isa_name(isa));
  std::optional<std::vector<T>> first;
  for (int threads : {1, 2}) {
    Handle h;
    h.set_isa(isa);
    h.set_num_threads(threads);
    std::vector<T> y(prior.size(), T(std::numeric_limits<float>::quiet_NaN()));  // beta 0: never read
    const std::string trace = forward(h, d, x, w, 1.f, 0.f, y, algo);
    EXPECT_NE(trace.find("inputs=as-stored"), std::string::npos) << what << ": " << trace;
    EXPECT_NE(trace.find(conv_algo_name(algo)), std::string::npos) << what << ": " << trace;
    EXPECT_EQ(check(y, ref, yf, 1.f, 0.f, d, what + " t" + std::to_string(threads)), 0);
    if (!first) first = y;
    else
      for (std::size_t i = 0; i < y.size(); ++i)
        if (y[i].bits != (*first)[i].bits) {
          ADD_FAILURE() << what << ": 2 threads differ from 1 at " << i;
          break;
        }
    if (threads == 2) {  // alpha/beta: y = 1.5 conv + 0.5 y
      std::vector<T> yb = prior;
      forward(h, d, x, w, 1.5f, 0.5f, yb, algo);
      EXPECT_EQ(check(yb, ref, yf, 1.5f, 0.5f, d, what + " alpha/beta"), 0);
    }
  }
}

TEST(ConvNarrow, Im2colGemmReadsBf16AndF16AsStoredOverTheSweep) {
  int cases = 0;
  for (Isa isa : strata::test::usable_isas())
    for (const auto* specs : {&conv_sweep(), &large_specs()})
      for (const Spec& s : *specs) {
        // Both natural layouts everywhere; the mixed ones (the filter repacked) for a few shapes.
        const bool mixed = s.name == "odd_3x3" || s.name == "groups2" || s.name == "wide_3x3_96";
        for (auto [layout, fl] : {std::pair{Layout::nchw, FilterLayout::kcrs}, std::pair{Layout::nhwc, FilterLayout::krsc},
                                  std::pair{Layout::nhwc, FilterLayout::kcrs}, std::pair{Layout::nchw, FilterLayout::krsc}}) {
          if (!mixed && (layout == Layout::nchw) != (fl == FilterLayout::kcrs)) continue;
          sweep_one<bf16>(s, layout, fl, isa);
          if (isa == Isa::avx512) sweep_one<f16>(s, layout, fl, isa);  // one kernel family: f16 is widened
          ++cases;
        }
      }
  EXPECT_GT(cases, 50);
}

// Whether this process may run AMX's bf16 tiles (implicit GEMM's bf16 route needs them).
bool amx_usable() { return cpu_features().amx_bf16 && cpu_features().avx512_bf16 && amx_ready(); }

// Shapes for the AMX route's cases besides the sweep's (whose channel counts are below one
// block of 32, so every tile is staged): whole channel blocks read in place (a 1x1 across
// output rows, a 3x3's interior runs), groups of 32 channels, output channels and pixels short
// of a tile, stride and dilation, a filter past half of L2 (several pixel blocks per item), and
// few channels (filter rows merged into runs).
const std::vector<Spec>& amx_specs() {
  static const std::vector<Spec> s{
      {"pointwise_64_80_rows", 2, 64, 80, 1, {7, 9}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"3x3_64_48_interior", 1, 64, 48, 1, {20, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"3x3_groups_of_32", 2, 64, 64, 2, {11, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"3x3_s2_96_40", 1, 96, 40, 1, {15, 17}, {3, 3}, {1, 1}, {2, 2}, {1, 1}},
      {"3x3_dilated_48", 1, 48, 33, 1, {13, 12}, {3, 3}, {2, 2}, {1, 1}, {2, 2}},
      {"1x1_s2_64_96", 1, 64, 96, 1, {14, 14}, {1, 1}, {0, 0}, {2, 2}, {1, 1}},
      {"3x3_256_320_big_filter", 1, 256, 320, 1, {9, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      // Few channels: each filter row's S x C values are one run (conv1-like, two blocks, one).
      {"conv1_like_7x7_s2_c3", 1, 3, 40, 1, {23, 21}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {"5x5_c8_two_blocks", 1, 8, 24, 1, {10, 30}, {5, 5}, {2, 2}, {1, 1}, {1, 1}},
      {"5x5_c4_batch2", 2, 4, 33, 1, {12, 13}, {5, 5}, {1, 2}, {1, 1}, {1, 1}},
  };
  return s;
}

// The sweep's geometry with at least 17 channels per group (the AMX route serves 16 and more;
// 17 leaves a partial channel block).
std::vector<Spec> sweep_with_amx_channels() {
  std::vector<Spec> v;
  for (Spec s : conv_sweep()) {
    s.c = s.g * std::max<int64_t>(s.c / s.g, 17);
    v.push_back(s);
  }
  return v;
}

// bf16 on implicit GEMM reads x and w as stored on AMX tiles (channels-last tensors; the filter
// in either layout): the sweep's geometry, the larger products and the AMX shapes against the
// reference, 1 and 2 threads bitwise alike, alpha/beta.
TEST(ConvNarrow, ImplicitGemmRunsBf16OnAmxTilesOverTheSweep) {
  if (!amx_usable()) GTEST_SKIP() << "no AMX bf16 tiles on this CPU";
  int cases = 0;
  const std::vector<Spec> sweep = sweep_with_amx_channels();
  for (const auto* specs : {&sweep, &large_specs(), &amx_specs()})
    for (const Spec& s : *specs)
      for (FilterLayout fl : {FilterLayout::krsc, FilterLayout::kcrs}) {
        sweep_one<bf16>(s, Layout::nhwc, fl, Isa::avx512, ConvAlgo::implicit_gemm);
        ++cases;
      }
  EXPECT_GT(cases, 50);
}

// The fused forward on stored bf16 inputs: act(alpha1 conv + alpha2 z + bias), z and bias bf16,
// on both algorithms that read them so.
class ConvNarrowFused : public ::testing::TestWithParam<ConvAlgo> {};

TEST_P(ConvNarrowFused, FusedForwardOnStoredInputsMatchesTheReference) {
  const ConvAlgo algo = GetParam();
  if (algo == ConvAlgo::implicit_gemm && !amx_usable()) GTEST_SKIP() << "no AMX bf16 tiles on this CPU";
  const Spec s = large_specs()[1];
  const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc, DType::bf16);
  auto xf = random_floats(d.x.span(), 31), wf = random_floats(d.w.element_count(), 32), zf = random_floats(d.y.span(), 33),
       bf = random_floats(s.k, 34);
  const auto x = rounded<bf16>(xf), w = rounded<bf16>(wf), z = rounded<bf16>(zf), bias = rounded<bf16>(bf);
  const auto bias_desc = TensorDesc::packed(DType::bf16, Layout::nchw, {1, s.k, 1, 1});
  const auto ref = testref::ref_forward(testref::Conv3d(d.x, d.w, d.conv, d.y), to_double(xf), to_double(wf), d.y.span());
  Handle h;
  h.set_num_threads(2);
  const std::size_t ws = forward_workspace_size(h, d.x, d.w, d.conv, d.y, algo);
  auto buf = make_aligned<std::byte>(ws + 1);
  std::vector<bf16> y(z.size());
  const float alpha1 = 0.75f, alpha2 = -0.5f;
  convolution_bias_activation_forward(h, &alpha1, d.x, x.data(), d.w, w.data(), d.conv, algo, buf.get(), ws, &alpha2,
                                      z.data(), bias_desc, bias.data(), Activation::relu, d.y, y.data());
  const double eps = std::numeric_limits<float>::epsilon();
  const int64_t k_len = d.w.element_count() / d.w.dim(0);
  int fails = 0;
  for (int64_t o = 0; o < d.y.element_count(); ++o) {
    const auto i = std::size_t(o);
    const int64_t ch = o % s.k;
    const double want = std::max(0.0, alpha1 * ref.value[i] + alpha2 * double(zf[i]) + double(bf[std::size_t(ch)]));
    const double acc = double(k_len) * eps * alpha1 * ref.abs[i] + 4 * eps * (std::fabs(zf[i]) + std::fabs(bf[std::size_t(ch)]));
    const double bound = half_step<bf16>() * (want + acc) + acc;
    if (!(std::fabs(double(y[i].to_float()) - want) <= bound) && ++fails <= 3)
      ADD_FAILURE() << "offset " << o << " got " << y[i].to_float() << " want " << want;
  }
  EXPECT_EQ(fails, 0);
}

INSTANTIATE_TEST_SUITE_P(StoredInputs, ConvNarrowFused, ::testing::Values(ConvAlgo::im2col_gemm, ConvAlgo::implicit_gemm),
                         [](const auto& param_info) { return std::string(conv_algo_name(param_info.param)); });

// A strided (not packed) x cannot be addressed by the packed strides: it is staged as f32, and
// the result still matches.
TEST(ConvNarrow, StridedInputIsStagedAndAgrees) {
  const Spec s = conv_sweep()[0];
  Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc, DType::bf16);
  const int64_t C = s.c, H = s.in[0], W = s.in[1], ps = C + 2, rs = W * ps + 5;
  d.x = TensorDesc(DType::bf16, {s.n, C, H, W}, {H * rs + 3, 1, rs, ps});
  auto xf = random_floats(d.x.span(), 41), wf = random_floats(d.w.element_count(), 42), yf = random_floats(d.y.span(), 43);
  const auto x = rounded<bf16>(xf), w = rounded<bf16>(wf);
  const auto ref = testref::ref_forward(testref::Conv3d(d.x, d.w, d.conv, d.y), to_double(xf), to_double(wf), d.y.span());
  Handle h;
  std::vector<bf16> y(std::size_t(d.y.span()));
  const std::string trace = forward(h, d, x, w, 1.f, 0.f, y);
  EXPECT_NE(trace.find("inputs=staged-f32"), std::string::npos) << trace;
  EXPECT_EQ(check(y, ref, yf, 1.f, 0.f, d, "strided x"), 0);
}

// Reading the inputs as stored, a 1x1 NHWC convolution needs no lowering and no filter copy,
// and y is finished block by block: the workspace is one block's f32 results, the same for any
// batch and smaller than an f32 copy of y; one byte less is refused before any write.
TEST(ConvNarrow, WorkspaceIsOneBlockOfResults) {
  Spec s = large_specs()[0];
  Handle h;
  h.set_num_threads(1);
  const Descs d2 = make_descs(s, Layout::nhwc, FilterLayout::krsc, DType::bf16);
  const std::size_t ws = forward_workspace_size(h, d2.x, d2.w, d2.conv, d2.y, ConvAlgo::im2col_gemm);
  s.n = 8;
  const Descs d = make_descs(s, Layout::nhwc, FilterLayout::krsc, DType::bf16);
  EXPECT_EQ(forward_workspace_size(h, d.x, d.w, d.conv, d.y, ConvAlgo::im2col_gemm), ws);
  EXPECT_GT(ws, 0u);
  EXPECT_LT(ws, std::size_t(d.y.element_count()) * 4);
  const std::vector<bf16> x(std::size_t(d.x.span()), bf16(1.f)), w(std::size_t(d.w.element_count()), bf16(1.f));
  std::vector<bf16> y(std::size_t(d.y.span()), bf16(7.f));
  auto buf = make_aligned<std::byte>(ws);
  const float one = 1.f, zero = 0.f;
  expect_error([&] { convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::im2col_gemm,
                                         buf.get(), ws - 1, &zero, d.y, y.data()); },
               Status::insufficient_workspace, "workspace_bytes");
  for (const bf16& v : y) ASSERT_EQ(v.to_float(), 7.f);
  convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::im2col_gemm, buf.get(), ws, &zero, d.y,
                      y.data());
  for (const bf16& v : y) ASSERT_EQ(v.to_float(), 64.f);  // 64 channels of 1 x 1
}

// The staged output's rounding (the bulk f32 -> bf16 conversion) is bf16(float)'s, bit for bit:
// ties to even, overflow to infinity, subnormals, quiet NaNs (not -0: a sum starts at +0). A 1-D 1x1
// convolution with one channel and w = 1 on the direct algorithm gives y = round(alpha x).
TEST(ConvNarrow, OutputRoundsAsBf16Does) {
  std::vector<float> xf{1.f, -1.f, 0.f, 3e38f, -3e38f, 1e-39f, -2.5e-40f, 1.f + 1.f / 128, 1.f + 3.f / 128};
  std::vector<float> extra = random_floats(500, 51);
  xf.insert(xf.end(), extra.begin(), extra.end());
  xf.push_back(std::numeric_limits<float>::infinity());
  xf.push_back(std::numeric_limits<float>::quiet_NaN());
  const auto x = rounded<bf16>(xf);
  const int64_t n = int64_t(x.size());
  const auto x_desc = TensorDesc::packed(DType::bf16, Layout::nchw, {1, 1, n});
  const FilterDesc w_desc(DType::bf16, FilterLayout::kcrs, {1, 1, 1});
  const ConvDesc conv({0}, {1}, {1});
  const auto y_desc = TensorDesc::packed(DType::bf16, Layout::nchw, {1, 1, n});
  const std::vector<bf16> w{bf16(1.f)};
  Handle h;
  for (float alpha : {1.f + 1.f / 256, 1.f + 3.f / 512, 1.5f, -0.3f}) {  // products that sit on and between ties
    const std::size_t ws = forward_workspace_size(h, x_desc, w_desc, conv, y_desc, ConvAlgo::direct);
    auto buf = make_aligned<std::byte>(ws + 1);
    std::vector<bf16> y(x.size());
    const float zero = 0.f;
    convolution_forward(h, &alpha, x_desc, x.data(), w_desc, w.data(), conv, ConvAlgo::direct, buf.get(), ws, &zero,
                        y_desc, y.data());
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(y[i].bits, bf16(alpha * xf[i]).bits) << "alpha " << alpha << " x " << xf[i];
  }
}

}  // namespace
}  // namespace strata::dnn::test
