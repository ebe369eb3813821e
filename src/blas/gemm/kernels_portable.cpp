// Portable C++ GEMM kernels (any CPU): the reference slot of every kernel table.
#include "kernel_instance.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::blas::detail {

GemmKernel<float> gemm_f32_portable() {
  return KernelInstance<tile::KernelF32>::entry();
}
GemmKernel<double> gemm_f64_portable() {
  return KernelInstance<tile::KernelF64>::entry();
}

GemmKernel<int32_t> gemm_i8_portable() {
  return Int8KernelInstance<tile::KernelI8, tile::KernelU7>::entry();
}

}  // namespace strata::blas::detail
