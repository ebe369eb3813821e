// AMX tile kernels: bf16 x bf16 -> f32 on TDPBF16PS (tile/amx_bf16_gemm.hpp). Compiled with the
// AVX-512 (BF16, VNNI) and AMX flags; registered only where amx_ready() (kernel_registry.cpp).
#include "kernel_instance.hpp"
#include "strata/tile/amx_bf16_gemm.hpp"

namespace strata::blas::detail {

GemmKernel<float> gemm_bf16_amx() {
  return Bf16KernelInstance<tile::MicroKernelBf16Amx, tile::Bf16PairOperandOf<16>, tile::Bf16AmxColumnsOperand,
                            32>::entry();
}

}  // namespace strata::blas::detail
