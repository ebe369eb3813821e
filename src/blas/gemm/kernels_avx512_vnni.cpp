// AVX-512 with VNNI: the integer GEMM on 32x12 zmm tiles, byte quads through vpdpbusd for u8 A
// and int16 pairs through vpmaddwd for s8 A. Compiled with -mavx512vnni; registered only on
// CPUs that have it (kernel_registry.cpp).
#include "kernel_instance.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::blas::detail {

GemmKernel<int32_t> gemm_i8_avx512_vnni() {
  return Int8KernelInstance<tile::KernelI8, tile::KernelU7>::entry();
}

}  // namespace strata::blas::detail
