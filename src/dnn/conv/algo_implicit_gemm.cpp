// Implicit GEMM: the GEMM engine's B-operand packing reads the input tensor directly, so no
// column buffer exists. The slot is registered so selection, find, the cache and the tests
// already know it; the engine side (packing from a tensor) is being written in the tile
// library and will fill execute(). Until then supports() says so and nothing selects it.
#include "algorithm.hpp"
#include "strata/core/status.hpp"

namespace strata::dnn::detail {

namespace {

class ImplicitGemmAlgorithm final : public ConvAlgorithm {
 public:
  ConvAlgo id() const override { return ConvAlgo::implicit_gemm; }
  Support supports(const ConvProblem&) const override { return Support::no("not yet available"); }
  std::size_t workspace_size(const ConvProblem&) const override { return 0; }
  double estimated_cost(const ConvProblem& p) const override { return p.flops(); }
  void execute(const ConvProblem&, const ConvArgs&) const override {
    throw_error(Status::not_supported, "algo", "implicit_gemm is not yet available");
  }
};

}  // namespace

const ConvAlgorithm& implicit_gemm_algorithm() {
  static const ImplicitGemmAlgorithm a;
  return a;
}

}  // namespace strata::dnn::detail
