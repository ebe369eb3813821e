// The convolution API beyond numerics: bad descriptors and arguments (clear errors, nothing
// written), workspace rules, determinism across thread counts, selection (get/find), the
// persistent algorithm cache, f16/bf16/i8 storage, bias-add and the fused forward.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "conv_test_util.hpp"
#include "strata/core/log.hpp"
#include "strata/core/minifloat.hpp"

namespace strata::dnn::test {
namespace {

const Spec kSpec{"api", 2, 8, 8, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};

TEST(ConvApi, BadDescriptorsNameTheArgument) {
  expect_error([] { TensorDesc::nchw(DType::f32, 1, -3, 4, 4); }, Status::invalid_argument, "dims");
  expect_error([] { TensorDesc(DType::f32, {1, 2, 3, 3}, {18, 9, 3, 0}); }, Status::invalid_argument, "strides");
  expect_error([] { TensorDesc(DType::f32, {1, 2, 3, 3}, {18, 4, 3, 1}); }, Status::invalid_argument, "strides");
  expect_error([] { TensorDesc(DType::f64, {1, 2, 3, 3}, {18, 9, 3, 1}); }, Status::invalid_argument, "dtype");
  expect_error([] { FilterDesc::kcrs(DType::f32, 4, 0, 3, 3); }, Status::invalid_argument, "dims");
  expect_error([] { ConvDesc::conv2d(-1, 0); }, Status::invalid_argument, "pads");
  expect_error([] { ConvDesc::conv2d(0, 0, 0, 1); }, Status::invalid_argument, "strides");
  expect_error([] { ConvDesc::conv2d(0, 0, 1, 1, 1, 0); }, Status::invalid_argument, "dilations");
  expect_error([] { ConvDesc::conv2d(0, 0, 1, 1, 1, 1, 0); }, Status::invalid_argument, "groups");
  const auto x = TensorDesc::nchw(DType::f32, 1, 6, 8, 8);
  expect_error([&] { conv_output_dims(x, FilterDesc::kcrs(DType::f32, 4, 4, 3, 3), ConvDesc::conv2d(1, 1)); },
               Status::invalid_argument, "w");  // channel mismatch
  expect_error([&] { conv_output_dims(x, FilterDesc::kcrs(DType::f32, 5, 3, 3, 3), ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 2)); },
               Status::invalid_argument, "w");  // K = 5 not divisible by 2 groups
  // An 11x11 filter on a padded 10x10 input:
  expect_error([&] { conv_output_dims(x, FilterDesc::kcrs(DType::f32, 4, 6, 11, 11), ConvDesc::conv2d(1, 1)); },
               Status::invalid_argument, "w");
}

TEST(ConvApi, RejectedCallsWriteNothing) {
  Handle h;
  const Descs d = make_descs(kSpec, Layout::nchw, FilterLayout::kcrs);
  const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2);
  std::vector<float> y(std::size_t(d.y.span()), 3.f), dx(std::size_t(d.x.span()), 3.f), dw(std::size_t(d.w.element_count()), 3.f);
  const float one = 1.f, zero = 0.f;
  auto untouched = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float f) { return f == 3.f; });
  };
  // Wrong output dims.
  const auto bad_y = TensorDesc::nchw(DType::f32, 2, 8, 11, 12);
  expect_error([&] { convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::direct, nullptr, 0, &zero, bad_y, y.data()); },
               Status::invalid_argument, "y");
  expect_error([&] { convolution_backward_data(h, &one, d.w, w.data(), bad_y, y.data(), d.conv, ConvAlgo::direct, nullptr, 0, &zero, d.x, dx.data()); },
               Status::invalid_argument, "dy");
  // Mixed dtypes.
  const auto y16 = TensorDesc::nchw(DType::f16, 2, 8, 12, 12);
  expect_error([&] { convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::direct, nullptr, 0, &zero, y16, y.data()); },
               Status::invalid_argument, "y");
  // Unsupported algorithm for the problem (Winograd has no backward-filter; stride 2).
  expect_error([&] { convolution_backward_filter(h, &one, d.x, x.data(), d.y, y.data(), d.conv, ConvAlgo::winograd_4x4_3x3, nullptr, 0, &zero, d.w, dw.data()); },
               Status::not_supported, "algo");
  expect_error([&] { convolution_backward_filter(h, &one, d.x, x.data(), d.y, y.data(), d.conv, ConvAlgo::implicit_gemm, nullptr, 0, &zero, d.w, dw.data()); },
               Status::not_supported, "algo");
  // Workspace too small.
  const std::size_t need = forward_workspace_size(h, d.x, d.w, d.conv, d.y, ConvAlgo::winograd_4x4_3x3);
  ASSERT_GT(need, 0u);
  std::vector<std::byte> small(need - 1);
  expect_error([&] { convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::winograd_4x4_3x3, small.data(), need - 1, &zero, d.y, y.data()); },
               Status::insufficient_workspace, "workspace_bytes");
  // Null pointers and scalars.
  expect_error([&] { convolution_forward(h, &one, d.x, nullptr, d.w, w.data(), d.conv, ConvAlgo::direct, nullptr, 0, &zero, d.y, y.data()); },
               Status::invalid_argument, "x");
  expect_error([&] { convolution_forward(h, nullptr, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo::direct, nullptr, 0, &zero, d.y, y.data()); },
               Status::invalid_argument, "alpha");
  expect_error([&] { convolution_backward_filter(h, &one, d.x, x.data(), d.y, y.data(), d.conv, ConvAlgo(17), nullptr, 0, &zero, d.w, dw.data()); },
               Status::invalid_argument, "algo");
  // Budget smaller than any algorithm's needs (f16 staging needs workspace even for direct).
  Handle tight;
  tight.set_workspace_budget(16);
  const Descs d16 = make_descs(kSpec, Layout::nchw, FilterLayout::kcrs, DType::f16);
  std::vector<uint16_t> x16(std::size_t(d16.x.span())), w16(std::size_t(d16.w.element_count()));
  std::vector<uint16_t> y16v(std::size_t(d16.y.span()), 0x4242);
  expect_error([&] { convolution_forward(tight, 1.f, d16.x, x16.data(), d16.w, w16.data(), d16.conv, 0.f, d16.y, y16v.data()); },
               Status::insufficient_workspace, "workspace_budget");
  EXPECT_TRUE(std::all_of(y16v.begin(), y16v.end(), [](uint16_t v) { return v == 0x4242; }));
  EXPECT_TRUE(untouched(y));
  EXPECT_TRUE(untouched(dx));
  EXPECT_TRUE(untouched(dw));
}

