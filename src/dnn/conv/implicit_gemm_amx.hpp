// bf16 forward convolution on AMX tiles, reading x and w as stored: implicit GEMM's route for
// bf16 problems with channels-last x and y (ConvAlgorithm::reads_narrow_inputs).
//
// C is one image's block of 32 output pixels x all K channels, computed 32 x 32 at a time by
// amx_run_tile (tile/amx_tiles.hpp). The depth runs tap by tap over blocks of 32 input channels
// (each tap's channels padded to whole blocks; with few channels a filter row's S x C values
// form one run instead), so one depth group of a pixel is 64 contiguous bytes of x: AMX's
// first operand (16 pixels a tile) is loaded from x itself wherever a tile's 16 pixels are in
// the image and equally spaced there (interior runs of an output row, or any run of a 1x1
// stride-1 unpadded layer), and staged otherwise (zeros over the padding, masked copies of
// partial channel blocks). The filter is the second operand: 32-channel panels packed into the
// workspace per call, or once (a prepared filter). The finished block -- 32 pixels x K in f32, in L1 or
// L2 -- goes to the sink (ConvArgs::narrow_out), which adds beta * y or the fused epilogue and
// rounds to bf16. No column matrix, no f32 copy of any tensor.
//
// Each tile sums its depth in the same order whatever the thread count (threads take whole
// pixel blocks), so results are bitwise alike across threads.
#pragma once
#include <cstddef>

#include "problem.hpp"

namespace strata::dnn::detail {

// The route's arrangement of p (implicit_gemm_amx_plan.cpp): depth groups of 32 channels per tap,
// 32-channel filter panels, and the workspace's pieces.
struct AmxConvPlan {
  // Filter columns per run of x: 1 (a run is a tap's C/G channels), or S with few channels
  // (ResNet's conv1, 3): a filter row's S x C values are one run of x (NHWC, one group, unit
  // dilation along W), so a "tap" is a whole filter row.
  int64_t per_run = 1;
  int64_t taps = 0, channel_blocks = 0;  // per tap: ceil(run / 32) blocks of 32 values
  int64_t depth_groups = 0;              // taps x channel_blocks: 64 bytes of each pixel per group
  int64_t panels = 0;                    // per convolution group: ceil(K/G / 32) filter panels
  int64_t ld = 0;                        // a finished pixel's f32 row: groups x panels x 32
  int64_t pixel_blocks = 0;              // per image: ceil(output pixels / 32)
  // Pixel blocks per work item: where the packed filter outgrows half of L2, several blocks
  // (their inputs within half of it) meet each panel while it is in cache.
  int64_t item_blocks = 1;
  static constexpr int64_t most_item_blocks = 8;
  int parts = 1;                         // threads that take work items
  bool filter_direct = false;            // w is packed KRSC with whole channel blocks: packed from as stored
  std::size_t filter_bytes = 0;          // the packed panels: 2 KB per depth group and panel
  std::size_t padded_filter_bytes = 0;   // otherwise w first copied to KRSC, channels padded
  // One pixel block's buffers, in this order: where each depth group's tiles lie (an
  // AmxBGroup each), the staged groups (2 KB each), the finished block (32 x ld f32).
  std::size_t table_bytes = 0, stage_bytes = 0, block_bytes = 0;
  std::size_t part_bytes = 0;            // one thread's: item_blocks x block_bytes
};
AmxConvPlan amx_conv_plan(const ConvProblem& p);

// Whether this route computes p: a bf16 forward with packed NHWC x and y on a CPU whose AMX
// tiles this process may use, with the handle's ISA at AVX-512.
bool amx_conv_serves(const ConvProblem& p);
std::size_t amx_conv_workspace_size(const ConvProblem& p);
// Defined in implicit_gemm_amx.cpp (compiled with the AMX flags); call only when it serves p.
// The forward reads the filter panels from ConvArgs::prepared_w when set (p.filter_prepared),
// else packs them from w_narrow into the workspace; the prepared form is those panels
// (AmxConvPlan::filter_bytes), written from the stored filter w.
void amx_conv_forward(const ConvProblem& p, const ConvArgs& a);
void amx_conv_prepare_filter(const ConvProblem& p, const void* w, void* panels);

}  // namespace strata::dnn::detail
