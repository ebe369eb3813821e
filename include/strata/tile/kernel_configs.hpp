// The microkernel of each element type for the ISA this translation unit is compiled for —
// the one place that says "AVX2 uses 16x6 for f32". Kernel files of every module (blas,
// dnn) include this instead of repeating tile shapes.
#pragma once
#include "strata/tile/int8_gemm.hpp"
#include "strata/tile/microkernel.hpp"
#include "strata/tile/simd.hpp"

STRATA_TILE_NS_BEGIN

#if defined(__AVX512F__)
using KernelF32 = MicroKernel<VecAvx512F32, 2, 12>;  // 32x12: 24 of 32 zmm accumulate
// 64x6, for a convolution's image read in place (dnn: the row bands, the channels-last 1x1
// layers' B): 10 loads per 24 FMAs against 32x12's 14, where each pixel's values lie in lines
// of their own (dnn/conv/implicit_gemm_kernel.hpp, takes_tall_kernel).
using KernelF32Tall = MicroKernel<VecAvx512F32, 4, 6>;
using KernelF64 = MicroKernel<VecAvx512F64, 2, 12>;  // 16x12
using KernelF64Tall = MicroKernel<VecAvx512F64, 4, 6>;  // 32x6
// The one-block path's tall tiles (tiny_gemm.hpp, tiny_gemm_tall).
template <>
struct TallKernelOf<KernelF32> {
  using type = KernelF32Tall;
};
template <>
struct TallKernelOf<KernelF64> {
  using type = KernelF64Tall;
};
#if defined(__AVX512VNNI__)
using KernelI8 = MicroKernelI8Avx512;     // 32x12 int16 pairs (vpmaddwd): s8 A
using KernelU7 = MicroKernelU8Vnni512;    // 32x12 byte quads (vpdpbusd): every u8 A
#if defined(__AMX_TILE__)
inline constexpr const char* kernel_isa_name = "avx512-amx";  // kernels_amx.cpp: tile kernels of its own
#else
inline constexpr const char* kernel_isa_name = "avx512-vnni";
#endif
#else
using KernelI8 = MicroKernelI8Avx2;       // not registered: AVX-512 without VNNI runs avx2's
using KernelU7 = MicroKernelU7Avx2;
inline constexpr const char* kernel_isa_name = "avx512";
#endif
#elif defined(__AVX2__) && defined(__FMA__)
using KernelF32 = MicroKernel<VecAvx2F32, 2, 6>;     // 16x6: 12 of 16 ymm accumulate
using KernelF32Tall = KernelF32;                      // 32x3: 12 + 4 + 1 of 16 ymm
using KernelF64 = MicroKernel<VecAvx2F64, 2, 6>;     // 8x6
using KernelI8 = MicroKernelI8Avx2;                  // 16x6 int16 pairs
#if defined(__AVXVNNI__)
using KernelU7 = MicroKernelU8VnniAvx2;              // 16x6 byte quads (VEX vpdpbusd): every u8 A
inline constexpr const char* kernel_isa_name = "avx2-vnni";
#else
using KernelU7 = MicroKernelU7Avx2;                  // 16x6 byte quads, for u8 A below 128
inline constexpr const char* kernel_isa_name = "avx2";
#endif
#else
using KernelF32 = MicroKernel<VecPortable<float, 4>, 2, 4>;   // 8x4
using KernelF32Tall = KernelF32;
using KernelF64 = MicroKernel<VecPortable<double, 2>, 2, 4>;  // 4x4
using KernelI8 = MicroKernelI8Portable<8, 4>;
using KernelU7 = void;  // no byte-quad kernel: the pair kernel serves every input
inline constexpr const char* kernel_isa_name = "portable";
#endif

STRATA_TILE_NS_END
