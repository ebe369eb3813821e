// The Winograd transforms for the avx2 slot (flags set by strata_isa_sources).
#include "winograd_kernels_impl.hpp"

namespace strata::dnn::detail {
const WinogradKernelSet winograd_kernels_avx2 = make_winograd_kernels();
}
