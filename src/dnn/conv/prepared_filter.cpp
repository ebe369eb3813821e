// Prepared filters (convolution.hpp): the algorithm's own form of a filter, computed once and
// checked against every call that uses it.
#include <cstring>

#include "dispatch.hpp"
#include "selection.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/status.hpp"

namespace strata::dnn {

struct PreparedFilter::Impl {
  ConvAlgo algo = ConvAlgo::direct;
  FilterDesc desc;              // the filter as the caller described it
  detail::ConvProblem problem;  // the problem it was prepared on
  bool transformed = false;     // data is the algorithm's form (else a copy of w in desc's layout)
  std::size_t floats = 0;
  AlignedArray<float> data;     // 64-byte aligned: the microkernels stream it
};

namespace {

using detail::ConvDescs;
using detail::ConvProblem;

// What the prepared form depends on, with the words an error message uses for it.
std::string first_mismatch(const ConvProblem& was, const ConvProblem& now) {
  if (was.dtype != now.dtype) return "data type";
  if (was.c != now.c || was.k != now.k) return "channels";
  if (was.groups != now.groups) return "groups";
  if (was.filter != now.filter || was.ws != now.ws) return "filter shape, layout or convolution mode";
  if ((was.xs[1] == 1) != (now.xs[1] == 1)) return "x layout (channels contiguous or not)";
  if (was.y_nhwc() != now.y_nhwc() || (was.ys[1] == 1) != (now.ys[1] == 1))
    return "y layout (channels contiguous or not)";
  if (was.isa != now.isa) return "handle ISA";
  return {};
}

// Whether f's form is of a filter read as stored (AMX's bf16 tile panels), else f32.
bool narrow_form(const PreparedFilter::Impl& f) { return f.transformed && detail::reads_narrow(f.problem, f.algo); }

const PreparedFilter::Impl& checked(const PreparedFilter& w) {
  check_arg(!w.empty(), "w", "the prepared filter is empty (use prepare_forward_filter)");
  return w.impl();
}

// The problem of a call with a prepared filter, refused when the filter was prepared for
// another one.
ConvProblem prepared_problem(const Handle& h, const ConvDescs& d, const PreparedFilter::Impl& f) {
  ConvProblem p = detail::make_problem(h, d);
  const std::string what = first_mismatch(f.problem, p);
  check_arg(what.empty(), "w", [&] {
    return "w was prepared for another " + what + ": prepared for '" + f.problem.str() + "' (" +
           std::string(isa_name(f.problem.isa)) + "), called with '" + p.str() + "' (" + std::string(isa_name(p.isa)) +
           ")";
  });
  // A bf16 filter in the AMX route's panels serves only calls that route takes (packed tensors);
  // one prepared in f32 for a staged call serves only staged calls.
  const bool narrow = narrow_form(f);
  check_arg(!f.transformed || narrow == detail::reads_narrow(p, f.algo), "w", [&] {
    return "w was prepared as " + std::string(conv_algo_name(f.algo)) + "'s " +
           (narrow ? std::string(dtype_name(p.dtype)) + " tile panels, which read packed channels-last x and y"
                     : std::string("f32 panels of the widened filter, for calls on f32 copies of x and y")) +
           "; called with '" + p.str() + "'" +
           (narrow ? "" : ", whose packed tensors this algorithm reads as stored");
  });
  p.filter_prepared = f.transformed;
  return p;
}

void run_prepared(const Handle& h, const TensorDesc& x_desc, const void* x, const PreparedFilter& w,
                  const ConvDesc& conv, void* workspace, std::size_t workspace_bytes, float alpha, float beta,
                  const TensorDesc& y_desc, void* y, const detail::Epilogue* epi, const char* why) {
  const PreparedFilter::Impl& f = checked(w);
  const ConvDescs d{ConvOp::forward, x_desc, f.desc, conv, y_desc};
  const ConvProblem p = prepared_problem(h, d, f);
  detail::run_convolution(h, p, d, f.algo, x, f.data.get(), y, alpha, beta, workspace, workspace_bytes, epi, why,
                          f.transformed ? f.data.get() : nullptr);
}

}  // namespace

ConvAlgo PreparedFilter::algo() const { return checked(*this).algo; }
std::size_t PreparedFilter::bytes() const { return checked(*this).floats * sizeof(float); }
bool PreparedFilter::transformed() const { return checked(*this).transformed; }
const PreparedFilter::Impl& PreparedFilter::impl() const { return *impl_; }

PreparedFilter prepare_forward_filter(const Handle& h, const TensorDesc& x, const FilterDesc& w_desc, const void* w,
                                      const ConvDesc& conv, const TensorDesc& y, ConvAlgo algo) {
  detail::check_algo(algo);
  const ConvDescs d{ConvOp::forward, x, w_desc, conv, y};
  const ConvProblem p = detail::make_problem(h, d);
  detail::check_preparable(p);
  (void)detail::required_workspace(p, d, algo);  // refuses an algorithm that cannot compute p
  check_arg(w_desc.element_count() == 0 || w != nullptr, "w", "w is null");

  auto f = std::make_shared<PreparedFilter::Impl>();
  f->algo = algo;
  f->desc = w_desc;
  f->problem = p;
  f->data = detail::prepare_filter_data(p, algo, w);
  f->transformed = f->data.get() != nullptr;
  const detail::ConvAlgorithm& a = detail::conv_algorithm(algo);
  const std::size_t stored_bytes = std::size_t(w_desc.element_count()) * dtype_size(w_desc.dtype());
  f->floats = !f->transformed   ? (stored_bytes + 3) / 4
              : narrow_form(*f) ? (a.prepared_narrow_bytes(p) + 3) / 4
                                : a.prepared_filter_floats(p);
  if (!f->transformed) {  // the algorithm reads w as given (or stages it in f32): keep a copy
    f->data = make_aligned_long_lived<float>(std::max<std::size_t>(f->floats, 1));
    if (stored_bytes) std::memcpy(f->data.get(), w, stored_bytes);
  }
  return PreparedFilter(std::move(f));
}

PreparedFilter prepare_forward_filter(const Handle& h, const TensorDesc& x, const FilterDesc& w_desc, const void* w,
                                      const ConvDesc& conv, const TensorDesc& y) {
  const ConvDescs d{ConvOp::forward, x, w_desc, conv, y};
  const ConvAlgo algo = detail::choose_prepared_algorithm(h, detail::make_problem(h, d), d);
  return prepare_forward_filter(h, x, w_desc, w, conv, y, algo);
}

std::vector<AlgoPerf> find_prepared_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                                       const ConvDesc& conv, const TensorDesc& y) {
  const ConvDescs d{ConvOp::forward, x, w, conv, y};
  return detail::rank_by_measurement(h, detail::make_problem(h, d), d, true);
}

