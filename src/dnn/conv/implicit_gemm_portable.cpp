// Implicit-GEMM forward convolution instantiated for this file's ISA (see implicit_gemm_kernel.hpp).
#include "implicit_gemm_kernel.hpp"

namespace strata::dnn::detail {

void implicit_gemm_forward_portable(const ConvProblem& p, const ConvArgs& a) {
  run_implicit_gemm<tile::KernelF32>(p, a);
}

}  // namespace strata::dnn::detail
