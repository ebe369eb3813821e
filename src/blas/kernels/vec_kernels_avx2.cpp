// The vector kernels compiled for the avx2 slot (flags set by strata_isa_sources).
#include "vec_kernels_impl.hpp"

namespace strata::blas::detail {
const VecKernelSet vec_kernels_avx2 = make_kernel_set();
}
