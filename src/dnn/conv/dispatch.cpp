#include "dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../tensor_access.hpp"
#include "common.hpp"
#include "strata/core/log.hpp"
#include "strata/core/status.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/core/timer.hpp"

namespace strata::dnn::detail {

namespace {

std::string dims_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The layout a non-f32 tensor is staged in: NHWC when the caller's tensor is packed NHWC or a
// view with contiguous channels (a crop of an NHWC tensor stays channels-last), else NCHW.
Layout staged_layout(const TensorDesc& t) {
  const bool channels_inner = t.dim(1) > 1 && t.strides()[1] == 1;
  return t.is_packed(Layout::nhwc) || (channels_inner && !t.is_packed(Layout::nchw)) ? Layout::nhwc : Layout::nchw;
}

std::vector<int64_t> staged_strides(const TensorDesc& t) {
  return TensorDesc::packed(DType::f32, staged_layout(t), t.dims()).strides();
}

// 3-D {n, c, d, h, w} strides from a rank-3..5 tensor's strides (missing dims get stride 0).
std::array<int64_t, 5> expand_strides(const std::vector<int64_t>& s) {
  std::array<int64_t, 5> r{s[0], s[1], 0, 0, 0};
  const std::size_t sr = s.size() - 2;
  for (std::size_t i = 0; i < sr; ++i) r[2 + (3 - sr) + i] = s[2 + i];
  return r;
}

std::size_t f32_bytes(int64_t elements) { return WorkspaceCarver::round_up(std::size_t(elements) * sizeof(float)); }

// Whether a tensor's elements are addressed by its linear index (packed NCHW or NHWC).
bool packed(const TensorDesc& t) { return t.is_packed(Layout::nchw) || t.is_packed(Layout::nhwc); }

// A staged tensor into its f32 copy dst (staged_strides): one conversion when the caller's
// tensor is itself packed that way, else element by element.
void stage_in(DType dt, const TensorDesc& t, const void* src, float* dst) {
  const auto dst_strides = staged_strides(t);
  if (t.strides() == dst_strides) return convert_to_f32(dt, src, dst, t.element_count());
  std::vector<int64_t> offs;
  for_each_element(t.dims(), dst_strides, [&](int64_t o, int64_t) { offs.push_back(o); });
  int64_t i = 0;
  for_each_element(t.dims(), t.strides(), [&](int64_t o, int64_t) { dst[offs[std::size_t(i++)]] = load_f32(dt, src, o); });
}

// The last step of a forward whose y is not the algorithm's own f32 result (a staged type, or an
// epilogue run as a separate pass): v = alpha * conv in f32, plus beta * y or the epilogue,
// stored in y's type. Also the sink of algorithms that read narrow inputs.
class OutputFinisher final : public NarrowOutput {
 public:
  OutputFinisher(DType t, const TensorDesc& y_desc, void* y, float beta, const Epilogue* epi, bool residual_is_y)
      : t_(t), y_desc_(y_desc), y_(y), beta_(beta), epi_(epi), residual_is_y_(residual_is_y) {
    if (epi && epi->bias) bias_stride_ = epi->bias_desc->strides()[1];
  }
  // y's element at offset o (its strides), in channel ch.
  void finish(float v, int64_t o, int64_t ch) const {
    if (!epi_) {
      if (beta_ != 0.f) v += beta_ * load_f32(t_, y_, o);
    } else {
      if (epi_->z && !residual_is_y_) v += epi_->alpha2 * load_f32(t_, epi_->z, o);
      if (epi_->bias) v += load_f32(t_, epi_->bias, ch * bias_stride_);
      v = apply_activation(epi_->act, v);
    }
    store_f32(t_, y_, o, v);
  }
  // Elements [offset, offset + count) of a packed y.
  void store(const float* v, int64_t offset, int64_t count) const override {
    if (!epi_ && beta_ == 0.f)
      return convert_from_f32(t_, v, static_cast<std::byte*>(y_) + std::size_t(offset) * dtype_size(t_), count);
    for (int64_t i = 0; i < count; ++i) finish(v[i], offset + i, packed_channel(y_desc_, offset + i));
  }

