// The Winograd transforms for the generic slot (baseline x86-64 flags).
#include "winograd_kernels_impl.hpp"

namespace strata::dnn::detail {
const WinogradKernelSet winograd_kernels_generic = make_winograd_kernels();
}
