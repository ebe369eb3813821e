// Convolution, the cuDNN way: a descriptor, a choice of algorithm (asked for, ranked by a
// heuristic, or measured), a workspace, and alpha/beta blending:
//
//   y = alpha * conv(x, w) + beta * y        (beta == 0: y is not read, NaNs in y vanish)
//
// Every entry point checks all descriptors before touching memory and throws strata::Error
// naming the offending argument; a rejected call writes nothing.
//
// Data types: f32, and f16 / bf16 / i8 storage with f32 computation (all tensors of one call
// share a dtype; i8 outputs are rounded to nearest and saturated). Results are bitwise
// reproducible across runs and thread counts unless the handle asks for Determinism::fast.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/dnn/handle.hpp"
#include "strata/dnn/tensor.hpp"

namespace strata::dnn {

enum class ConvMode {
  cross_correlation,  // what every framework calls "convolution" (the default, as in cuDNN)
  convolution,        // the filter is flipped in every spatial dimension
};

class ConvDesc {
 public:
  ConvDesc() = default;
  // One entry per spatial dimension (1..3). Throws invalid_argument naming "pads",
  // "strides", "dilations" or "groups" for negative pads, non-positive strides/dilations,
  // mismatched lengths or groups < 1.
  ConvDesc(std::vector<int64_t> pads, std::vector<int64_t> strides, std::vector<int64_t> dilations,
           int64_t groups = 1, ConvMode mode = ConvMode::cross_correlation);
  static ConvDesc conv2d(int64_t pad_h, int64_t pad_w, int64_t stride_h = 1, int64_t stride_w = 1,
                         int64_t dil_h = 1, int64_t dil_w = 1, int64_t groups = 1,
                         ConvMode mode = ConvMode::cross_correlation) {
    return ConvDesc({pad_h, pad_w}, {stride_h, stride_w}, {dil_h, dil_w}, groups, mode);
  }

  int spatial_rank() const noexcept { return int(pads_.size()); }
  const std::vector<int64_t>& pads() const noexcept { return pads_; }
  const std::vector<int64_t>& strides() const noexcept { return strides_; }
  const std::vector<int64_t>& dilations() const noexcept { return dilations_; }
  int64_t groups() const noexcept { return groups_; }
  ConvMode mode() const noexcept { return mode_; }
  std::string str() const;

 private:
  std::vector<int64_t> pads_{0, 0}, strides_{1, 1}, dilations_{1, 1};
  int64_t groups_ = 1;
  ConvMode mode_ = ConvMode::cross_correlation;
};

// The output dims {N, K, spatial...} of a forward convolution (cudnnGetConvolutionNdForwardOutputDim).
std::vector<int64_t> conv_output_dims(const TensorDesc& x, const FilterDesc& w, const ConvDesc& conv);

enum class ConvAlgo : int {
  direct = 0,          // loops over the definition; every problem; the slowest, the fallback
  im2col_gemm = 1,     // lower to columns in the workspace, then blas::gemm
  implicit_gemm = 2,   // GEMM whose packing reads the tensor directly (no column buffer)
  winograd_2x2_3x3 = 3,  // F(2x2,3x3): 3x3, stride 1, dilation 1
  winograd_4x4_3x3 = 4,  // F(4x4,3x3): fewer multiplies, larger rounding error
  fft_tiled = 5,       // tiled FFT: large kernels, stride 1
};
inline constexpr int conv_algo_count = 6;
std::string_view conv_algo_name(ConvAlgo a) noexcept;
// "direct", "im2col_gemm", ...; throws invalid_argument naming `name` for unknown names.
ConvAlgo parse_conv_algo(std::string_view name);

enum class ConvOp { forward, backward_data, backward_filter };
std::string_view conv_op_name(ConvOp op) noexcept;

// One answer of get_*/find_* (cudnnConvolutionFwdAlgoPerf_t): whether the algorithm serves
// the problem and why (or why not), its workspace and, from find_*, its measured time.
struct AlgoPerf {
  ConvAlgo algo = ConvAlgo::direct;
  bool supported = false;
  bool within_budget = false;   // workspace <= the handle's budget
  bool deterministic = true;    // bitwise reproducible across thread counts under this handle
  std::size_t workspace = 0;    // bytes
  double time_ms = -1;          // measured by find_*; -1 from get_*
  std::string reason;           // why it ranks where it does, or why it cannot run
};

// ---- forward: y = alpha * conv(x, w) + beta * y ----------------------------------------------

// All algorithms, usable ones first in heuristic order (no timing).
std::vector<AlgoPerf> get_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                             const ConvDesc& conv, const TensorDesc& y);
// Times every usable algorithm within the budget on scratch buffers and ranks by time; the
// best answer is stored in the algorithm cache (and its file, with STRATA_DNN_CACHE=path).
std::vector<AlgoPerf> find_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                              const ConvDesc& conv, const TensorDesc& y);
// Bytes of workspace `algo` needs; throws not_supported (argument "algo") when it cannot serve.
std::size_t forward_workspace_size(const Handle& h, const TensorDesc& x, const FilterDesc& w, const ConvDesc& conv,
                                   const TensorDesc& y, ConvAlgo algo);
