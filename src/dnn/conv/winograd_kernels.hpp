// The arithmetic of Winograd F(m x m, 3 x 3) on 8 tiles (or 8 channels) at once, one set per
// ISA. Lanes are the innermost index of every buffer ([row][col][lane]), so the same source
// becomes 8-wide AVX2 code in the avx2 slot and SSE pairs in the generic slot; the avx512 slot
// transforms two lane groups (16 channels) at a time. The input and output transforms read
// and write the tensors where they lie, a window saying which pixels of a border tile are in
// the image (at batch 1, against a copy of each patch and a scalar store of each output:
// res2_3x3 1.42x, res3_3x3 1.26x, res4_3x3 1.12x, res5_3x3 1.04x). The products run on each
// slot's own GEMM microkernel.
//
//   input:  V = B^T d B     d: alpha x alpha patch        (alpha = m + 2)
//   filter: U = G g G^T     g: 3 x 3 filter
//   output: Y = A^T M A     M: alpha x alpha products, Y: m x m outputs
//
// The transform matrices are those of Lavin & Gray (2016) with points {0, +-1, +-2, inf} for
// F(4,3) and {0, +-1, inf} for F(2,3), written out as sums so no multiply by 0 is executed.
#pragma once
#include <cstdint>

#include "strata/core/isa.hpp"

namespace strata::dnn::detail {

inline constexpr int kWinogradLanes = 8;

// The rows [r0, r1) and columns [c0, c1) of an input patch or output tile that lie inside the
// image: the rest is padding (read as zero) or beyond the output (not written).
struct PatchWindow {
  int r0, r1, c0, c1;
};

struct WinogradKernels {
  // `groups` lane groups of one patch, pixels outside `win` zero: group g of pixel (i, j) at
  // first + (i - r0) * ldh + (j - c0) * ldw + 8 g; writes V[xi]'s lanes of group g to
  // v + xi * v_stride + 8 g (xi = i * alpha + j).
  void (*input)(const float* first, int64_t ldh, int64_t ldw, PatchWindow win, int64_t groups, float* v,
                int64_t v_stride);
  // g: [3][3][8]; u: [alpha*alpha][8].
  void (*filter)(const float* g, float* u);
  // `groups` lane groups of one tile: group g of M[xi] at m + xi * m_stride + 8 g; output
  // (i, j) of group g, for (i, j) in win (r0 = c0 = 0), to y + i * ldh + j * ldw + 8 g as
  // alpha * value + beta * y (beta == 0 never reads y).
  void (*output)(const float* m, int64_t m_stride, int64_t groups, float* y, int64_t ldh, int64_t ldw, PatchWindow win,
                 float alpha, float beta);
};

struct WinogradKernelSet {
  WinogradKernels f2;  // F(2x2, 3x3), alpha = 4
  WinogradKernels f4;  // F(4x4, 3x3), alpha = 6
  // The alpha^2 products on this ISA's GEMM microkernel, channels innermost: U[xi] is stored as
  // the kernel's packed A operand (tile::PrepackedOperand, panels of `panel_width_a` output
  // channels, each C x panel_width_a values), so no product packs the filter again.
  //   m (k x tiles, column-major, ld k) = u (k x c, panels) * v (c x tiles, column-major, ld c)
  int panel_width_a;
  void (*multiply_channels_last)(const float* v, const float* u, float* m, int64_t tiles, int64_t k, int64_t c);
  // The same products transposed, for blocks of few tiles (a whole number of row panels where
  // tiles as columns would leave a ragged column tile, and U read once instead of once per
  // column tile): U[xi] stored as the packed B operand (panels of `panel_width_b` channels).
  //   m (tiles x k, column-major, ld ldm) = v^T (tiles x c, v as above) * u (c x k, panels)
  int panel_width_b;
  void (*multiply_tiles_as_rows)(const float* v, const float* u, float* m, int64_t ldm, int64_t tiles, int64_t k,
                                 int64_t c);
  // y[k * ldc + w] = alpha * src[w * ld + k] + beta * y (transpose_blocks.hpp): the staging of
  // tensors whose channels are not contiguous, in and out.
  void (*transpose)(const float* src, int64_t ld, int64_t kg, int64_t width, float* y, int64_t ldc, float alpha,
                    float beta);
};

extern const WinogradKernelSet winograd_kernels_generic;
extern const WinogradKernelSet winograd_kernels_avx2;
extern const WinogradKernelSet winograd_kernels_avx512;

inline const WinogradKernelSet& winograd_kernels(Isa isa) {
  return isa >= Isa::avx512 ? winograd_kernels_avx512 : isa >= Isa::avx2 ? winograd_kernels_avx2 : winograd_kernels_generic;
}

}  // namespace strata::dnn::detail
