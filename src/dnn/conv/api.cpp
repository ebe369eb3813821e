// The public convolution entry points: thin wrappers that name the roles and hand over to
// dispatch (checks, staging, execution) and selection (heuristics, find, cache).
#include "dispatch.hpp"
#include "selection.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/status.hpp"

namespace strata::dnn {

using detail::ConvDescs;

namespace {

constexpr std::string_view kAlgoNames[conv_algo_count] = {"direct",           "im2col_gemm",      "implicit_gemm",
                                                          "winograd_2x2_3x3", "winograd_4x4_3x3", "fft_tiled"};

// Runs with an explicit algorithm and caller workspace.
void run_explicit(const Handle& h, const ConvDescs& d, ConvAlgo algo, const void* x, const void* w, const void* y,
                  const void* alpha, const void* beta, void* ws, std::size_t ws_bytes) {
  detail::check_algo(algo);
  const float a = detail::scalar_arg(alpha, "alpha"), b = detail::scalar_arg(beta, "beta");
  const auto p = detail::make_problem(h, d);
  detail::run_convolution(h, p, d, algo, x, w, y, a, b, ws, ws_bytes, nullptr, "requested by the caller");
}

// The convenience calls' workspace: kept by each calling thread between calls and grown as
// needed (up to 256 MiB; larger ones are allocated per call). Allocated per call, its pages
// were faulted in on every call — ~3 us a page on this VM: res2_3x3 forward (Winograd, 7 MB
// of workspace) took 4.1 ms against 1.75 with the buffer kept. Its own bookkeeping rather
// than a thread_local tile::PackBuffer: that would export the tile type's destructor from
// this library (install.libraries_keep_their_tile_instantiations_hidden).
std::byte* convenience_workspace(std::size_t bytes, AlignedArray<std::byte>& owned) {
  constexpr std::size_t kept_bytes = std::size_t(256) << 20;
  if (bytes > kept_bytes) return (owned = make_aligned<std::byte>(bytes)).get();
  thread_local AlignedArray<std::byte> kept;
  thread_local std::size_t capacity = 0;
  if (bytes > capacity) kept = make_aligned_long_lived<std::byte>(capacity = bytes);
  return kept.get();
}

// Runs with the cached or heuristic choice and an internal workspace.
void run_auto(const Handle& h, const ConvDescs& d, const void* x, const void* w, const void* y, float alpha, float beta) {
  const auto p = detail::make_problem(h, d);
  const auto choice = detail::choose_algorithm(h, p, d);
  AlignedArray<std::byte> owned;
  std::byte* ws = convenience_workspace(std::max<std::size_t>(choice.workspace, 1), owned);
  detail::run_convolution(h, p, d, choice.algo, x, w, y, alpha, beta, ws, choice.workspace, nullptr,
                          choice.why.c_str());
}

std::vector<AlgoPerf> get(const Handle& h, const ConvDescs& d) {
  return detail::rank_by_heuristic(h, detail::make_problem(h, d), d);
}
std::vector<AlgoPerf> find(const Handle& h, const ConvDescs& d) {
  return detail::rank_by_measurement(h, detail::make_problem(h, d), d);
}
std::size_t workspace(const Handle& h, const ConvDescs& d, ConvAlgo algo) {
  detail::check_algo(algo);
  return detail::required_workspace(detail::make_problem(h, d), d, algo);
}

}  // namespace

std::string_view conv_algo_name(ConvAlgo a) noexcept {
  const int i = int(a);
  return i >= 0 && i < conv_algo_count ? kAlgoNames[i] : std::string_view("?");
}

ConvAlgo parse_conv_algo(std::string_view name) {
  for (int i = 0; i < conv_algo_count; ++i)
    if (kAlgoNames[i] == name) return ConvAlgo(i);
  throw_error(Status::invalid_argument, "name", "unknown convolution algorithm '" + std::string(name) + "'");
}

std::string_view conv_op_name(ConvOp op) noexcept {
  switch (op) {
    case ConvOp::forward: return "fwd";
    case ConvOp::backward_data: return "bwd_data";
    case ConvOp::backward_filter: return "bwd_filter";
  }
  return "?";
}

// ---- forward ----

std::vector<AlgoPerf> get_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                             const ConvDesc& conv, const TensorDesc& y) {
  return get(h, {ConvOp::forward, x, w, conv, y});
}
std::vector<AlgoPerf> find_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                              const ConvDesc& conv, const TensorDesc& y) {
  return find(h, {ConvOp::forward, x, w, conv, y});
}
std::size_t forward_workspace_size(const Handle& h, const TensorDesc& x, const FilterDesc& w, const ConvDesc& conv,
                                   const TensorDesc& y, ConvAlgo algo) {
  return workspace(h, {ConvOp::forward, x, w, conv, y}, algo);
}
void convolution_forward(const Handle& h, const void* alpha, const TensorDesc& x_desc, const void* x,
                         const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                         void* workspace, std::size_t workspace_bytes, const void* beta, const TensorDesc& y_desc,
                         void* y) {
  run_explicit(h, {ConvOp::forward, x_desc, w_desc, conv, y_desc}, algo, x, w, y, alpha, beta, workspace,
               workspace_bytes);
}
void convolution_forward(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                         const FilterDesc& w_desc, const void* w, const ConvDesc& conv, float beta,
                         const TensorDesc& y_desc, void* y) {
  run_auto(h, {ConvOp::forward, x_desc, w_desc, conv, y_desc}, x, w, y, alpha, beta);
}