void convolution_forward(const Handle& h, const void* alpha, const TensorDesc& x_desc, const void* x,
                         const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                         void* workspace, std::size_t workspace_bytes, const void* beta,
                         const TensorDesc& y_desc, void* y);
// Convenience: float scalars, the algorithm from the cache or the heuristic, workspace
// allocated internally within the handle's budget.
void convolution_forward(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                         const FilterDesc& w_desc, const void* w, const ConvDesc& conv, float beta,
                         const TensorDesc& y_desc, void* y);

// ---- backward data: dx = alpha * conv_transpose(dy, w) + beta * dx ---------------------------

std::vector<AlgoPerf> get_backward_data_algorithms(const Handle& h, const FilterDesc& w, const TensorDesc& dy,
                                                   const ConvDesc& conv, const TensorDesc& dx);
std::vector<AlgoPerf> find_backward_data_algorithms(const Handle& h, const FilterDesc& w, const TensorDesc& dy,
                                                    const ConvDesc& conv, const TensorDesc& dx);
std::size_t backward_data_workspace_size(const Handle& h, const FilterDesc& w, const TensorDesc& dy,
                                         const ConvDesc& conv, const TensorDesc& dx, ConvAlgo algo);
void convolution_backward_data(const Handle& h, const void* alpha, const FilterDesc& w_desc, const void* w,
                               const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, ConvAlgo algo,
                               void* workspace, std::size_t workspace_bytes, const void* beta,
                               const TensorDesc& dx_desc, void* dx);
void convolution_backward_data(const Handle& h, float alpha, const FilterDesc& w_desc, const void* w,
                               const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, float beta,
                               const TensorDesc& dx_desc, void* dx);

// ---- backward filter: dw = alpha * correlate(x, dy) + beta * dw -----------------------------

std::vector<AlgoPerf> get_backward_filter_algorithms(const Handle& h, const TensorDesc& x, const TensorDesc& dy,
                                                     const ConvDesc& conv, const FilterDesc& dw);
std::vector<AlgoPerf> find_backward_filter_algorithms(const Handle& h, const TensorDesc& x, const TensorDesc& dy,
                                                      const ConvDesc& conv, const FilterDesc& dw);
std::size_t backward_filter_workspace_size(const Handle& h, const TensorDesc& x, const TensorDesc& dy,
                                           const ConvDesc& conv, const FilterDesc& dw, ConvAlgo algo);
void convolution_backward_filter(const Handle& h, const void* alpha, const TensorDesc& x_desc, const void* x,
                                 const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, ConvAlgo algo,
                                 void* workspace, std::size_t workspace_bytes, const void* beta,
                                 const FilterDesc& dw_desc, void* dw);
void convolution_backward_filter(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                                 const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, float beta,
                                 const FilterDesc& dw_desc, void* dw);

// ---- bias and the fused forward ------------------------------------------------------------

// y = alpha * bias (broadcast over all but C) + beta * y; bias is {1, C, 1...} (cudnnAddTensor).
void add_bias(const Handle& h, const void* alpha, const TensorDesc& bias_desc, const void* bias,
              const void* beta, const TensorDesc& y_desc, void* y);

enum class Activation { identity, relu, relu6, sigmoid, tanh };

// y = act(alpha1 * conv(x, w) + alpha2 * z + bias)  (cudnnConvolutionBiasActivationForward).
// z may be null (no residual) or alias y; bias may be null. z has y's descriptor.
void convolution_bias_activation_forward(const Handle& h, const void* alpha1, const TensorDesc& x_desc,
                                         const void* x, const FilterDesc& w_desc, const void* w,
                                         const ConvDesc& conv, ConvAlgo algo, void* workspace,
                                         std::size_t workspace_bytes, const void* alpha2, const void* z,
                                         const TensorDesc& bias_desc, const void* bias, Activation act,
                                         const TensorDesc& y_desc, void* y);

// ---- prepared filters: the filter's transform paid once (inference) --------------------------

