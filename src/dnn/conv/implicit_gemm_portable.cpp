// Implicit-GEMM forward convolution instantiated for this file's ISA (see implicit_gemm_kernel.hpp).
#include "implicit_gemm_kernel.hpp"

namespace strata::dnn::detail {

const ImplicitGemmIsa implicit_gemm_portable = implicit_gemm_isa<tile::KernelF32, tile::KernelF32Tall>();

}  // namespace strata::dnn::detail