// Every algorithm, every operation it supports: identical bits for 1 and 2 threads and for a
// repeated run, in deterministic mode. Batch 4 so image-parallel plans are exercised too.
TEST(ConvApi, DeterministicAcrossThreadCountsAndRuns) {
  const Spec s{"det", 4, 16, 12, 1, {14, 15}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  for (Layout layout : {Layout::nchw, Layout::nhwc}) {
    const Descs d = make_descs(s, layout, layout == Layout::nchw ? FilterLayout::kcrs : FilterLayout::krsc);
    const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2), dy = random_floats(d.y.span(), 3);
    for (ConvOp op : {ConvOp::forward, ConvOp::backward_data, ConvOp::backward_filter})
      for (int a = 0; a < conv_algo_count; ++a) {
        std::vector<std::vector<float>> results;
        for (int threads : {1, 2, 2}) {
          Handle h;
          h.set_num_threads(threads);
          const float one = 1.f, zero = 0.f;
          std::size_t ws = 0;
          try {
            ws = op == ConvOp::forward ? forward_workspace_size(h, d.x, d.w, d.conv, d.y, ConvAlgo(a))
                 : op == ConvOp::backward_data ? backward_data_workspace_size(h, d.w, d.y, d.conv, d.x, ConvAlgo(a))
                                               : backward_filter_workspace_size(h, d.x, d.y, d.conv, d.w, ConvAlgo(a));
          } catch (const Error&) {
            break;
          }
          auto buf = make_aligned<std::byte>(ws + 1);
          std::vector<float> out;
          if (op == ConvOp::forward) {
            out.assign(std::size_t(d.y.span()), 0.f);
            convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo(a), buf.get(), ws, &zero, d.y, out.data());
          } else if (op == ConvOp::backward_data) {
            out.assign(std::size_t(d.x.span()), 0.f);
            convolution_backward_data(h, &one, d.w, w.data(), d.y, dy.data(), d.conv, ConvAlgo(a), buf.get(), ws, &zero, d.x, out.data());
          } else {
            out.assign(std::size_t(d.w.element_count()), 0.f);
            convolution_backward_filter(h, &one, d.x, x.data(), d.y, dy.data(), d.conv, ConvAlgo(a), buf.get(), ws, &zero, d.w, out.data());
          }
          results.push_back(std::move(out));
        }
        for (std::size_t r = 1; r < results.size(); ++r)
          EXPECT_EQ(0, std::memcmp(results[0].data(), results[r].data(), results[0].size() * sizeof(float)))
              << conv_algo_name(ConvAlgo(a)) << " " << conv_op_name(op) << " run " << r;
      }
  }
}

