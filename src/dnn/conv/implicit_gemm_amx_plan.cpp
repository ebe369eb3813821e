// The AMX convolution route's arrangement and workspace (implicit_gemm_amx.hpp): plain integer
// arithmetic, compiled without the AMX flags, since selection asks on every CPU.
#include <algorithm>

#include "common.hpp"
#include "implicit_gemm_amx.hpp"
#include "strata/core/cpu.hpp"

namespace strata::dnn::detail {

namespace {

// AmxConvPlan::per_run.
int64_t filter_columns_per_run(const ConvProblem& p) {
  return p.cg() < 16 && p.groups == 1 && p.dilation[2] == 1 ? p.filter[2] : 1;
}

}  // namespace

AmxConvPlan amx_conv_plan(const ConvProblem& p) {
  AmxConvPlan s;
  s.per_run = filter_columns_per_run(p);
  s.taps = p.filter_spatial() / s.per_run;
  s.channel_blocks = (s.per_run * p.cg() + 31) / 32;
  s.depth_groups = s.taps * s.channel_blocks;
  s.panels = (p.kg() + 31) / 32;
  s.ld = p.groups * s.panels * 32;
  s.pixel_blocks = (p.out_spatial() + 31) / 32;
  s.filter_direct = p.w_krsc() && p.cg() % 32 == 0 && s.per_run == 1;
  s.filter_bytes = std::size_t(p.groups * s.panels * s.depth_groups) * 2048;
  const auto l2 = std::size_t(std::max<int64_t>(cpu_features().l2_bytes, int64_t(256) << 10));
  const std::size_t block_input = std::size_t(s.depth_groups) * 2048;  // one block's pixels, all depth groups
  if (s.filter_bytes > l2 / 2) {
    const auto fit = int64_t(std::max<std::size_t>(1, l2 / 2 / block_input));
    s.item_blocks = std::clamp<int64_t>(fit, 1, std::min(AmxConvPlan::most_item_blocks, s.pixel_blocks));
    // Items for every thread first: fewer blocks per item where there are too few.
    while (s.item_blocks > 1 && p.n * ((s.pixel_blocks + s.item_blocks - 1) / s.item_blocks) < p.threads)
      --s.item_blocks;
  }
  const int64_t items = p.n * ((s.pixel_blocks + s.item_blocks - 1) / s.item_blocks);
  s.parts = int(std::max<int64_t>(1, std::min<int64_t>(p.threads, items)));
  s.padded_filter_bytes = s.filter_direct ? 0 : std::size_t(p.k * s.taps * s.channel_blocks * 32) * 2;
  s.table_bytes = WorkspaceCarver::round_up(std::size_t(s.depth_groups) * 32);  // sizeof(AmxBGroup)
  s.stage_bytes = WorkspaceCarver::round_up(std::size_t(s.depth_groups) * 2048);
  s.block_bytes = s.table_bytes + s.stage_bytes + WorkspaceCarver::round_up(std::size_t(32 * s.ld) * 4);
  s.part_bytes = std::size_t(s.item_blocks) * s.block_bytes;
  return s;
}

bool amx_conv_serves(const ConvProblem& p) {
  if (p.op != ConvOp::forward || p.dtype != DType::bf16 || !p.narrow_in_place) return false;
  if (p.isa != Isa::avx512 || !p.x_nhwc() || !p.y_nhwc()) return false;
  const CpuFeatures& f = cpu_features();
  if (!f.amx_bf16 || !f.avx512_bf16 || !amx_ready()) return false;
  // Each run fills whole blocks of 32: below 16 values most of every tile would be padding
  // (ResNet-50's conv1 tap by tap, 3 channels: 4.9 ms here against 1.3 ms staged in f32; its
  // merged rows of 7 x 3 values serve).
  return filter_columns_per_run(p) * p.cg() >= 16;
}

std::size_t amx_conv_workspace_size(const ConvProblem& p) {
  const AmxConvPlan s = amx_conv_plan(p);
  const std::size_t filter =
      p.filter_prepared ? 0 : WorkspaceCarver::round_up(s.filter_bytes) + WorkspaceCarver::round_up(s.padded_filter_bytes);
  return filter + std::size_t(s.parts) * s.part_bytes;
}

}  // namespace strata::dnn::detail
