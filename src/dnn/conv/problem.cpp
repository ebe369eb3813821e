#include "problem.hpp"

#include <sstream>

namespace strata::dnn::detail {

namespace {

// Compares strides only where the dimension has more than one element: a size-1 dimension's
// stride never addresses anything, so it must not make a packed tensor look strided.
template <std::size_t R>
bool strides_match(const std::array<int64_t, R>& got, const std::array<int64_t, R>& want,
                   const std::array<int64_t, R>& dims) {
  for (std::size_t i = 0; i < R; ++i)
    if (dims[i] > 1 && got[i] != want[i]) return false;
  return true;
}

bool packed_nchw(const std::array<int64_t, 5>& s, int64_t c, const std::array<int64_t, 3>& sp, int64_t n) {
  const int64_t w = sp[2], hw = sp[1] * w, dhw = sp[0] * hw;
  return strides_match<5>(s, {c * dhw, dhw, hw, w, 1}, {n, c, sp[0], sp[1], sp[2]});
}

bool packed_nhwc(const std::array<int64_t, 5>& s, int64_t c, const std::array<int64_t, 3>& sp, int64_t n) {
  const int64_t wc = sp[2] * c, hwc = sp[1] * wc;
  return strides_match<5>(s, {sp[0] * hwc, 1, hwc, wc, c}, {n, c, sp[0], sp[1], sp[2]});
}

const char* layout_tag(bool nchw, bool nhwc) { return nchw ? "nchw" : nhwc ? "nhwc" : "strided"; }

}  // namespace

bool pixel_planes(const std::array<int64_t, 3>& dims, const std::array<int64_t, 5>& st) {
  return strides_match<3>({st[2], st[3], st[4]}, {dims[1] * dims[2], dims[2], 1}, dims);
}

bool ConvProblem::x_nchw() const { return packed_nchw(xs, c, in, n); }
bool ConvProblem::x_nhwc() const { return packed_nhwc(xs, c, in, n); }
bool ConvProblem::y_nchw() const { return packed_nchw(ys, k, out, n); }
bool ConvProblem::y_nhwc() const { return packed_nhwc(ys, k, out, n); }

bool ConvProblem::w_kcrs() const {
  const int64_t s = filter[2], rs = filter[1] * s, trs = filter[0] * rs;
  return strides_match<6>(ws, {kg() * cg() * trs, cg() * trs, trs, rs, s, 1},
                          {groups, kg(), cg(), filter[0], filter[1], filter[2]});
}

bool ConvProblem::w_krsc() const {
  const int64_t sc = filter[2] * cg(), rsc = filter[1] * sc, trsc = filter[0] * rsc;
  return strides_match<6>(ws, {kg() * trsc, trsc, 1, rsc, sc, cg()},
                          {groups, kg(), cg(), filter[0], filter[1], filter[2]});
}

std::string ConvProblem::str() const {
  std::ostringstream os;
  os << conv_op_name(op) << ' ' << dtype_name(dtype) << " n" << n << " c" << c << " k" << k << " g" << groups
     << " in" << in[0] << 'x' << in[1] << 'x' << in[2] << " f" << filter[0] << 'x' << filter[1] << 'x' << filter[2]
     << " out" << out[0] << 'x' << out[1] << 'x' << out[2] << " pad" << pad[0] << ',' << pad[1] << ',' << pad[2]
     << " str" << stride[0] << ',' << stride[1] << ',' << stride[2] << " dil" << dilation[0] << ','
     << dilation[1] << ',' << dilation[2] << " x:" << layout_tag(x_nchw(), x_nhwc())
     << " w:" << (w_kcrs() ? "kcrs" : w_krsc() ? "krsc" : "strided") << " y:" << layout_tag(y_nchw(), y_nhwc());
  if (dtype != DType::f32 && op == ConvOp::forward && !narrow_in_place) os << " x-staged";
  return os.str();
}

std::string ConvProblem::key() const { return str(); }

bool backward_data_maps_to_forward(const ConvProblem& p) {
  if (!p.unit_stride()) return false;
  for (int i = 0; i < 3; ++i)
    if (p.pad[i] > p.dilation[i] * (p.filter[i] - 1)) return false;
  return true;
}

ConvProblem backward_data_as_forward(const ConvProblem& p) {
  ConvProblem q = p;
  q.op = ConvOp::forward;
  q.c = p.k;
  q.k = p.c;
  q.in = p.out;
  q.out = p.in;
  for (int i = 0; i < 3; ++i) q.pad[i] = p.dilation[i] * (p.filter[i] - 1) - p.pad[i];
  q.xs = p.ys;
  q.ys = p.xs;
  q.ws = {p.ws[0], p.ws[2], p.ws[1], -p.ws[3], -p.ws[4], -p.ws[5]};
  return q;
}

float* backward_data_as_forward_filter(const ConvProblem& p, float* w) {
  return w + (p.filter[0] - 1) * p.ws[3] + (p.filter[1] - 1) * p.ws[4] + (p.filter[2] - 1) * p.ws[5];
}

}  // namespace strata::dnn::detail
