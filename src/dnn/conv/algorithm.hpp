// The interface every convolution algorithm implements, and the registry that lists them.
//
// To add an algorithm: one file src/dnn/conv/algo_<name>.cpp with a class derived from
// ConvAlgorithm, a `const ConvAlgorithm& <name>_algorithm()` accessor declared below, and
// one line in registry.cpp. Nothing else in the library changes: selection, find, the
// cache, verbose output and the tests iterate over the registry.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "problem.hpp"

namespace strata::dnn::detail {

struct Support {
  bool ok = false;
  std::string reason;  // why not (when !ok), or a short note on why it fits (when ok)
  static Support yes(std::string why = {}) { return {true, std::move(why)}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

class ConvAlgorithm {
 public:
  virtual ~ConvAlgorithm() = default;
  virtual ConvAlgo id() const = 0;
  // Whether this algorithm can compute `p` (op, layouts, dtype, shape); never throws.
  virtual Support supports(const ConvProblem& p) const = 0;
  // Workspace bytes execute() needs for `p` (only called when supports(p).ok).
  virtual std::size_t workspace_size(const ConvProblem& p) const = 0;
  // Whether results are bitwise identical across runs and thread counts for `p` as given
  // (p.deterministic says whether the caller asked for that).
  virtual bool deterministic(const ConvProblem& p) const { (void)p; return true; }
  // Whether execute() applies args.epilogue itself (fused into its output tiles); otherwise
  // the dispatcher runs the epilogue as a separate pass over y.
  virtual bool fuses_epilogue(const ConvProblem& p) const { (void)p; return false; }
  // Whether execute() reads a bf16/f16 forward's x and w as stored (ConvArgs::x_narrow and
  // w_narrow; only asked when p.narrow_in_place) and hands y over through ConvArgs::narrow_out:
  // nothing is staged, where other algorithms get f32 copies of all three tensors.
  virtual bool reads_narrow_inputs(const ConvProblem& p) const { (void)p; return false; }
  // Filter preparation for repeated forward calls (dnn::prepare_forward_filter): the floats
  // of this algorithm's prepared filter for `p` — 0 when it has none and reads w as given —
  // and writing it from the f32 filter w (addressed as ConvArgs::w). The prepared form may
  // depend only on the filter, the channel and group counts, the ISA and the x/y layouts, so
  // one prepared filter serves every batch and image size.
  virtual std::size_t prepared_filter_floats(const ConvProblem& p) const { (void)p; return 0; }
  virtual void prepare_filter(const ConvProblem& p, const float* w, float* out) const { (void)p, (void)w, (void)out; }
  // The same for a bf16 forward that this algorithm reads as stored (reads_narrow_inputs): the
  // bytes of its prepared form (0: it has none, and such a filter cannot be prepared) and
  // writing it from the stored filter w (addressed as ConvArgs::w_narrow).
  virtual std::size_t prepared_narrow_bytes(const ConvProblem& p) const { (void)p; return 0; }
  virtual void prepare_narrow_filter(const ConvProblem& p, const void* w, void* out) const {
    (void)p, (void)w, (void)out;
  }
  // A rough cost estimate in seconds-like units for the heuristic ranking (lower is better).
  virtual double estimated_cost(const ConvProblem& p) const = 0;
  // Computes the operation. Called only when supports(p).ok and args.workspace_bytes >=
  // workspace_size(p); must honour beta == 0 (destination not read) and use p.threads.
  virtual void execute(const ConvProblem& p, const ConvArgs& args) const = 0;
};

const ConvAlgorithm& direct_algorithm();
const ConvAlgorithm& im2col_gemm_algorithm();
const ConvAlgorithm& implicit_gemm_algorithm();
const ConvAlgorithm& winograd_2x2_algorithm();
const ConvAlgorithm& winograd_4x4_algorithm();
const ConvAlgorithm& fft_tiled_algorithm();

// All algorithms, indexed by ConvAlgo.
const std::vector<const ConvAlgorithm*>& conv_algorithms();
const ConvAlgorithm& conv_algorithm(ConvAlgo a);

}  // namespace strata::dnn::detail
