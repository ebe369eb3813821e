// The Winograd transforms and products for the avx512 slot (flags set by strata_isa_sources):
// the transforms are the same source (two 8-lane groups per zmm register), the alpha^2
// products run on the AVX-512 GEMM microkernel (32x12). Without this slot AVX-512 machines multiplied on the AVX2 kernel.
#include "winograd_kernels_impl.hpp"

namespace strata::dnn::detail {
const WinogradKernelSet winograd_kernels_avx512 = make_winograd_kernels();
}
