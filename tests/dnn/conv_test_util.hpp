// Shared helpers for the convolution tests: problem specs, descriptor construction, random
// data, and checks against the double-precision references with documented bounds.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reference/dnn_conv_reference.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/status.hpp"
#include "strata/dnn/convolution.hpp"

namespace strata::dnn::test {

struct Spec {
  std::string name;
  int64_t n, c, k, g;
  std::vector<int64_t> in, f, pad, str, dil;
  ConvMode mode = ConvMode::cross_correlation;
};

// The shape sweep every algorithm is checked over: odd sizes, padding larger than the kernel,
// stride > 1, dilation, groups and depthwise, 1x1/3x3/5x5/7x7, batch 1 and > 1, 1-D/2-D/3-D,
// convolution and cross-correlation.
inline const std::vector<Spec>& conv_sweep() {
  static const std::vector<Spec> s{
      {"odd_3x3", 2, 3, 4, 1, {5, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"valid_3x3", 1, 4, 6, 1, {9, 9}, {3, 3}, {0, 0}, {1, 1}, {1, 1}},
      {"pad_gt_kernel", 2, 5, 3, 1, {8, 6}, {3, 3}, {4, 4}, {1, 1}, {1, 1}},
      {"stride2", 1, 6, 8, 1, {11, 13}, {3, 3}, {1, 1}, {2, 2}, {1, 1}},
      {"dilation2", 2, 4, 4, 1, {10, 10}, {3, 3}, {2, 2}, {1, 1}, {2, 2}},
      {"groups2", 2, 8, 8, 2, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"depthwise", 1, 8, 8, 8, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"pointwise", 3, 16, 8, 1, {6, 6}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      {"pointwise_s2", 1, 7, 5, 1, {6, 7}, {1, 1}, {0, 0}, {2, 2}, {1, 1}},
      {"k5", 2, 3, 4, 1, {12, 11}, {5, 5}, {2, 2}, {1, 1}, {1, 1}},
      {"k7", 1, 3, 4, 1, {17, 15}, {7, 7}, {3, 3}, {1, 1}, {1, 1}},
      {"stem_k7_s2", 2, 3, 8, 1, {16, 16}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      // Depth 10 x 49 = 490 crosses the GEMM's k block (320 with a 32 KiB L1) inside a merged
      // run of channels (7 x 10 = 70 values per filter row: too long for the row-band path).
      {"k7_c10_s2", 1, 10, 6, 1, {19, 17}, {7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {"conv_mode", 1, 3, 2, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, ConvMode::convolution},
      {"wide_3x3", 1, 20, 24, 1, {13, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"many_tiles", 3, 8, 8, 1, {30, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"rect_2x5", 2, 3, 5, 1, {9, 12}, {2, 5}, {1, 2}, {1, 1}, {1, 1}},
      {"conv1d", 2, 4, 3, 1, {17}, {5}, {2}, {1}, {1}},
      {"conv3d", 1, 3, 2, 1, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
      {"conv3d_1x3x3", 2, 4, 4, 1, {3, 6, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}},
  };
  return s;
}

inline std::vector<int64_t> cat_dims(int64_t a, int64_t b, const std::vector<int64_t>& rest) {
  std::vector<int64_t> d{a, b};
  d.insert(d.end(), rest.begin(), rest.end());
  return d;
}

struct Descs {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
};

inline Descs make_descs(const Spec& s, Layout layout, FilterLayout fl, DType t = DType::f32) {
  Descs d;
  d.conv = ConvDesc(s.pad, s.str, s.dil, s.g, s.mode);
  d.x = TensorDesc::packed(t, layout, cat_dims(s.n, s.c, s.in));
  d.w = FilterDesc(t, fl, cat_dims(s.k, s.c / s.g, s.f));
  d.y = TensorDesc::packed(t, layout, conv_output_dims(d.x, d.w, d.conv));
  return d;
}

// Expects f() to throw strata::Error with this status, naming argument `arg`.
template <class F>
void expect_error(F&& f, Status status, const std::string& arg) {
  try {
    f();
    ADD_FAILURE() << "no error, expected argument " << arg;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(e.argument(), arg) << e.what();
  }
}

// Uniform values in [-1, 1) (f32), reproducible per seed.
inline std::vector<float> random_floats(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(std::size_t(std::max<int64_t>(count, 1)));
  for (auto& e : v) e = u(rng);
  return v;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Per-algorithm error factor c in |got - ref| <= c * k * eps * sum|x||w| (k: the reduction
// length), see docs/dnn.md. Winograd and FFT errors spread over a whole tile (an output whose
// own receptive field is all padding still picks up rounding from its tile-mates), so they
// are bounded by the largest |x||w| sum of the output instead of the element's own.
inline double error_factor(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::winograd_2x2_3x3: return 4;
    case ConvAlgo::winograd_4x4_3x3: return 16;
    case ConvAlgo::fft_tiled: return 4;
    default: return 1;
  }
}

// Checks got[off] against alpha*ref + beta*prior at every offset in `offsets`; returns the
// number of failures (reports the first few).
inline int check_against(const std::vector<float>& got, const testref::RefResult& ref, const std::vector<float>& prior,
                         float alpha, float beta, const std::vector<int64_t>& offsets, int64_t k_len, ConvAlgo algo,
                         const std::string& what) {
  const double eps = std::numeric_limits<float>::epsilon();
  double max_abs = 0;
  for (int64_t o : offsets) max_abs = std::max(max_abs, ref.abs[std::size_t(o)]);
  int fails = 0;
  for (int64_t o : offsets) {
    const auto i = std::size_t(o);
    const double want = alpha * ref.value[i] + (beta == 0.f ? 0.0 : beta * double(prior[i]));
    const bool tiled = algo == ConvAlgo::fft_tiled || algo == ConvAlgo::winograd_2x2_3x3 ||
                       algo == ConvAlgo::winograd_4x4_3x3;
    const double scale = tiled ? max_abs : ref.abs[i];
    const double bound = error_factor(algo) * double(k_len) * eps * (std::fabs(alpha) * scale + 1e-30) +
                         (beta == 0.f ? 0.0 : 2 * eps * std::fabs(beta * prior[i])) + 1e-30;
    if (!(std::fabs(double(got[i]) - want) <= bound)) {
      if (++fails <= 3)
        ADD_FAILURE() << what << ": offset " << o << " got " << got[i] << " want " << want << " bound " << bound;
    }
  }
  return fails;
}

// All element offsets of a tensor with these dims/strides.
inline std::vector<int64_t> offsets_of(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  std::vector<int64_t> out;
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t d : dims)
    if (d == 0) return out;
  while (true) {
    int64_t o = 0;
    for (std::size_t i = 0; i < dims.size(); ++i) o += idx[i] * strides[i];
    out.push_back(o);
    std::size_t i = dims.size();
    while (i-- > 0) {
      if (++idx[i] < dims[i]) break;
      idx[i] = 0;
      if (i == 0) return out;
    }
  }
}

}  // namespace strata::dnn::test
