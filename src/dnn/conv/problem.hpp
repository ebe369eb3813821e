// The internal description of one convolution, the only thing an algorithm looks at.
//
// Every problem is stored as 3-D (D, H, W): a 2-D problem has D = 1, a 1-D one D = H = 1, so
// one loop nest serves all ranks. Tensors are seen as f32 with element strides (the public
// layer stages f16/bf16/i8 through f32 copies), so NCHW, NHWC and strided views are one case --
// except that an algorithm may read a bf16/f16 forward's x and w as stored
// (ConvAlgorithm::reads_narrow_inputs), handing y's values to the public layer in f32 blocks.
//
// Roles, whatever the operation: x is the input-shaped tensor (N, C, D, H, W), w the filter
// (G groups of K/G x C/G x T x R x S), y the output-shaped tensor (N, K, OD, OH, OW).
//   forward:          reads x, w; writes y = alpha * conv(x, w) + beta * y
//   backward_data:    reads y (= dy), w; writes x (= dx) = alpha * conv^T(dy, w) + beta * dx
//   backward_filter:  reads x, y (= dy); writes w (= dw) = alpha * corr(x, dy) + beta * dw
// With beta == 0 the destination is never read.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/core/isa.hpp"
#include "strata/dnn/convolution.hpp"

namespace strata::dnn::detail {

struct ConvProblem {
  ConvOp op = ConvOp::forward;
  int spatial_rank = 2;  // as the caller described it (1..3); sizes below are always 3-D
  DType dtype = DType::f32;  // storage type of the caller's tensors (compute is f32)

  int64_t n = 0, c = 0, k = 0, groups = 1;    // c, k: all channels (c/groups per group)
  std::array<int64_t, 3> in{1, 1, 1};          // D H W of x
  std::array<int64_t, 3> filter{1, 1, 1};      // T R S
  std::array<int64_t, 3> out{1, 1, 1};         // OD OH OW of y
  std::array<int64_t, 3> pad{0, 0, 0}, stride{1, 1, 1}, dilation{1, 1, 1};

  // Element strides of the f32 views. x, y: {n, c, d, h, w}. w: {group, k-in-group,
  // c-in-group, t, r, s}; filter strides may be negative (a flipped view for ConvMode::
  // convolution, the pointer then addresses logical element 0).
  std::array<int64_t, 5> xs{}, ys{};
  std::array<int64_t, 6> ws{};

  // Execution context that changes the answer of supports()/workspace_size() or the choice.
  int threads = 1;
  bool deterministic = true;
  Isa isa = Isa::generic;
  bool filter_prepared = false;  // ConvArgs::prepared_w is set (no per-call filter transform)
  // A bf16/f16 forward whose x and y are packed NCHW or NHWC, so xs and ys (the packed strides)
  // address the caller's tensors: an algorithm that reads narrow inputs may take x and w as
  // stored and hand y over by linear index (NarrowOutput).
  bool narrow_in_place = false;

  int64_t cg() const { return c / groups; }
  int64_t kg() const { return k / groups; }
  int64_t in_spatial() const { return in[0] * in[1] * in[2]; }
  int64_t out_spatial() const { return out[0] * out[1] * out[2]; }
  int64_t filter_spatial() const { return filter[0] * filter[1] * filter[2]; }
  double flops() const { return 2.0 * double(n) * double(k) * double(cg()) * double(out_spatial() * filter_spatial()); }

  // Layout predicates on the f32 views.
  bool x_nchw() const;  // x packed N, C, D, H, W
  bool x_nhwc() const;  // x packed N, D, H, W, C
  bool y_nchw() const;
  bool y_nhwc() const;
  bool w_kcrs() const;  // filter packed K, C, T, R, S (not flipped)
  bool w_krsc() const;  // filter packed K, T, R, S, C (not flipped)
  bool unit_stride() const { return stride[0] == 1 && stride[1] == 1 && stride[2] == 1; }
  bool unit_dilation() const { return dilation[0] == 1 && dilation[1] == 1 && dilation[2] == 1; }

  // One line naming the problem in benchdnn's spirit ("fwd n8 c64 k64 i56x56 f3x3 ...").
  std::string str() const;
  // The algorithm-cache key: the problem (not the execution context).
  std::string key() const;
};

// Whether each channel's pixels of an (n, c, dims) view with element strides st {n, c, d, h, w}
// form one contiguous plane (pixel index d H W + h W + w at unit stride; NCHW-like, any channel
// and image strides). Size-1 dimensions may carry any stride.
bool pixel_planes(const std::array<int64_t, 3>& dims, const std::array<int64_t, 5>& st);

// Everything an algorithm needs at execution time. Pointers follow the roles above; the one
// the operation writes is the destination, the others are only read.
// The fused forward's epilogue for algorithms that apply it to each output tile while it is
// in cache (ConvAlgorithm::fuses_epilogue): y = act(alpha * conv + [beta * y] + alpha2 * z + bias).
struct ConvEpilogue {
  const float* z = nullptr;  // residual with y's strides, or null
  float alpha2 = 0.f;
  const float* bias = nullptr;  // K contiguous values, or null
  Activation act = Activation::identity;
};

// Where an algorithm that reads narrow inputs leaves y: store(v, offset, count) finishes y's
// elements [offset, offset + count) (linear indices: x and y are packed) from the f32 values
// alpha * conv at v -- beta * y or the epilogue added, rounded to the dtype -- so blocks are
// finished while in cache and y needs no f32 copy.
class NarrowOutput {
 public:
  virtual void store(const float* v, int64_t offset, int64_t count) const = 0;

 protected:
  ~NarrowOutput() = default;
};

struct ConvArgs {
  const ConvEpilogue* epilogue = nullptr;  // only for algorithms that fuse it
  float* x = nullptr;
  float* w = nullptr;
  float* y = nullptr;
  // The algorithm's prepared form of w (ConvAlgorithm::prepare_filter) when the caller passed a
  // PreparedFilter; then w is not read.
  const float* prepared_w = nullptr;
  // A bf16/f16 forward run on an algorithm that reads narrow inputs: the caller's x and w
  // (p.dtype, strides xs and ws) instead of f32 copies at x and w, and y's sink instead of y.
  const void* x_narrow = nullptr;
  const void* w_narrow = nullptr;
  const NarrowOutput* narrow_out = nullptr;
  float alpha = 1.f, beta = 0.f;
  void* workspace = nullptr;  // 64-byte aligned when workspace_size() > 0
  std::size_t workspace_bytes = 0;
};

// The same problem with the roles swapped so a backward-data problem with stride 1 becomes a
// forward one (dx = full correlation of dy with the spatially flipped, channel-transposed
// filter). Valid when unit_stride() and pad <= dilation * (filter - 1) in every dimension.
bool backward_data_maps_to_forward(const ConvProblem& p);
ConvProblem backward_data_as_forward(const ConvProblem& p);
// The filter pointer of the mapped problem (the flip moves logical element 0).
float* backward_data_as_forward_filter(const ConvProblem& p, float* w);

}  // namespace strata::dnn::detail
