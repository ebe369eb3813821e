#include "common.hpp"

namespace strata::dnn::detail {

namespace {

// Calls f(logical filter offset, packed index) for every filter element in `order`.
template <class F>
void for_each_filter_element(const ConvProblem& p, FilterOrder order, F&& f) {
  const int64_t T = p.filter[0], R = p.filter[1], S = p.filter[2], Cg = p.cg(), Kg = p.kg();
  int64_t idx = 0;
  for (int64_t g = 0; g < p.groups; ++g)
    for (int64_t k = 0; k < Kg; ++k) {
      const int64_t gk = g * p.ws[0] + k * p.ws[1];
      if (order == FilterOrder::kcrs) {
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t t = 0; t < T; ++t)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s)
                f(gk + c * p.ws[2] + t * p.ws[3] + r * p.ws[4] + s * p.ws[5], idx++);
      } else {
        for (int64_t t = 0; t < T; ++t)
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s)
              for (int64_t c = 0; c < Cg; ++c)
                f(gk + c * p.ws[2] + t * p.ws[3] + r * p.ws[4] + s * p.ws[5], idx++);
      }
    }
}

}  // namespace

void pack_filter(const ConvProblem& p, const float* w, float* dst, FilterOrder order) {
  for_each_filter_element(p, order, [&](int64_t off, int64_t i) { dst[i] = w[off]; });
}

void pack_filter(const ConvProblem& p, const uint16_t* w, uint16_t* dst, FilterOrder order) {
  for_each_filter_element(p, order, [&](int64_t off, int64_t i) { dst[i] = w[off]; });
}

void unpack_filter_blend(const ConvProblem& p, const float* src, FilterOrder order, float* w, float alpha,
                         float beta) {
  for_each_filter_element(p, order, [&](int64_t off, int64_t i) { blend_store(w + off, src[i], alpha, beta); });
}

bool filter_is(const ConvProblem& p, FilterOrder order) {
  return order == FilterOrder::kcrs ? p.w_kcrs() : p.w_krsc();
}

}  // namespace strata::dnn::detail

namespace strata::dnn::detail {

blas::Handle blas_handle_for(const ConvProblem& p, int threads) {
  blas::Handle h;
  h.set_num_threads(threads);
  h.set_isa(p.isa);
  h.set_math_mode(p.deterministic ? blas::MathMode::deterministic : blas::MathMode::fast);
  return h;
}

}  // namespace strata::dnn::detail