TEST(ConvApi, FastModeIsReportedAsNonDeterministicForSplitBackwardFilter) {
  Handle h;
  h.set_num_threads(2);
  h.set_determinism(Determinism::fast);
  const Descs d = make_descs(kSpec, Layout::nchw, FilterLayout::kcrs);
  bool found = false;
  for (const auto& r : get_backward_filter_algorithms(h, d.x, d.y, d.conv, d.w))
    if (r.algo == ConvAlgo::im2col_gemm) {
      found = true;
      EXPECT_FALSE(r.deterministic);
    }
  EXPECT_TRUE(found);
  Handle det;
  det.set_num_threads(2);
  for (const auto& r : get_backward_filter_algorithms(det, d.x, d.y, d.conv, d.w)) {
    EXPECT_TRUE(!r.supported || r.deterministic);
  }
}

TEST(ConvApi, HeuristicRanksUsableFirstAndFindTimesThem) {
  Handle h;
  h.set_num_threads(2);
  const Descs d = make_descs(Spec{"sel", 2, 32, 32, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, Layout::nchw, FilterLayout::kcrs);
  const auto ranked = get_forward_algorithms(h, d.x, d.w, d.conv, d.y);
  ASSERT_EQ(ranked.size(), std::size_t(conv_algo_count));
  EXPECT_TRUE(ranked.front().supported && ranked.front().within_budget);
  EXPECT_NE(ranked.front().algo, ConvAlgo::direct);  // the loops never win on a 3x3 with 32 channels
  bool seen_unsupported = false;
  for (const auto& r : ranked) {
    if (!r.supported) {
      seen_unsupported = true;
    } else {
      EXPECT_FALSE(seen_unsupported) << "usable after unusable";
    }
    EXPECT_FALSE(r.reason.empty());
  }
  clear_algorithm_cache();
  const auto found = find_forward_algorithms(h, d.x, d.w, d.conv, d.y);
  EXPECT_GT(found.front().time_ms, 0);
  for (std::size_t i = 1; i < found.size(); ++i) {
    if (found[i].time_ms >= 0) {
      EXPECT_LE(found.front().time_ms, found[i].time_ms);
    }
  }
  EXPECT_EQ(algorithm_cache_size(), 1u);
  // A budget below every fast algorithm's workspace leaves only those that fit.
  Handle small;
  small.set_num_threads(2);
  small.set_workspace_budget(0);
  const auto limited = get_forward_algorithms(small, d.x, d.w, d.conv, d.y);
  EXPECT_EQ(limited.front().workspace, 0u);
}

TEST(ConvApi, CacheFilePersistsAndIgnoresCorruptAndStaleLines) {
  const std::string path = testing::TempDir() + "strata_dnn_cache_test.txt";
  std::remove(path.c_str());
  setenv("STRATA_DNN_CACHE", path.c_str(), 1);
  clear_algorithm_cache();
  Handle h;
  h.set_num_threads(1);
  const Descs d = make_descs(kSpec, Layout::nchw, FilterLayout::kcrs);
  const auto best = find_forward_algorithms(h, d.x, d.w, d.conv, d.y).front().algo;
  {
    std::ifstream in(path);
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_NE(line.find(std::string(conv_algo_name(best))), std::string::npos);
  }
  {
    std::ofstream out(path, std::ios::app);
    out << "garbage line\n";
    // A well-formed line from another library version (checksum as documented: FNV-1a 64).
    const std::string body = "strata-dnn-cache-1\t0.0.0-old\tkey\tdirect\t1";
    uint64_t hsh = 1469598103934665603ull;
    for (unsigned char ch : body) hsh = (hsh ^ ch) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hsh));
    out << body << "\t" << hex << "\n";
  }
  // Tamper with a valid line's algorithm: the checksum must reject it.
  std::string content;
  {
    std::ifstream in(path);
    std::getline(in, content);
  }
  const std::string tampered = content.replace(content.find(std::string(conv_algo_name(best))),
                                               conv_algo_name(best).size(), best == ConvAlgo::direct ? "fft_tiled" : "direct");
  { std::ofstream(path, std::ios::app) << tampered << "\n"; }
  testing::internal::CaptureStderr();
  clear_algorithm_cache();  // forget memory; the next lookup reads the file
  EXPECT_EQ(algorithm_cache_size(), 1u);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ignored 2 corrupt and 1 stale"), std::string::npos) << err;
  // The convenience call uses the cached choice (visible in the verbose line).
  setenv("STRATA_VERBOSE", "1", 1);
  testing::internal::CaptureStderr();
  const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2);
  std::vector<float> y(std::size_t(d.y.span()));
  set_verbose_level(1);
  convolution_forward(h, 1.f, d.x, x.data(), d.w, w.data(), d.conv, 0.f, d.y, y.data());
  set_verbose_level(0);
  const std::string trace = testing::internal::GetCapturedStderr();
  EXPECT_NE(trace.find("algo=" + std::string(conv_algo_name(best))), std::string::npos) << trace;
  EXPECT_NE(trace.find("cached find result"), std::string::npos) << trace;
  unsetenv("STRATA_DNN_CACHE");
  unsetenv("STRATA_VERBOSE");
  clear_algorithm_cache(true);
}