std::vector<AlgoPerf> get_prepared_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                                      const ConvDesc& conv, const TensorDesc& y) {
  const ConvDescs d{ConvOp::forward, x, w, conv, y};
  detail::ConvProblem p = detail::make_problem(h, d);
  detail::check_preparable(p);
  p.filter_prepared = true;
  return detail::rank_by_heuristic(h, p, d);
}

std::size_t forward_workspace_size(const Handle& h, const TensorDesc& x, const PreparedFilter& w,
                                   const ConvDesc& conv, const TensorDesc& y) {
  const PreparedFilter::Impl& f = checked(w);
  const ConvDescs d{ConvOp::forward, x, f.desc, conv, y};
  return detail::required_workspace(prepared_problem(h, d, f), d, f.algo);
}

void convolution_forward(const Handle& h, const void* alpha, const TensorDesc& x_desc, const void* x,
                         const PreparedFilter& w, const ConvDesc& conv, void* workspace, std::size_t workspace_bytes,
                         const void* beta, const TensorDesc& y_desc, void* y) {
  const float a = detail::scalar_arg(alpha, "alpha"), b = detail::scalar_arg(beta, "beta");
  run_prepared(h, x_desc, x, w, conv, workspace, workspace_bytes, a, b, y_desc, y, nullptr,
               "requested by the caller");
}

void convolution_bias_activation_forward(const Handle& h, const void* alpha1, const TensorDesc& x_desc,
                                         const void* x, const PreparedFilter& w, const ConvDesc& conv,
                                         void* workspace, std::size_t workspace_bytes, const void* alpha2,
                                         const void* z, const TensorDesc& bias_desc, const void* bias, Activation act,
                                         const TensorDesc& y_desc, void* y) {
  const float a1 = detail::scalar_arg(alpha1, "alpha1");
  detail::Epilogue e;
  e.z = z;
  e.alpha2 = z ? detail::scalar_arg(alpha2, "alpha2") : 0.f;
  e.bias_desc = &bias_desc;
  e.bias = bias;
  e.act = act;
  detail::check_activation(act);
  run_prepared(h, x_desc, x, w, conv, workspace, workspace_bytes, a1, 0.f, y_desc, y, &e,
               "fused, requested by the caller");
}

}  // namespace strata::dnn
