// Naive convolution references in double precision, straight from the definitions, for the
// dnn tests. They index tensors through the public descriptors' dims and strides only, and
// return results in logical row-major order (N, C, spatial... / K, C, spatial...), together
// with the same sums over absolute values (for error bounds of the form c*k*eps*sum|x||w|).
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "strata/dnn/convolution.hpp"

namespace strata::testref {

struct Conv3d {
  int64_t n, c, k, g;
  std::array<int64_t, 3> in{1, 1, 1}, f{1, 1, 1}, out{1, 1, 1}, pad{0, 0, 0}, str{1, 1, 1}, dil{1, 1, 1};
  std::array<int64_t, 5> xs{}, ys{}, ws{};
  bool flip = false;

  Conv3d(const dnn::TensorDesc& x, const dnn::FilterDesc& w, const dnn::ConvDesc& cd, const dnn::TensorDesc& y) {
    const int sr = cd.spatial_rank(), off = 3 - sr;
    n = x.dim(0), c = x.dim(1), k = w.dim(0), g = cd.groups();
    const auto wst = w.strides();
    xs = {x.stride(0), x.stride(1), 0, 0, 0};
    ys = {y.stride(0), y.stride(1), 0, 0, 0};
    ws = {wst[0], wst[1], 0, 0, 0};
    for (int i = 0; i < sr; ++i) {
      const auto si = std::size_t(i);
      in[off + i] = x.dim(2 + i), out[off + i] = y.dim(2 + i), f[off + i] = w.dim(2 + i);
      pad[off + i] = cd.pads()[si], str[off + i] = cd.strides()[si], dil[off + i] = cd.dilations()[si];
      xs[2 + off + i] = x.stride(2 + i), ys[2 + off + i] = y.stride(2 + i), ws[2 + off + i] = wst[2 + si];
    }
    flip = cd.mode() == dnn::ConvMode::convolution;
  }
  int64_t xo(int64_t nn, int64_t cc, int64_t d, int64_t h, int64_t w) const {
    return nn * xs[0] + cc * xs[1] + d * xs[2] + h * xs[3] + w * xs[4];
  }
  int64_t yo(int64_t nn, int64_t kk, int64_t d, int64_t h, int64_t w) const {
    return nn * ys[0] + kk * ys[1] + d * ys[2] + h * ys[3] + w * ys[4];
  }
  int64_t wo(int64_t kk, int64_t cc, int64_t t, int64_t r, int64_t s) const {
    if (flip) t = f[0] - 1 - t, r = f[1] - 1 - r, s = f[2] - 1 - s;
    return kk * ws[0] + cc * ws[1] + t * ws[2] + r * ws[3] + s * ws[4];
  }
  // Calls fn(x offset, w offset, y offset) for every multiply of the convolution.
  template <class Fn>
  void for_each_tap(Fn&& fn) const {
    const int64_t cg = c / g, kg = k / g;
    for (int64_t nn = 0; nn < n; ++nn)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t od = 0; od < out[0]; ++od)
          for (int64_t oh = 0; oh < out[1]; ++oh)
            for (int64_t ow = 0; ow < out[2]; ++ow)
              for (int64_t cc = 0; cc < cg; ++cc)
                for (int64_t t = 0; t < f[0]; ++t)
                  for (int64_t r = 0; r < f[1]; ++r)
                    for (int64_t s = 0; s < f[2]; ++s) {
                      const int64_t id = od * str[0] + t * dil[0] - pad[0], ih = oh * str[1] + r * dil[1] - pad[1],
                                    iw = ow * str[2] + s * dil[2] - pad[2];
                      if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                      fn(xo(nn, kk / kg * cg + cc, id, ih, iw), wo(kk, cc, t, r, s), yo(nn, kk, od, oh, ow));
                    }
  }
};

struct RefResult {
  std::vector<double> value;  // indexed by the destination's offsets (its span)
  std::vector<double> abs;    // same with |x| |w|
};

// y = conv(x, w): result indexed by y offsets.
inline RefResult ref_forward(const Conv3d& p, const std::vector<double>& x, const std::vector<double>& w,
                             int64_t y_span) {
  RefResult r{std::vector<double>(std::size_t(y_span)), std::vector<double>(std::size_t(y_span))};
  p.for_each_tap([&](int64_t xo, int64_t wo, int64_t yo) {
    r.value[std::size_t(yo)] += x[std::size_t(xo)] * w[std::size_t(wo)];
    r.abs[std::size_t(yo)] += std::fabs(x[std::size_t(xo)] * w[std::size_t(wo)]);
  });
  return r;
}

// dx = conv^T(dy, w): result indexed by x offsets.
inline RefResult ref_backward_data(const Conv3d& p, const std::vector<double>& dy, const std::vector<double>& w,
                                   int64_t x_span) {
  RefResult r{std::vector<double>(std::size_t(x_span)), std::vector<double>(std::size_t(x_span))};
  p.for_each_tap([&](int64_t xo, int64_t wo, int64_t yo) {
    r.value[std::size_t(xo)] += dy[std::size_t(yo)] * w[std::size_t(wo)];
    r.abs[std::size_t(xo)] += std::fabs(dy[std::size_t(yo)] * w[std::size_t(wo)]);
  });
  return r;
}

// dw = sum x * dy: result indexed by w offsets.
inline RefResult ref_backward_filter(const Conv3d& p, const std::vector<double>& x, const std::vector<double>& dy,
                                     int64_t w_count) {
  RefResult r{std::vector<double>(std::size_t(w_count)), std::vector<double>(std::size_t(w_count))};
  p.for_each_tap([&](int64_t xo, int64_t wo, int64_t yo) {
    r.value[std::size_t(wo)] += x[std::size_t(xo)] * dy[std::size_t(yo)];
    r.abs[std::size_t(wo)] += std::fabs(x[std::size_t(xo)] * dy[std::size_t(yo)]);
  });
  return r;
}

}  // namespace strata::testref
