// The vector kernels compiled for the generic slot (flags set by strata_isa_sources).
#include "vec_kernels_impl.hpp"

namespace strata::blas::detail {
const VecKernelSet vec_kernels_generic = make_kernel_set();
}