// ---- backward data ----

std::vector<AlgoPerf> get_backward_data_algorithms(const Handle& h, const FilterDesc& w, const TensorDesc& dy,
                                                   const ConvDesc& conv, const TensorDesc& dx) {
  return get(h, {ConvOp::backward_data, dx, w, conv, dy});
}
std::vector<AlgoPerf> find_backward_data_algorithms(const Handle& h, const FilterDesc& w, const TensorDesc& dy,
                                                    const ConvDesc& conv, const TensorDesc& dx) {
  return find(h, {ConvOp::backward_data, dx, w, conv, dy});
}
std::size_t backward_data_workspace_size(const Handle& h, const FilterDesc& w, const TensorDesc& dy,
                                         const ConvDesc& conv, const TensorDesc& dx, ConvAlgo algo) {
  return workspace(h, {ConvOp::backward_data, dx, w, conv, dy}, algo);
}
void convolution_backward_data(const Handle& h, const void* alpha, const FilterDesc& w_desc, const void* w,
                               const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, ConvAlgo algo,
                               void* workspace, std::size_t workspace_bytes, const void* beta,
                               const TensorDesc& dx_desc, void* dx) {
  run_explicit(h, {ConvOp::backward_data, dx_desc, w_desc, conv, dy_desc}, algo, dx, w, dy, alpha, beta, workspace,
               workspace_bytes);
}
void convolution_backward_data(const Handle& h, float alpha, const FilterDesc& w_desc, const void* w,
                               const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, float beta,
                               const TensorDesc& dx_desc, void* dx) {
  run_auto(h, {ConvOp::backward_data, dx_desc, w_desc, conv, dy_desc}, dx, w, dy, alpha, beta);
}

// ---- backward filter ----

std::vector<AlgoPerf> get_backward_filter_algorithms(const Handle& h, const TensorDesc& x, const TensorDesc& dy,
                                                     const ConvDesc& conv, const FilterDesc& dw) {
  return get(h, {ConvOp::backward_filter, x, dw, conv, dy});
}
std::vector<AlgoPerf> find_backward_filter_algorithms(const Handle& h, const TensorDesc& x, const TensorDesc& dy,
                                                      const ConvDesc& conv, const FilterDesc& dw) {
  return find(h, {ConvOp::backward_filter, x, dw, conv, dy});
}
std::size_t backward_filter_workspace_size(const Handle& h, const TensorDesc& x, const TensorDesc& dy,
                                           const ConvDesc& conv, const FilterDesc& dw, ConvAlgo algo) {
  return workspace(h, {ConvOp::backward_filter, x, dw, conv, dy}, algo);
}
void convolution_backward_filter(const Handle& h, const void* alpha, const TensorDesc& x_desc, const void* x,
                                 const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, ConvAlgo algo,
                                 void* workspace, std::size_t workspace_bytes, const void* beta,
                                 const FilterDesc& dw_desc, void* dw) {
  run_explicit(h, {ConvOp::backward_filter, x_desc, dw_desc, conv, dy_desc}, algo, x, dw, dy, alpha, beta, workspace,
               workspace_bytes);
}
void convolution_backward_filter(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                                 const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, float beta,
                                 const FilterDesc& dw_desc, void* dw) {
  run_auto(h, {ConvOp::backward_filter, x_desc, dw_desc, conv, dy_desc}, x, dw, dy, alpha, beta);
}

// ---- fused forward ----

void convolution_bias_activation_forward(const Handle& h, const void* alpha1, const TensorDesc& x_desc,
                                         const void* x, const FilterDesc& w_desc, const void* w,
                                         const ConvDesc& conv, ConvAlgo algo, void* workspace,
                                         std::size_t workspace_bytes, const void* alpha2, const void* z,
                                         const TensorDesc& bias_desc, const void* bias, Activation act,
                                         const TensorDesc& y_desc, void* y) {
  detail::check_algo(algo);
  const float a1 = detail::scalar_arg(alpha1, "alpha1");
  const float a2 = z ? detail::scalar_arg(alpha2, "alpha2") : 0.f;
  detail::check_activation(act);
  const ConvDescs d{ConvOp::forward, x_desc, w_desc, conv, y_desc};
  const auto p = detail::make_problem(h, d);
  detail::Epilogue e;
  e.z = z;
  e.alpha2 = a2;
  e.bias_desc = &bias_desc;
  e.bias = bias;
  e.act = act;
  detail::run_convolution(h, p, d, algo, x, w, y, a1, 0.f, workspace, workspace_bytes, &e, "fused, requested by the caller");
}

}  // namespace strata::dnn
