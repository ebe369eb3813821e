// Portable C++ GEMM kernels (any CPU): the reference slot of every kernel table.
#include "kernel_instance.hpp"
#include "strata/tile/simd.hpp"

namespace strata::blas::detail {

GemmKernel<float> gemm_f32_portable() {
  return KernelInstance<tile::MicroKernel<tile::VecPortable<float, 4>, 2, 4>>::entry("portable f32 8x4");
}
GemmKernel<double> gemm_f64_portable() {
  return KernelInstance<tile::MicroKernel<tile::VecPortable<double, 2>, 2, 4>>::entry("portable f64 4x4");
}

}  // namespace strata::blas::detail
