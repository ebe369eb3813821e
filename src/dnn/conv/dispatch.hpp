// The layer between the public API and the algorithms: it validates descriptors into a
// ConvProblem, sizes workspaces (algorithm + f16/bf16/i8 staging), and runs one algorithm with
// staging, alpha/beta and the optional bias/residual/activation epilogue.
#pragma once
#include <cstddef>
#include <string>

#include "algorithm.hpp"
#include "strata/core/memory.hpp"
#include "strata/dnn/convolution.hpp"

namespace strata::dnn::detail {

// The caller's descriptors in role order (x input-shaped, w filter, y output-shaped) and the
// names the caller knows them by ("x"/"dx", "w"/"dw", "y"/"dy") for error messages.
struct ConvDescs {
  ConvOp op;
  const TensorDesc& x;
  const FilterDesc& w;
  const ConvDesc& conv;
  const TensorDesc& y;
  const char* x_name() const { return op == ConvOp::backward_data ? "dx" : "x"; }
  const char* w_name() const { return op == ConvOp::backward_filter ? "dw" : "w"; }
  const char* y_name() const { return op == ConvOp::forward ? "y" : "dy"; }
};

// Checks that the descriptors fit together (throws invalid_argument naming the argument) and
// describes the problem as the algorithms will see it under this handle.
ConvProblem make_problem(const Handle& h, const ConvDescs& d);

// Whether `algo` reads this bf16/f16 forward's x and w as stored (only y is staged).
bool reads_narrow(const ConvProblem& p, ConvAlgo algo);

// Whether a non-f32 forward on `algo` reads a prepared f32 form of the filter (the f32
// algorithm's own, made from the widened filter) instead of staging w in f32 per call.
bool staged_filter_prepared(const ConvProblem& p, ConvAlgo algo);

// f32 staging bytes for a non-f32 call on `algo` (0 for f32; none when it reads narrow inputs;
// x and y only when its filter is prepared).
std::size_t staging_bytes(const ConvProblem& p, const ConvDescs& d, ConvAlgo algo);

// Workspace of `algo` for the call, staging included; throws not_supported naming "algo"
// when the algorithm cannot serve the problem.
std::size_t required_workspace(const ConvProblem& p, const ConvDescs& d, ConvAlgo algo);

// bias + residual + activation applied after the convolution (the fused forward).
struct Epilogue {
  const void* z = nullptr;  // residual with y's descriptor (may alias y), or null
  float alpha2 = 0.f;
  const TensorDesc* bias_desc = nullptr;
  const void* bias = nullptr;  // {1, K, 1...}, or null
  Activation act = Activation::identity;
};

// Runs the operation: `x`, `w`, `y` in role order (the destination is the one op writes).
// `prepared`: the algorithm's prepared filter (forward), read instead of w.
void run_convolution(const Handle& h, const ConvProblem& p, const ConvDescs& d, ConvAlgo algo, const void* x,
                     const void* w, const void* y, float alpha, float beta, void* workspace,
                     std::size_t workspace_bytes, const Epilogue* epilogue, const char* why,
                     const float* prepared = nullptr);

// Where an algorithm finds logical filter element 0 (ConvArgs::w): w itself, or further in
// when ConvMode::convolution flipped the spatial strides.
const float* filter_origin(const ConvProblem& p, const float* w);
const uint16_t* filter_origin(const ConvProblem& p, const uint16_t* w);  // a bf16/f16 filter as stored

float apply_activation(Activation a, float v);

// Argument checks shared by the public entry points (throw invalid_argument naming `name`).
float scalar_arg(const void* p, const char* name);  // *p as a float
void check_activation(Activation act);               // a known Activation ("act")
void check_algo(ConvAlgo a);                         // a known ConvAlgo value ("algo")

// The algorithm's prepared form of the filter w (stored in p.dtype) for p: prepare_filter for
// f32, prepare_narrow_filter for a bf16 forward the algorithm reads as stored, and for other
// non-f32 forwards (computed on f32 copies) prepare_filter of the widened filter; empty when the
// algorithm has none.
AlignedArray<float> prepare_filter_data(const ConvProblem& p, ConvAlgo algo, const void* w);
// Whether algo prepares a filter that is not f32 (a bf16 forward it reads as stored).
bool narrow_preparable(const ConvProblem& p, ConvAlgo algo);

}  // namespace strata::dnn::detail