// f16/bf16/i8 storage with f32 computation: inputs rounded to the dtype, reference computed
// from the rounded values, result compared after rounding to the dtype.
template <class T>
void check_low_precision(DType t, double rel) {
  Handle h;
  h.set_num_threads(2);
  const Descs d = make_descs(kSpec, Layout::nhwc, FilterLayout::krsc, t);
  auto xf = random_floats(d.x.span(), 4), wf = random_floats(d.w.element_count(), 5);
  std::vector<T> x(xf.size()), w(wf.size()), y(std::size_t(d.y.span()));
  for (std::size_t i = 0; i < xf.size(); ++i) {
    if constexpr (std::is_same_v<T, int8_t>) x[i] = int8_t(std::lround(xf[i] * 3)), xf[i] = float(x[i]);
    else x[i] = T(xf[i]), xf[i] = x[i].to_float();
  }
  for (std::size_t i = 0; i < wf.size(); ++i) {
    if constexpr (std::is_same_v<T, int8_t>) w[i] = int8_t(std::lround(wf[i] * 2)), wf[i] = float(w[i]);
    else w[i] = T(wf[i]), wf[i] = w[i].to_float();
  }
  const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
  const auto ref = testref::ref_forward(geo, to_double(xf), to_double(wf), d.y.span());
  for (int a = 0; a < conv_algo_count; ++a) {
    std::size_t ws = 0;
    try {
      ws = forward_workspace_size(h, d.x, d.w, d.conv, d.y, ConvAlgo(a));
    } catch (const Error&) {
      continue;
    }
    auto buf = make_aligned<std::byte>(ws + 1);
    const float one = 1.f, zero = 0.f;
    convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, ConvAlgo(a), buf.get(), ws, &zero, d.y, y.data());
    int fails = 0;
    for (int64_t o : offsets_of(d.y.dims(), d.y.strides())) {
      const double want = ref.value[std::size_t(o)];
      double got;
      if constexpr (std::is_same_v<T, int8_t>) got = y[std::size_t(o)];
      else got = y[std::size_t(o)].to_float();
      const double expect = std::is_same_v<T, int8_t> ? std::clamp(std::nearbyint(want), -128.0, 127.0) : want;
      const double bound = rel * std::fabs(want) + 1e-4 * ref.abs[std::size_t(o)] + (std::is_same_v<T, int8_t> ? 0 : 1e-6);
      if (!(std::fabs(got - expect) <= bound) && ++fails < 3)
        ADD_FAILURE() << dtype_name(t) << " " << conv_algo_name(ConvAlgo(a)) << " offset " << o << " got " << got << " want " << expect;
    }
  }
}

TEST(ConvApi, LowPrecisionStorage) {
  check_low_precision<bf16>(DType::bf16, 1.0 / 128);
  check_low_precision<f16>(DType::f16, 1.0 / 1024);
  check_low_precision<int8_t>(DType::i8, 0.0);
}

double activate_ref(Activation a, double v) {
  switch (a) {
    case Activation::identity: return v;
    case Activation::relu: return std::max(v, 0.0);
    case Activation::relu6: return std::clamp(v, 0.0, 6.0);
    case Activation::sigmoid: return 1.0 / (1.0 + std::exp(-v));
    case Activation::tanh: return std::tanh(v);
  }
  return v;
}

