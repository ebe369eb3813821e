// PyTorch as an independent oracle: tests/dnn/oracle/*.txt hold inputs and torch's float64
// forward output and gradients (scripts/gen_dnn_oracle.py). Every algorithm that supports a
// problem must reproduce them within its documented bound; no torch is needed here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "conv_test_util.hpp"

namespace strata::dnn::test {
namespace {

struct Oracle {
  std::string name;
  Spec spec;
  std::map<std::string, std::vector<double>> t;
};

Oracle load(const std::filesystem::path& path) {
  std::ifstream in(path);
  Oracle o;
  std::string word;
  int version = 0, sr = 0;
  in >> word >> version;
  if (word != "strata-dnn-oracle" || version != 1) throw std::runtime_error("bad header in " + path.string());
  auto read_vec = [&](const char* label) {
    in >> word;
    if (word != label) throw std::runtime_error(std::string("expected ") + label + " in " + path.string());
    std::vector<int64_t> v(static_cast<std::size_t>(sr));
    for (auto& e : v) in >> e;
    return v;
  };
  in >> word >> o.name >> word >> sr >> word >> o.spec.n >> word >> o.spec.c >> word >> o.spec.k >> word >> o.spec.g;
  o.spec.name = o.name;
  o.spec.in = read_vec("in"), o.spec.f = read_vec("filter"), o.spec.pad = read_vec("pad");
  o.spec.str = read_vec("stride"), o.spec.dil = read_vec("dilation");
  while (in >> word) {
    if (word != "tensor") throw std::runtime_error("expected tensor in " + path.string());
    std::string tn;
    std::size_t count = 0;
    in >> tn >> count;
    std::vector<double> v(count);
    for (auto& e : v) in >> e;
    o.t[tn] = std::move(v);
  }
  if (!in.eof()) throw std::runtime_error("truncated " + path.string());
  return o;
}

std::vector<float> as_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// Compares got with torch's values; the bound's |x||w| scale comes from the reference sums.
int compare(const std::vector<float>& got, const std::vector<double>& torch_values, const testref::RefResult& sums,
            int64_t k_len, ConvAlgo algo, const std::string& what) {
  testref::RefResult expect{torch_values, sums.abs};
  std::vector<int64_t> offs(torch_values.size());
  for (std::size_t i = 0; i < offs.size(); ++i) offs[i] = int64_t(i);
  // torch's float64 result differs from the exact one by far less than the f32 bound.
  return check_against(got, expect, got, 1.f, 0.f, offs, k_len, algo, what);
}

TEST(ConvOracle, EveryAlgorithmMatchesPyTorch) {
  const std::filesystem::path dir = STRATA_DNN_ORACLE_DIR;
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  Handle h;
  h.set_num_threads(2);
  int files = 0, checks = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    const Oracle o = load(entry.path());
    ++files;
    const Descs d = make_descs(o.spec, Layout::nchw, FilterLayout::kcrs);
    ASSERT_EQ(o.t.at("y").size(), std::size_t(d.y.element_count())) << o.name;
    const auto x = as_float(o.t.at("x")), w = as_float(o.t.at("w")), dy = as_float(o.t.at("dy"));
    const testref::Conv3d geo(d.x, d.w, d.conv, d.y);
    const auto fsum = testref::ref_forward(geo, o.t.at("x"), o.t.at("w"), d.y.span());
    const auto dsum = testref::ref_backward_data(geo, o.t.at("dy"), o.t.at("w"), d.x.span());
    const auto wsum = testref::ref_backward_filter(geo, o.t.at("x"), o.t.at("dy"), d.w.element_count());
    const float one = 1.f, zero = 0.f;
    for (int ai = 0; ai < conv_algo_count; ++ai) {
      const ConvAlgo a = ConvAlgo(ai);
      const std::string what = o.name + " " + std::string(conv_algo_name(a));
      for (const auto& r : get_forward_algorithms(h, d.x, d.w, d.conv, d.y))
        if (r.algo == a && r.supported) {
          auto ws = make_aligned<std::byte>(r.workspace + 1);
          std::vector<float> y(std::size_t(d.y.element_count()));
          convolution_forward(h, &one, d.x, x.data(), d.w, w.data(), d.conv, a, ws.get(), r.workspace, &zero, d.y, y.data());
          EXPECT_EQ(compare(y, o.t.at("y"), fsum, d.w.element_count() / d.w.dim(0), a, what + " fwd"), 0);
          ++checks;
        }
      for (const auto& r : get_backward_data_algorithms(h, d.w, d.y, d.conv, d.x))
        if (r.algo == a && r.supported) {
          auto ws = make_aligned<std::byte>(r.workspace + 1);
          std::vector<float> dx(std::size_t(d.x.element_count()));
          convolution_backward_data(h, &one, d.w, w.data(), d.y, dy.data(), d.conv, a, ws.get(), r.workspace, &zero, d.x,
                                    dx.data());
          EXPECT_EQ(compare(dx, o.t.at("dx"), dsum, d.w.element_count() / d.w.dim(1), a, what + " bwd_data"), 0);
          ++checks;
        }
      for (const auto& r : get_backward_filter_algorithms(h, d.x, d.y, d.conv, d.w))
        if (r.algo == a && r.supported) {
          auto ws = make_aligned<std::byte>(r.workspace + 1);
          std::vector<float> dw(std::size_t(d.w.element_count()));
          convolution_backward_filter(h, &one, d.x, x.data(), d.y, dy.data(), d.conv, a, ws.get(), r.workspace, &zero,
                                      d.w, dw.data());
          EXPECT_EQ(compare(dw, o.t.at("dw"), wsum, d.y.element_count() / d.y.dim(1) * 1, a, what + " bwd_filter"), 0);
          ++checks;
        }
    }
  }
  EXPECT_EQ(files, 10);
  EXPECT_GT(checks, 50);
}

}  // namespace
}  // namespace strata::dnn::test