 private:
  static int64_t packed_channel(const TensorDesc& t, int64_t i);
  DType t_;
  const TensorDesc& y_desc_;
  void* y_;
  float beta_;
  const Epilogue* epi_;
  bool residual_is_y_;
  int64_t bias_stride_ = 0;
};

// Element (linear index i) of a packed tensor: its channel.
int64_t OutputFinisher::packed_channel(const TensorDesc& t, int64_t i) {
  const int64_t k = t.dim(1);
  if (t.is_packed(Layout::nhwc)) return i % k;
  int64_t spatial = 1;
  for (int r = 2; r < t.rank(); ++r) spatial *= t.dim(r);
  return i / spatial % k;
}

// The logical offset of element 0 of a filter whose spatial strides were negated (flip).
int64_t flip_offset(const ConvProblem& p) {
  return (p.filter[0] - 1) * -p.ws[3] + (p.filter[1] - 1) * -p.ws[4] + (p.filter[2] - 1) * -p.ws[5];
}

}  // namespace

// Elements from the filter's first stored element to logical element 0.
static int64_t origin_offset(const ConvProblem& p) {
  return p.ws[3] < 0 || p.ws[4] < 0 || p.ws[5] < 0 ? flip_offset(p) : 0;
}

const float* filter_origin(const ConvProblem& p, const float* w) { return w + origin_offset(p); }
const uint16_t* filter_origin(const ConvProblem& p, const uint16_t* w) { return w + origin_offset(p); }

ConvProblem make_problem(const Handle& h, const ConvDescs& d) {
  const int sr = d.conv.spatial_rank();
  check_arg(d.x.spatial_rank() == sr, d.x_name(), [&] {
    return std::string(d.x_name()) + " has " + std::to_string(d.x.spatial_rank()) +
           " spatial dimensions, the convolution descriptor " + std::to_string(sr);
  });
  check_arg(d.y.spatial_rank() == sr, d.y_name(), [&] {
    return std::string(d.y_name()) + " has " + std::to_string(d.y.spatial_rank()) +
           " spatial dimensions, the convolution descriptor " + std::to_string(sr);
  });
  check_arg(d.w.dtype() == d.x.dtype(), d.w_name(), [&] {
    return std::string(d.w_name()) + " is " + std::string(dtype_name(d.w.dtype())) + " but " + d.x_name() + " is " +
           std::string(dtype_name(d.x.dtype())) + "; all tensors of one call share a dtype";
  });
  check_arg(d.y.dtype() == d.x.dtype(), d.y_name(), [&] {
    return std::string(d.y_name()) + " is " + std::string(dtype_name(d.y.dtype())) + " but " + d.x_name() + " is " +
           std::string(dtype_name(d.x.dtype())) + "; all tensors of one call share a dtype";
  });
  std::vector<int64_t> out;
  try {
    out = conv_output_dims(d.x, d.w, d.conv);
  } catch (const Error& e) {
    // Re-name the argument as this operation calls it ("dw" rather than "w").
    const std::string arg = e.argument() == "w" ? d.w_name() : e.argument() == "x" ? d.x_name() : e.argument();
    throw Error(e.status(), arg, e.what());
  }
  check_arg(d.y.dims() == out, d.y_name(), [&] {
    return std::string(d.y_name()) + " has dims " + dims_str(d.y.dims()) + " but the convolution of " + d.x_name() +
           " " + dims_str(d.x.dims()) + " with " + d.w_name() + " " + dims_str(d.w.dims()) + " gives " + dims_str(out);
  });

  ConvProblem p;
  p.op = d.op;
  p.spatial_rank = sr;
  p.dtype = d.x.dtype();
  p.n = d.x.dim(0), p.c = d.x.dim(1), p.k = d.w.dim(0), p.groups = d.conv.groups();
  const int off = 3 - sr;
  for (int i = 0; i < sr; ++i) {
    const auto si = std::size_t(i);
    p.in[off + i] = d.x.dim(2 + i);
    p.out[off + i] = d.y.dim(2 + i);
    p.filter[off + i] = d.w.dim(2 + i);
    p.pad[off + i] = d.conv.pads()[si];
    p.stride[off + i] = d.conv.strides()[si];
    p.dilation[off + i] = d.conv.dilations()[si];
  }
  const bool staged = p.dtype != DType::f32;
  p.narrow_in_place =
      (p.dtype == DType::bf16 || p.dtype == DType::f16) && p.op == ConvOp::forward && packed(d.x) && packed(d.y);
  p.xs = expand_strides(staged ? staged_strides(d.x) : d.x.strides());
  p.ys = expand_strides(staged ? staged_strides(d.y) : d.y.strides());
  const std::vector<int64_t> wst = d.w.strides();
  const std::array<int64_t, 5> w5 = expand_strides(wst);
  p.ws = {p.kg() * w5[0], w5[0], w5[1], w5[2], w5[3], w5[4]};
  if (d.conv.mode() == ConvMode::convolution) p.ws[3] = -p.ws[3], p.ws[4] = -p.ws[4], p.ws[5] = -p.ws[5];
  p.threads = h.num_threads();
  p.deterministic = h.deterministic();
  p.isa = h.isa();
  return p;
}

bool reads_narrow(const ConvProblem& p, ConvAlgo algo) {
  return p.narrow_in_place && conv_algorithm(algo).reads_narrow_inputs(p);
}

bool staged_filter_prepared(const ConvProblem& p, ConvAlgo algo) {
  return p.dtype != DType::f32 && p.op == ConvOp::forward && p.filter_prepared && !reads_narrow(p, algo) &&
         conv_algorithm(algo).prepared_filter_floats(p) > 0;
}

std::size_t staging_bytes(const ConvProblem& p, const ConvDescs& d, ConvAlgo algo) {
  if (p.dtype == DType::f32) return 0;
  if (reads_narrow(p, algo)) return 0;
  const std::size_t w = staged_filter_prepared(p, algo) ? 0 : f32_bytes(d.w.element_count());
  return f32_bytes(d.x.element_count()) + w + f32_bytes(d.y.element_count());
}

std::size_t required_workspace(const ConvProblem& p, const ConvDescs& d, ConvAlgo algo) {
  const ConvAlgorithm& a = conv_algorithm(algo);
  const Support s = a.supports(p);
  if (!s.ok)
    throw_error(Status::not_supported, "algo",
                std::string(conv_algo_name(algo)) + " cannot compute this problem: " + s.reason);
  return WorkspaceCarver::round_up(a.workspace_size(p)) + staging_bytes(p, d, algo);
}

float scalar_arg(const void* p, const char* name) {
  check_arg(p != nullptr, name, [&] { return std::string(name) + " is null (it points to a float)"; });
  return *static_cast<const float*>(p);
}

void check_algo(ConvAlgo a) {
  check_arg(int(a) >= 0 && int(a) < conv_algo_count, "algo",
            [&] { return "unknown ConvAlgo value " + std::to_string(int(a)); });
}

bool narrow_preparable(const ConvProblem& p, ConvAlgo algo) {
  return reads_narrow(p, algo) && conv_algorithm(algo).prepared_narrow_bytes(p) > 0;
}

AlignedArray<float> prepare_filter_data(const ConvProblem& p, ConvAlgo algo, const void* stored) {
  const ConvAlgorithm& a = conv_algorithm(algo);
  if (p.dtype != DType::f32 && reads_narrow(p, algo)) {
    if (!narrow_preparable(p, algo)) return {};
    const std::size_t bytes = a.prepared_narrow_bytes(p);
    AlignedArray<float> out = make_aligned_long_lived<float>((bytes + 3) / 4);
    a.prepare_narrow_filter(p, filter_origin(p, static_cast<const uint16_t*>(stored)), out.get());
    return out;
  }
  const std::size_t floats = a.prepared_filter_floats(p);
  if (floats == 0) return {};
  // A staged call computes on the widened filter (exact), so its prepared form is the f32 one
  // of that: the per-call widening and packing of a large filter go (res5 3x3, 2.4 M elements
  // against 49 pixels, was 2.6x slower in bf16 than in f32 on a CPU without AMX).
  std::vector<float> widened;
  const auto* w = static_cast<const float*>(stored);
  if (p.dtype != DType::f32) {
    widened.resize(std::size_t(p.k * p.cg() * p.filter_spatial()));
    convert_to_f32(p.dtype, stored, widened.data(), int64_t(widened.size()));
    w = widened.data();
  }
  AlignedArray<float> out = make_aligned_long_lived<float>(floats);  // streamed by every call
  a.prepare_filter(p, filter_origin(p, w), out.get());
  return out;
}

void check_activation(Activation act) {
  check_arg(act == Activation::identity || act == Activation::relu || act == Activation::relu6 ||
                act == Activation::sigmoid || act == Activation::tanh,
            "act", "unknown Activation value");
}

float apply_activation(Activation a, float v) {
  switch (a) {
    case Activation::identity: return v;
    case Activation::relu: return v > 0.f ? v : 0.f;
    case Activation::relu6: return v < 0.f ? 0.f : v > 6.f ? 6.f : v;
    case Activation::sigmoid: return 1.f / (1.f + std::exp(-v));
    case Activation::tanh: return std::tanh(v);
  }
  return v;
}

void run_convolution(const Handle& h, const ConvProblem& p, const ConvDescs& d, ConvAlgo algo, const void* x,
                     const void* w, const void* y, float alpha, float beta, void* workspace,
                     std::size_t workspace_bytes, const Epilogue* epi, const char* why, const float* prepared) {
  (void)h;  // the problem already carries the handle's threads, ISA and determinism
  // ---- every check before the first write ----
  const std::size_t need = required_workspace(p, d, algo);
  if (workspace_bytes < need)
    throw_error(Status::insufficient_workspace, "workspace_bytes",
                std::string(conv_algo_name(algo)) + " needs " + std::to_string(need) + " bytes of workspace, got " +
                    std::to_string(workspace_bytes));
  check_arg(need == 0 || workspace != nullptr, "workspace",
            [&] { return "workspace is null but " + std::to_string(need) + " bytes are needed"; });
  check_arg(d.x.element_count() == 0 || x != nullptr, d.x_name(), [&] { return std::string(d.x_name()) + " is null"; });
  check_arg(d.w.element_count() == 0 || w != nullptr, d.w_name(), [&] { return std::string(d.w_name()) + " is null"; });
  check_arg(d.y.element_count() == 0 || y != nullptr, d.y_name(), [&] { return std::string(d.y_name()) + " is null"; });
  if (epi && epi->bias) {
    const TensorDesc& b = *epi->bias_desc;
    std::vector<int64_t> want(std::size_t(d.y.rank()), 1);
    want[1] = p.k;
    check_arg(b.dims() == want, "bias",
              [&] { return "bias must have dims " + dims_str(want) + ", got " + dims_str(b.dims()); });
    check_arg(b.dtype() == d.y.dtype(), "bias", "bias must have y's dtype");
  }

  const int64_t dest_count =
      p.op == ConvOp::forward ? d.y.element_count() : p.op == ConvOp::backward_data ? d.x.element_count() : d.w.element_count();
  if (dest_count == 0) return;

  const Timer timer;
  const bool staged = p.dtype != DType::f32;
  const bool narrow_inputs = reads_narrow(p, algo);  // x and w read as stored, y finished through the sink
  WorkspaceCarver carve(workspace, workspace_bytes);
  void* algo_ws = carve.take<std::byte>(conv_algorithm(algo).workspace_size(p));

  // The f32 views the algorithm works on.
  float* fx = static_cast<float*>(const_cast<void*>(x));
  float* fw = static_cast<float*>(const_cast<void*>(w));
  float* fy = static_cast<float*>(const_cast<void*>(y));
  const std::vector<int64_t> wstrides = d.w.strides();
  if (narrow_inputs) {
    fx = fw = fy = nullptr;
  } else if (staged) {
    const bool w_prepared = staged_filter_prepared(p, algo);  // the algorithm reads `prepared`, f32 already
    float* sx = carve.take<float>(std::size_t(d.x.element_count()));
    float* sw = w_prepared ? const_cast<float*>(prepared) : carve.take<float>(std::size_t(d.w.element_count()));
    float* sy = carve.take<float>(std::size_t(d.y.element_count()));
    if (p.op != ConvOp::backward_data) stage_in(p.dtype, d.x, x, sx);
    if (p.op != ConvOp::forward) stage_in(p.dtype, d.y, y, sy);
    if (p.op != ConvOp::backward_filter && !w_prepared) convert_to_f32(p.dtype, w, sw, d.w.element_count());
    fx = sx, fw = sw, fy = sy;
  }

  // f32 calls with an epilogue on an algorithm that fuses it: residual, bias and activation
  // are applied per output tile inside the algorithm. Otherwise staged calls and calls with an
  // epilogue compute the plain convolution first and blend afterwards; plain f32 calls blend
  // inside the algorithm (beta == 0 never reads the output).
  const bool fused = epi && !staged && conv_algorithm(algo).fuses_epilogue(p);
  const bool blend_later = !narrow_inputs && (staged || (epi && !fused));
  float a_beta = beta;
  const bool residual_is_y = epi && epi->z && epi->z == y && !staged;
  if (epi || staged) a_beta = residual_is_y ? epi->alpha2 : 0.f;
  const OutputFinisher finisher(p.dtype, d.y, const_cast<void*>(y), beta, epi, residual_is_y);
  ConvEpilogue tile_epi;
  std::vector<float> bias_f32;
  if (fused) {
    if (epi->z && !residual_is_y) {
      tile_epi.z = static_cast<const float*>(epi->z);
      tile_epi.alpha2 = epi->alpha2;
    }
    if (epi->bias) {  // K contiguous values, whatever the bias descriptor's strides
      const int64_t bs = epi->bias_desc->strides()[1];
      bias_f32.resize(std::size_t(p.k));
      for (int64_t c = 0; c < p.k; ++c) bias_f32[std::size_t(c)] = static_cast<const float*>(epi->bias)[c * bs];
      tile_epi.bias = bias_f32.data();
    }
    tile_epi.act = epi->act;
  }

  ConvArgs args;
  args.epilogue = fused ? &tile_epi : nullptr;
  args.x = fx;
  args.w = fw ? const_cast<float*>(filter_origin(p, fw)) : nullptr;
  if (narrow_inputs) {  // w_narrow addresses logical element 0, as args.w does (filter_origin)
    args.x_narrow = x;
    args.narrow_out = &finisher;
    args.w_narrow = filter_origin(p, static_cast<const uint16_t*>(w));
  }
  args.prepared_w = prepared;
  args.y = fy;
  args.alpha = alpha;
  args.beta = a_beta;
  args.workspace = algo_ws;
  args.workspace_bytes = conv_algorithm(algo).workspace_size(p);

  const bool empty_reduction = p.op == ConvOp::backward_filter && p.n * p.out_spatial() == 0;
  if (empty_reduction) {
    // dw = alpha * (empty sum) + beta * dw.
    for (int64_t i = 0; i < d.w.element_count(); ++i) {
      float* v = fw + i;
      *v = a_beta == 0.f ? 0.f : a_beta * *v;
    }
  } else {
    conv_algorithm(algo).execute(p, args);
  }

  // ---- staged stores and the epilogue ----
  if (p.op == ConvOp::forward && blend_later) {
    const auto fy_strides = staged ? staged_strides(d.y) : d.y.strides();
    const int64_t count = d.y.element_count();
    if (fy_strides == d.y.strides() && packed(d.y)) {  // both by linear index
      finisher.store(fy, 0, count);
    } else {
      std::vector<int64_t> f_offs;
      f_offs.reserve(std::size_t(count));
      for_each_element(d.y.dims(), fy_strides, [&](int64_t o, int64_t) { f_offs.push_back(o); });
      int64_t i = 0;
      for_each_element(d.y.dims(), d.y.strides(),
                       [&](int64_t o, int64_t ch) { finisher.finish(fy[f_offs[std::size_t(i++)]], o, ch); });
    }
  } else if (staged && p.op == ConvOp::backward_data) {
    const auto s = staged_strides(d.x);
    std::vector<int64_t> f_offs;
    for_each_element(d.x.dims(), s, [&](int64_t o, int64_t) { f_offs.push_back(o); });
    int64_t i = 0;
    for_each_element(d.x.dims(), d.x.strides(), [&](int64_t o, int64_t) {
      float v = fx[f_offs[std::size_t(i++)]];
      if (beta != 0.f) v += beta * load_f32(p.dtype, x, o);
      store_f32(p.dtype, const_cast<void*>(x), o, v);
    });
  } else if (staged && p.op == ConvOp::backward_filter) {
    for (int64_t i = 0; i < d.w.element_count(); ++i) {
      float v = fw[i];
      if (beta != 0.f) v += beta * load_f32(p.dtype, w, i);
      store_f32(p.dtype, const_cast<void*>(w), i, v);
    }
  }

  if (verbose(1)) {
    std::string line = cat("conv ", p.str(), " t", p.threads, p.deterministic ? " det" : " fast", " algo=",
                           conv_algo_name(algo), " (", why, ")", prepared ? " filter=prepared" : "");
    if (epi) line += fused ? " epilogue=fused-in-tiles" : " epilogue=separate-pass";
    if (staged) line += narrow_inputs ? " inputs=as-stored" : " inputs=staged-f32";
    if (verbose(2)) line += cat(" time_ms=", timer.seconds() * 1e3, " gflops=", p.flops() / timer.seconds() * 1e-9);
    verbose_write("dnn", line);
  }
}

}  // namespace strata::dnn::detail