// The fused forward y = act(alpha1 conv(x, w) + alpha2 z + bias) on every algorithm that can
// run the problem (implicit GEMM fuses it into its output tiles, the others run a second
// pass), both layouts, every activation, residual absent / separate / aliasing y, bias absent
// or present, against a double reference.
TEST(ConvApi, FusedBiasResidualActivationOnEveryAlgorithm) {
  Handle h;
  h.set_num_threads(2);
  const Spec spec{"fused", 2, 8, 16, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  const Spec pointwise{"fused1x1", 2, 8, 16, 1, {7, 7}, {1, 1}, {0, 0}, {1, 1}, {1, 1}};
  // 120 values per filter row: implicit GEMM's padded band (forced: with a filter this small a
  // channels-last input takes the row walk by itself), whose 2 threads split the filter's two
  // 32-channel panels over the 5 pixel tiles (the epilogue then runs in a pass of its own).
  const Spec wide{"fused_wide", 1, 40, 48, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  for (const Spec& sp : {spec, pointwise, wide})
    for (Layout layout : {Layout::nchw, Layout::nhwc}) {
      if (sp.name == wide.name) setenv("STRATA_CONV_BAND", "panels", 1);
      else unsetenv("STRATA_CONV_BAND");
      const Descs d = make_descs(sp, layout, layout == Layout::nchw ? FilterLayout::kcrs : FilterLayout::krsc);
      const auto x = random_floats(d.x.span(), 1), w = random_floats(d.w.element_count(), 2);
      const auto z = random_floats(d.y.span(), 3), bias = random_floats(std::size_t(sp.k), 4);
      const auto bias_desc = TensorDesc::nchw(DType::f32, 1, sp.k, 1, 1);
      const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
      const auto ref = testref::ref_forward(geo, to_double(x), to_double(w), d.y.span());
      const auto offsets = offsets_of(d.y.dims(), d.y.strides());
      const int64_t cstride = d.y.strides()[1];
      const float alpha1 = 0.75f, alpha2 = 0.5f;
      for (const AlgoPerf& perf : get_forward_algorithms(h, d.x, d.w, d.conv, d.y)) {
        if (!perf.supported) continue;
        // The wide problem is there for implicit GEMM; at depth 360 Winograd's rounding (docs/dnn.md,
        // tested against its own bound elsewhere) exceeds this test's fixed tolerance.
        if (sp.name == "fused_wide" && perf.algo != ConvAlgo::implicit_gemm) continue;
        const std::size_t ws = forward_workspace_size(h, d.x, d.w, d.conv, d.y, perf.algo);
        auto buf = make_aligned<std::byte>(ws + 1);
        for (Activation act : {Activation::identity, Activation::relu, Activation::relu6, Activation::sigmoid,
                               Activation::tanh})
          for (int residual : {0, 1, 2})  // none, separate z, z aliasing y
            for (bool with_bias : {false, true}) {
              std::vector<float> y = residual == 2 ? z : std::vector<float>(z.size(), std::numeric_limits<float>::quiet_NaN());
              const void* zp = residual == 0 ? nullptr : residual == 1 ? z.data() : y.data();
              convolution_bias_activation_forward(h, &alpha1, d.x, x.data(), d.w, w.data(), d.conv, perf.algo, buf.get(),
                                                  ws, &alpha2, zp, bias_desc, with_bias ? bias.data() : nullptr, act, d.y,
                                                  y.data());
              int fails = 0;
              for (int64_t o : offsets) {
                const int64_t channel = o / cstride % sp.k;
                double pre = alpha1 * ref.value[std::size_t(o)];
                if (residual) pre += alpha2 * z[std::size_t(o)];
                if (with_bias) pre += bias[std::size_t(channel)];
                const double want = activate_ref(act, pre);
                if (!(std::fabs(y[std::size_t(o)] - want) <= 2e-5 + 2e-5 * std::fabs(want)) && ++fails < 3)
                  ADD_FAILURE() << sp.name << (layout == Layout::nchw ? " nchw " : " nhwc ") << conv_algo_name(perf.algo)
                                << " act " << int(act) << " residual " << residual << " bias " << with_bias
                                << " offset " << o << " got " << y[std::size_t(o)] << " want " << want;
              }
            }
      }
    }
  unsetenv("STRATA_CONV_BAND");
}

TEST(ConvApi, BiasAdd) {
  Handle h;
  const Descs d = make_descs(kSpec, Layout::nchw, FilterLayout::kcrs);
  const auto z = random_floats(d.y.span(), 3), bias = random_floats(8, 4);
  const auto bias_desc = TensorDesc::nchw(DType::f32, 1, 8, 1, 1);
  std::vector<float> y = z;
  const float a = 2.f, b = 1.f;
  add_bias(h, &a, bias_desc, bias.data(), &b, d.y, y.data());
  for (int64_t o = 0; o < d.y.span(); ++o) EXPECT_FLOAT_EQ(y[std::size_t(o)], z[std::size_t(o)] + 2 * bias[std::size_t(o / 144 % 8)]);
  expect_error([&] { add_bias(h, &a, TensorDesc::nchw(DType::f32, 1, 7, 1, 1), bias.data(), &b, d.y, y.data()); },
               Status::invalid_argument, "bias_desc");
}

}  // namespace
}  // namespace strata::dnn::test
