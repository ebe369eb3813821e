// The direct algorithm: the definition of convolution as loops, for every operation, layout,
// stride, dilation and group count. It is the fallback that makes every valid problem
// runnable and the baseline the heuristics compare against. Each output element is one
// thread's sum in a fixed order, so it is deterministic for any thread count.
#include "algorithm.hpp"
#include "common.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::dnn::detail {

namespace {

// Input coordinate hit by output coordinate o and filter tap f in one dimension, or -1.
inline int64_t input_coord(const ConvProblem& p, int d, int64_t o, int64_t f) {
  const int64_t i = o * p.stride[d] + f * p.dilation[d] - p.pad[d];
  return (i >= 0 && i < p.in[d]) ? i : -1;
}

// Output coordinate that reads input coordinate i through filter tap f, or -1.
inline int64_t output_coord(const ConvProblem& p, int d, int64_t i, int64_t f) {
  const int64_t t = i + p.pad[d] - f * p.dilation[d];
  if (t < 0 || t % p.stride[d] != 0) return -1;
  const int64_t o = t / p.stride[d];
  return o < p.out[d] ? o : -1;
}

void forward(const ConvProblem& p, const ConvArgs& a) {
  const int64_t Kg = p.kg(), Cg = p.cg();
  parallel_for(p.n * p.k, p.threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t nk = lo; nk < hi; ++nk) {
      const int64_t n = nk / p.k, k = nk % p.k, g = k / Kg;
      const float* wk = a.w + g * p.ws[0] + (k % Kg) * p.ws[1];
      const float* xn = a.x + n * p.xs[0] + g * Cg * p.xs[1];
      for (int64_t od = 0; od < p.out[0]; ++od)
        for (int64_t oh = 0; oh < p.out[1]; ++oh)
          for (int64_t ow = 0; ow < p.out[2]; ++ow) {
            float acc = 0.f;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t t = 0; t < p.filter[0]; ++t) {
                const int64_t id = input_coord(p, 0, od, t);
                if (id < 0) continue;
                for (int64_t r = 0; r < p.filter[1]; ++r) {
                  const int64_t ih = input_coord(p, 1, oh, r);
                  if (ih < 0) continue;
                  for (int64_t s = 0; s < p.filter[2]; ++s) {
                    const int64_t iw = input_coord(p, 2, ow, s);
                    if (iw < 0) continue;
                    acc += xn[c * p.xs[1] + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4]] *
                           wk[c * p.ws[2] + t * p.ws[3] + r * p.ws[4] + s * p.ws[5]];
                  }
                }
              }
            blend_store(a.y + n * p.ys[0] + k * p.ys[1] + od * p.ys[2] + oh * p.ys[3] + ow * p.ys[4], acc, a.alpha,
                        a.beta);
          }
    }
  });
}

void backward_data(const ConvProblem& p, const ConvArgs& a) {
  const int64_t Kg = p.kg(), Cg = p.cg();
  parallel_for(p.n * p.c, p.threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t nc = lo; nc < hi; ++nc) {
      const int64_t n = nc / p.c, c = nc % p.c, g = c / Cg;
      const float* wc = a.w + g * p.ws[0] + (c % Cg) * p.ws[2];
      const float* dyn = a.y + n * p.ys[0] + g * Kg * p.ys[1];
      for (int64_t id = 0; id < p.in[0]; ++id)
        for (int64_t ih = 0; ih < p.in[1]; ++ih)
          for (int64_t iw = 0; iw < p.in[2]; ++iw) {
            float acc = 0.f;
            for (int64_t k = 0; k < Kg; ++k)
              for (int64_t t = 0; t < p.filter[0]; ++t) {
                const int64_t od = output_coord(p, 0, id, t);
                if (od < 0) continue;
                for (int64_t r = 0; r < p.filter[1]; ++r) {
                  const int64_t oh = output_coord(p, 1, ih, r);
                  if (oh < 0) continue;
                  for (int64_t s = 0; s < p.filter[2]; ++s) {
                    const int64_t ow = output_coord(p, 2, iw, s);
                    if (ow < 0) continue;
                    acc += dyn[k * p.ys[1] + od * p.ys[2] + oh * p.ys[3] + ow * p.ys[4]] *
                           wc[k * p.ws[1] + t * p.ws[3] + r * p.ws[4] + s * p.ws[5]];
                  }
                }
              }
            blend_store(a.x + n * p.xs[0] + c * p.xs[1] + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4], acc, a.alpha,
                        a.beta);
          }
    }
  });
}

void backward_filter(const ConvProblem& p, const ConvArgs& a) {
  const int64_t Kg = p.kg(), Cg = p.cg();
  parallel_for(p.k * Cg, p.threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t kc = lo; kc < hi; ++kc) {
      const int64_t k = kc / Cg, c = kc % Cg, g = k / Kg;
      float* dwkc = a.w + g * p.ws[0] + (k % Kg) * p.ws[1] + c * p.ws[2];
      for (int64_t t = 0; t < p.filter[0]; ++t)
        for (int64_t r = 0; r < p.filter[1]; ++r)
          for (int64_t s = 0; s < p.filter[2]; ++s) {
            float acc = 0.f;
            for (int64_t n = 0; n < p.n; ++n) {
              const float* xn = a.x + n * p.xs[0] + (g * Cg + c) * p.xs[1];
              const float* dyn = a.y + n * p.ys[0] + k * p.ys[1];
              for (int64_t od = 0; od < p.out[0]; ++od) {
                const int64_t id = input_coord(p, 0, od, t);
                if (id < 0) continue;
                for (int64_t oh = 0; oh < p.out[1]; ++oh) {
                  const int64_t ih = input_coord(p, 1, oh, r);
                  if (ih < 0) continue;
                  for (int64_t ow = 0; ow < p.out[2]; ++ow) {
                    const int64_t iw = input_coord(p, 2, ow, s);
                    if (iw < 0) continue;
                    acc += xn[id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4]] *
                           dyn[od * p.ys[2] + oh * p.ys[3] + ow * p.ys[4]];
                  }
                }
              }
            }
            blend_store(dwkc + t * p.ws[3] + r * p.ws[4] + s * p.ws[5], acc, a.alpha, a.beta);
          }
    }
  });
}

class DirectAlgorithm final : public ConvAlgorithm {
 public:
  ConvAlgo id() const override { return ConvAlgo::direct; }
  Support supports(const ConvProblem&) const override { return Support::yes("serves every problem"); }
  std::size_t workspace_size(const ConvProblem&) const override { return 0; }
  double estimated_cost(const ConvProblem& p) const override {
    // Scalar loops with bounds checks: roughly 1 flop per cycle-ish, far below the GEMMs.
    return p.flops() / 1.0;
  }
  void execute(const ConvProblem& p, const ConvArgs& a) const override {
    switch (p.op) {
      case ConvOp::forward: forward(p, a); break;
      case ConvOp::backward_data: backward_data(p, a); break;
      case ConvOp::backward_filter: backward_filter(p, a); break;
    }
  }
};

}  // namespace

const ConvAlgorithm& direct_algorithm() {
  static const DirectAlgorithm a;
  return a;
}

}  // namespace strata::dnn::detail