// A filter prepared for repeated forward convolutions with one algorithm, the role of
// oneDNN's weight reorder: Winograd's transformed filters, implicit GEMM's filter packed into
// the microkernel's panels; the other algorithms keep a copy of the filter as given. It owns
// its memory (the caller's w may be freed), never changes, and serves any batch and image size
// (and padding, stride, dilation) with the channels, groups, filter, convolution mode, x/y
// layouts and handle ISA it was prepared for; a call that differs is refused naming "w".
// Any data type: a bf16 filter on implicit GEMM's AMX route (channels-last x and y on a CPU with
// AMX tiles) is packed into its 32-channel tile panels; a bf16/f16/i8 filter for Winograd or
// implicit GEMM computing on f32 copies is widened and prepared in the f32 form (the call then
// stages x and y only); other filters are kept as given (the call stages or reads them as
// usual). A form serves only calls of its own route (AMX panels refuse a staged call, the f32
// form a call AMX reads as stored). Results are bitwise those of the unprepared call with the
// same algorithm.
class PreparedFilter {
 public:
  struct Impl;
  PreparedFilter() = default;
  explicit PreparedFilter(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  bool empty() const noexcept { return !impl_; }
  ConvAlgo algo() const;        // throws invalid_argument ("w") when empty
  std::size_t bytes() const;    // memory held
  bool transformed() const;     // holds the algorithm's own form (false: a copy of w)
  const Impl& impl() const;     // for the library

 private:
  std::shared_ptr<const Impl> impl_;
};

// Prepares w for `algo` on problems shaped like (x, w, conv, y). Throws not_supported naming
// "algo" when the algorithm cannot compute the problem, or "w" for a non-f32 filter.
PreparedFilter prepare_forward_filter(const Handle& h, const TensorDesc& x, const FilterDesc& w_desc, const void* w,
                                      const ConvDesc& conv, const TensorDesc& y, ConvAlgo algo);
// Prepares w for the algorithm a find_prepared_forward_algorithms call cached for this
// problem, else for the heuristic's first choice.
PreparedFilter prepare_forward_filter(const Handle& h, const TensorDesc& x, const FilterDesc& w_desc, const void* w,
                                      const ConvDesc& conv, const TensorDesc& y);
// find_forward_algorithms for prepared filters: every usable algorithm is timed with its
// filter prepared (the preparation is not timed), with the prepared call's workspace; the
// best answer is cached (and persisted) separately from the per-call find.
std::vector<AlgoPerf> find_prepared_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                                       const ConvDesc& conv, const TensorDesc& y);
// get_forward_algorithms for prepared filters: the heuristic ranking of calls whose filter was
// prepared (no per-call filter transform in the estimates; the prepared call's workspace).
// Winograd on small images at batch 1 ranks first here and below im2col per call.
std::vector<AlgoPerf> get_prepared_forward_algorithms(const Handle& h, const TensorDesc& x, const FilterDesc& w,
                                                      const ConvDesc& conv, const TensorDesc& y);
// Workspace of the prepared call (less than the unprepared one when the filter transform
// needed workspace, as Winograd's does).
std::size_t forward_workspace_size(const Handle& h, const TensorDesc& x, const PreparedFilter& w,
                                   const ConvDesc& conv, const TensorDesc& y);
// y = alpha * conv(x, w) + beta * y with w's algorithm.
void convolution_forward(const Handle& h, const void* alpha, const TensorDesc& x_desc, const void* x,
                         const PreparedFilter& w, const ConvDesc& conv, void* workspace, std::size_t workspace_bytes,
                         const void* beta, const TensorDesc& y_desc, void* y);
// y = act(alpha1 * conv(x, w) + alpha2 * z + bias) with w's algorithm.
void convolution_bias_activation_forward(const Handle& h, const void* alpha1, const TensorDesc& x_desc,
                                         const void* x, const PreparedFilter& w, const ConvDesc& conv,
                                         void* workspace, std::size_t workspace_bytes, const void* alpha2,
                                         const void* z, const TensorDesc& bias_desc, const void* bias, Activation act,
                                         const TensorDesc& y_desc, void* y);

// ---- the algorithm cache -------------------------------------------------------------------

// The process-wide cache of find_* results, keyed by problem + device + ISA + threads +
// determinism + library version. With STRATA_DNN_CACHE=path it is loaded from and appended to
// that file; corrupt or stale lines are skipped with a warning.
void clear_algorithm_cache(bool also_file = false);
std::size_t algorithm_cache_size();

}  // namespace strata::dnn
