#include "vec_kernels.hpp"

namespace strata::blas::detail {

const VecKernelSet& vec_kernel_set(Isa isa) {
  static const IsaTable<const VecKernelSet*> table{&vec_kernels_generic, &vec_kernels_avx2, &vec_kernels_avx512};
  return *table.select(isa);
}

}  // namespace strata::blas::detail
