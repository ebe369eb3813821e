// AVX2 with AVX_VNNI (the VEX-encoded vpdpbusd of CPUs without AVX-512 VNNI, and of Zen 5): the
// integer GEMM's byte quads on 16x6 ymm tiles for every u8 A (and s8 A shifted by 128), int16
// pairs otherwise. Compiled with -mavxvnni; registered only on CPUs that have it.
#include "kernel_instance.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace strata::blas::detail {

GemmKernel<int32_t> gemm_i8_avx2_vnni() {
  return Int8KernelInstance<tile::KernelI8, tile::KernelU7>::entry();
}

}  // namespace strata::blas::detail
