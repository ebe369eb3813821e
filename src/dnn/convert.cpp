// Bulk bf16 <-> f32 conversion (tensor_access.hpp). The loops are integer arithmetic, so every
// clone gives the same bits; target_clones compiles them for AVX-512 and AVX2 besides the
// baseline and picks one when the library loads: a staged tensor converts at memory speed
// (SSE2's 4 lanes were twice the time of res2's 1x1 bf16 product on AMX).
#include <bit>
#include <cstdint>

#include "tensor_access.hpp"

namespace strata::dnn::detail {

#define STRATA_CONVERT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

STRATA_CONVERT_CLONES void bf16_to_f32(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(uint32_t(src[i]) << 16);
}

STRATA_CONVERT_CLONES void f32_to_bf16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(src[i]);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    dst[i] = uint16_t((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded);
  }
}

#undef STRATA_CONVERT_CLONES

}  // namespace strata::dnn::detail
