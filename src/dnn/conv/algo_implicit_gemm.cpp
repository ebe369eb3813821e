// Implicit GEMM: the GEMM engine's packing reads the input tensor directly (tile/conv_operand.hpp),
// so no column buffer exists and no workspace is needed. Forward only; any stride, padding,
// dilation and groups, when the output has contiguous channels (NHWC-like) or contiguous
// pixels (NCHW-like). The fused forward's residual, bias and activation run as a tile
// epilogue on each output tile while it is in cache (no second pass over y). A bf16 forward
// on channels-last tensors runs on AMX tiles where the CPU has them, reading x and w as stored
// (implicit_gemm_amx.hpp).
#include "algorithm.hpp"
#include "common.hpp"
#include "implicit_gemm_amx.hpp"
#include "implicit_gemm_kernel.hpp"
#include "strata/core/status.hpp"

namespace strata::dnn::detail {

namespace {

const ImplicitGemmIsa& isa_entry(Isa isa) {
  static const IsaTable<const ImplicitGemmIsa*> t{&implicit_gemm_portable, &implicit_gemm_avx2, &implicit_gemm_avx512};
  return *t.select(isa);
}

}  // namespace

int64_t implicit_gemm_tile_columns(Isa isa) { return isa_entry(isa).tile_columns; }

namespace {

class ImplicitGemmAlgorithm final : public ConvAlgorithm {
 public:
  ConvAlgo id() const override { return ConvAlgo::implicit_gemm; }
  Support supports(const ConvProblem& p) const override {
    if (p.op != ConvOp::forward) return Support::no("forward only (backward passes use im2col or direct)");
    if (amx_conv_serves(p))
      return Support::yes("bf16 on AMX tiles: 16-pixel runs of x read in place (staged at the padding), "
                          "filter packed into 32-channel panels, y finished per block of 32 pixels");
    if (band_serves(p)) {
      const bool padded = band_panels_outer(p), last = implicit_gemm_channels_last(p);
      return Support::yes(std::string(last ? "output channels contiguous" : "output pixels contiguous") +
                          ": filter x input rows read in place (" +
                          (padded ? "one zero-padded copy of each image, pixel tiles across rows"
                                  : "one zero-padded band of rows per output row") +
                          "), no gather" +
                          (last ? "" : padded ? "; each image's output transposed into place"
                                              : "; each output row transposed into place"));
    }
    if (implicit_gemm_channels_last(p))
      return Support::yes("output channels contiguous: one GEMM per group, filter x gathered input, no column buffer");
    if (implicit_gemm_pixels_first(p))
      return Support::yes("output pixels contiguous: one GEMM per image and group, gathered input x filter^T");
    return Support::no("output is a strided view with neither contiguous channels nor contiguous pixels");
  }
  std::size_t workspace_size(const ConvProblem& p) const override {
    return amx_conv_serves(p) ? amx_conv_workspace_size(p) : 0;
  }
  bool fuses_epilogue(const ConvProblem&) const override { return true; }
  bool reads_narrow_inputs(const ConvProblem& p) const override { return amx_conv_serves(p); }
  double estimated_cost(const ConvProblem& p) const override {
    // On AMX: ~8x the f32 engine's rate (im2col's bf16 route is charged 6x: it also lowers x and
    // packs both operands), the filter packed per call at ~0.3 ns an element.
    if (amx_conv_serves(p))
      return p.flops() / (60e9 * 8 * std::max(1, p.threads)) + double(p.k * p.cg() * p.filter_spatial()) * 0.3e-9;
    // GEMM-engine speed, less the gather on the packed operand (heavier for large filters
    // over few channels, where each packed element is reused least). The band path has no
    // gather (its input rows are read in place): with the penalty, conv1 ranked im2col first,
    // which ran 5.8 ms against the band path's 3.0 (NHWC, batch 1, 1 thread). A 1x1 filter on
    // channels-last input has no window to gather (a strided one reads a strided matrix; from
    // NCHW planes it gathers), and long channel runs amortise a window's gather: with 1.1 for
    // both, the strided 1x1 layers and res5_3x3_s2 with prepared filters ranked im2col first,
    // which ran 1.03-1.4x slower (ResNet-50, batch 1, both layouts).
    // An unprepared filter is packed into the kernel's panels on every call (measured, res5
    // layers: per call implicit GEMM ran 1.1-2.5 ms behind im2col, which multiplies the
    // filter as it lies, for 2.1-2.4 M filter elements).
    // The same 1.03 for a 1x1 filter on channels-last input as for long channel runs: at 1.0
    // it tied with im2col's plain GEMM on the res2 1x1 layers (3136 pixels), where im2col ran
    // 5-10% faster.
    const bool no_window = p.filter_spatial() == 1 && p.x_nhwc();
    const double gather_penalty = band_serves(p)      ? 1.0
                                  : no_window         ? 1.03
                                  : p.cg() < 16       ? 1.6
                                  : p.cg() < 64       ? 1.1
                                                      : 1.03;
    // ~2 ns per filter element: 1 ns more than im2col's handling of the filter as it lies
    // (charged in its estimate), which is what the per-call gap measured.
    const double filter_packing = p.filter_prepared ? 0.0 : double(p.k * p.cg() * p.filter_spatial()) * 2e-9;
    return p.flops() * gather_penalty / (60e9 * std::max(1, p.threads)) + filter_packing;
  }
  // Prepared: the filter packed once into the kernel's panels (the per-call packing of the
  // filter operand disappears; most visible where few pixels reuse a large filter).
  std::size_t prepared_filter_floats(const ConvProblem& p) const override { return isa_entry(p.isa).prepared_floats(p); }
  void prepare_filter(const ConvProblem& p, const float* w, float* out) const override {
    isa_entry(p.isa).prepare(p, w, out);
  }
  std::size_t prepared_narrow_bytes(const ConvProblem& p) const override {
    return amx_conv_serves(p) ? amx_conv_plan(p).filter_bytes : 0;
  }
  void prepare_narrow_filter(const ConvProblem& p, const void* w, void* out) const override {
    amx_conv_prepare_filter(p, w, out);
  }
  void execute(const ConvProblem& p, const ConvArgs& a) const override {
    if (a.x_narrow) return amx_conv_forward(p, a);  // (only handed over where amx_conv_serves)
    isa_entry(p.isa).forward(p, a);
  }
};

}  // namespace

const ConvAlgorithm& implicit_gemm_algorithm() {
  static const ImplicitGemmAlgorithm a;
  return a;
}

}  // namespace strata::dnn::detail
