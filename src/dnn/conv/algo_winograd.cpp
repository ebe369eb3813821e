// Winograd F(2x2,3x3) and F(4x4,3x3) (Lavin & Gray 2016) for 3x3, stride-1, undilated
// convolutions: forward, and backward-data through its stride-1 forward form.
//
// Per group: the filter is transformed once per call into alpha^2 matrices U[xi] (K x C);
// output tiles are processed in blocks of PB tiles (PB fixed by C, never by the thread count):
//   input transform  V[xi] (C x PB)  = B^T d B of each tile's alpha x alpha patch
//   alpha^2 GEMMs    M[xi] (K x PB)  = U[xi] V[xi]           (blas::gemm)
//   output transform y tile          = A^T M A, blended with alpha/beta, edges clipped
// Every output element is computed by the same arithmetic whichever thread owns its block,
// so results are bitwise identical across thread counts.
//
// Accuracy: the transforms scale values by up to 5 (F2: 1) in B and divide by up to 24 in G,
// so rounding grows. Measured on random data against a double reference the error stays
// within 4*k*eps*|x|*|w| (F2) and 16*k*eps*|x|*|w| (F4), k = C*9, where |x|*|w| is the
// convolution of the absolute values; tests/dnn enforce these bounds (docs/dnn.md).
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithm.hpp"
#include "common.hpp"
#include "strata/core/thread_pool.hpp"
#include "winograd_kernels.hpp"

namespace strata::dnn::detail {

namespace {

constexpr int L = kWinogradLanes;

struct Geometry {
  int m, alpha, xi;                  // output tile size, input tile size, alpha^2
  int64_t th, tw, tiles_per_image;   // tiles per (n, d) plane
  int64_t tiles, pb, blocks;         // all tiles, tiles per block, block count
};

// Tiles per block: keep V (alpha^2 x C x PB floats) near 1 MiB; a multiple of the lane count.
Geometry geometry(const ConvProblem& p, int m) {
  Geometry g;
  g.m = m, g.alpha = m + 2, g.xi = g.alpha * g.alpha;
  g.th = (p.out[1] + m - 1) / m, g.tw = (p.out[2] + m - 1) / m;
  g.tiles_per_image = g.th * g.tw;
  g.tiles = p.n * p.out[0] * g.tiles_per_image;
  const int64_t target = (int64_t(1) << 20) / (4 * g.xi * std::max<int64_t>(p.cg(), p.kg()));
  g.pb = std::clamp<int64_t>(target / L * L, 2 * L, 16 * L);
  g.pb = std::min(g.pb, (g.tiles + L - 1) / L * L);
  g.blocks = (g.tiles + g.pb - 1) / g.pb;
  return g;
}

int buffer_sets(const ConvProblem& p, const Geometry& g) { return int(std::min<int64_t>(p.threads, g.blocks)); }

// Channels-last problems (x and y with contiguous channels) keep channels innermost in every
// buffer, so transforms load and store 8 consecutive channels at once; the others put 8
// tiles in the lanes (tiles are contiguous in NCHW rows).
bool channels_last(const ConvProblem& p) { return p.xs[1] == 1 && p.ys[1] == 1; }
int panel_width(const ConvProblem& p, const WinogradKernelSet& set) {
  return channels_last(p) ? set.panel_width_a : set.panel_width;
}

// U: per group and xi, the filter transforms as the products' packed filter operand, in panels
// of the kernel's NR (or, channels-last, MR) output channels; K rounded up to whole panels,
// zero-padded.
int64_t padded_k(const ConvProblem& p, int nr) { return (p.kg() + nr - 1) / nr * nr; }
std::size_t filter_floats(const ConvProblem& p, const Geometry& g, int nr) {
  return std::size_t(p.groups * g.xi * padded_k(p, nr) * p.cg());
}
std::size_t block_floats(const ConvProblem& p, const Geometry& g) {
  return std::size_t(g.xi * g.pb * (p.cg() + p.kg()));  // V and M
}

// Where tile t starts in x and y (element offsets of its top-left corner, padding included).
struct TileOrigin {
  int64_t n, d, h0, w0;  // input row/col of the patch corner (may be negative)
  int64_t oh0, ow0;      // output corner
};
TileOrigin tile_origin(const ConvProblem& p, const Geometry& g, int64_t t) {
  const int64_t img = t / g.tiles_per_image, r = t % g.tiles_per_image;
  TileOrigin o;
  o.n = img / p.out[0], o.d = img % p.out[0];
  o.oh0 = r / g.tw * g.m, o.ow0 = r % g.tw * g.m;
  o.h0 = o.oh0 - p.pad[1], o.w0 = o.ow0 - p.pad[2];
  return o;
}

void transform_filters(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, int nr, const float* w,
                       float* U) {
  const int64_t Kg = p.kg(), Cg = p.cg(), Kp = padded_k(p, nr);
  if (Kp != Kg) std::fill(U, U + filter_floats(p, g, nr), 0.f);  // the padding channels of the last panel
  parallel_for(p.groups * Kg, p.threads, [&](int64_t lo, int64_t hi, int) {
    alignas(32) float gbuf[9 * L], ubuf[36 * L];
    for (int64_t gk = lo; gk < hi; ++gk) {
      const int64_t grp = gk / Kg, k = gk % Kg;
      const float* wk = w + grp * p.ws[0] + k * p.ws[1];
      for (int64_t c0 = 0; c0 < Cg; c0 += L) {
        const int lanes = int(std::min<int64_t>(L, Cg - c0));
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s)
            for (int l = 0; l < L; ++l)
              gbuf[(r * 3 + s) * L + l] = l < lanes ? wk[(c0 + l) * p.ws[2] + r * p.ws[4] + s * p.ws[5]] : 0.f;
        kern.filter(gbuf, ubuf);
        // (xi, k, c) lives in panel k / nr of U[xi], at depth c, lane k % nr.
        float* u = U + (grp * g.xi) * Kp * Cg + k / nr * nr * Cg + c0 * nr + k % nr;
        for (int xi = 0; xi < g.xi; ++xi)
          for (int l = 0; l < lanes; ++l) u[int64_t(xi) * Kp * Cg + l * nr] = ubuf[xi * L + l];
      }
    }
  });
}

// The origins of tiles [t0, t0 + count), found once per block instead of once per channel
// (each costs two divisions).
void tile_origins(const ConvProblem& p, const Geometry& g, int64_t t0, int64_t count, std::vector<TileOrigin>& out) {
  out.resize(std::size_t(count));
  for (int64_t t = 0; t < count; ++t) out[std::size_t(t)] = tile_origin(p, g, t0 + t);
}

// Input transform of channels [c_lo, c_hi) of group `grp` for the tiles of `origins`.
void transform_inputs(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, const float* x,
                      int64_t grp, const std::vector<TileOrigin>& origins, int64_t c_lo, int64_t c_hi, float* V) {
  const int A = g.alpha;
  const int64_t count = int64_t(origins.size());
  const int64_t cols = (count + L - 1) / L * L;
  const int64_t ldh = p.xs[3], ldw = p.xs[4];
  alignas(32) float dbuf[36 * L];
  for (int64_t c = c_lo; c < c_hi; ++c) {
    const float* xc = x + (grp * p.cg() + c) * p.xs[1];
    for (int64_t lane0 = 0; lane0 < cols; lane0 += L) {
      for (int l = 0; l < L; ++l) {
        const int64_t t = lane0 + l;
        if (t >= count) {
          for (int e = 0; e < A * A; ++e) dbuf[e * L + l] = 0.f;
          continue;
        }
        const TileOrigin& o = origins[std::size_t(t)];
        const float* base = xc + o.n * p.xs[0] + o.d * p.xs[2];
        if (o.h0 >= 0 && o.w0 >= 0 && o.h0 + A <= p.in[1] && o.w0 + A <= p.in[2]) {
          const float* patch = base + o.h0 * ldh + o.w0 * ldw;  // interior: no bounds checks
          for (int i = 0; i < A; ++i)
            for (int j = 0; j < A; ++j) dbuf[(i * A + j) * L + l] = patch[i * ldh + j * ldw];
          continue;
        }
        for (int i = 0; i < A; ++i) {
          const int64_t ih = o.h0 + i;
          for (int j = 0; j < A; ++j) {
            const int64_t iw = o.w0 + j;
            dbuf[(i * A + j) * L + l] =
                ih >= 0 && ih < p.in[1] && iw >= 0 && iw < p.in[2] ? base[ih * ldh + iw * ldw] : 0.f;
          }
        }
      }
      kern.input(dbuf, V + c * g.pb + lane0, p.cg() * g.pb);
    }
  }
}

// Output transform of filters [k_lo, k_hi) of group `grp`, blended into y.
void transform_outputs(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, const float* M,
                       int64_t grp, const std::vector<TileOrigin>& origins, int64_t k_lo, int64_t k_hi, float* y,
                       float alpha, float beta) {
  const int m = g.m;
  const int64_t count = int64_t(origins.size());
  alignas(32) float ybuf[16 * L];
  for (int64_t k = k_lo; k < k_hi; ++k) {
    float* yk = y + (grp * p.kg() + k) * p.ys[1];
    for (int64_t lane0 = 0; lane0 < count; lane0 += L) {
      kern.output(M + k * g.pb + lane0, p.kg() * g.pb, ybuf);
      const int lanes = int(std::min<int64_t>(L, count - lane0));
      for (int l = 0; l < lanes; ++l) {
        const TileOrigin& o = origins[std::size_t(lane0 + l)];
        float* base = yk + o.n * p.ys[0] + o.d * p.ys[2] + o.oh0 * p.ys[3] + o.ow0 * p.ys[4];
        const int rows = int(std::min<int64_t>(m, p.out[1] - o.oh0)), cols = int(std::min<int64_t>(m, p.out[2] - o.ow0));
        for (int i = 0; i < rows; ++i)
          for (int j = 0; j < cols; ++j) blend_store(base + i * p.ys[3] + j * p.ys[4], ybuf[(i * m + j) * L + l], alpha, beta);
      }
    }
  }
}

// Channels-last input transform of channels [c_lo, c_hi): V[xi] holds tile t's channels
// contiguously (V + xi * pb * C + t * C + c), lanes are 8 consecutive channels.
void transform_inputs_cl(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, const float* x,
                         int64_t grp, const std::vector<TileOrigin>& origins, int64_t c_lo, int64_t c_hi, float* V) {
  const int A = g.alpha;
  const int64_t Cg = p.cg(), ldh = p.xs[3], ldw = p.xs[4], v_stride = g.pb * Cg;
  alignas(32) float dbuf[36 * L], vbuf[36 * L];
  const float* xg = x + grp * Cg * p.xs[1];
  for (std::size_t t = 0; t < origins.size(); ++t) {
    const TileOrigin& o = origins[t];
    const float* base = xg + o.n * p.xs[0] + o.d * p.xs[2];
    for (int64_t c0 = c_lo; c0 < c_hi; c0 += L) {
      const int lanes = int(std::min<int64_t>(L, c_hi - c0));
      for (int i = 0; i < A; ++i) {
        const int64_t ih = o.h0 + i;
        for (int j = 0; j < A; ++j) {
          const int64_t iw = o.w0 + j;
          float* d = dbuf + (i * A + j) * L;
          if (ih >= 0 && ih < p.in[1] && iw >= 0 && iw < p.in[2]) {
            const float* src = base + ih * ldh + iw * ldw + c0;
            if (lanes == L) std::memcpy(d, src, sizeof(float) * L);
            else for (int l = 0; l < L; ++l) d[l] = l < lanes ? src[l] : 0.f;
          } else {
            std::memset(d, 0, sizeof(float) * L);
          }
        }
      }
      float* v = V + int64_t(t) * Cg + c0;
      if (lanes == L) {
        kern.input(dbuf, v, v_stride);
      } else {  // a partial lane group must not spill into the next tile's channels
        kern.input(dbuf, vbuf, L);
        for (int e = 0; e < A * A; ++e) std::memcpy(v + e * v_stride, vbuf + e * L, sizeof(float) * std::size_t(lanes));
      }
    }
  }
}

// Channels-last output transform of filters [k_lo, k_hi): M[xi] holds tile t's output
// channels contiguously (M + xi * pb * K + t * K + k); lanes are 8 consecutive channels.
void transform_outputs_cl(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, const float* M,
                          int64_t grp, const std::vector<TileOrigin>& origins, int64_t k_lo, int64_t k_hi, float* y,
                          float alpha, float beta) {
  const int m = g.m, A = g.alpha;
  const int64_t Kg = p.kg(), m_stride = g.pb * Kg;
  alignas(32) float mbuf[36 * L], ybuf[16 * L];
  float* yg = y + grp * Kg * p.ys[1];
  for (std::size_t t = 0; t < origins.size(); ++t) {
    const TileOrigin& o = origins[t];
    float* base = yg + o.n * p.ys[0] + o.d * p.ys[2] + o.oh0 * p.ys[3] + o.ow0 * p.ys[4];
    const int rows = int(std::min<int64_t>(m, p.out[1] - o.oh0)), cols = int(std::min<int64_t>(m, p.out[2] - o.ow0));
    for (int64_t k0 = k_lo; k0 < k_hi; k0 += L) {
      const int lanes = int(std::min<int64_t>(L, k_hi - k0));
      const float* mt = M + int64_t(t) * Kg + k0;
      if (lanes == L) {
        kern.output(mt, m_stride, ybuf);
      } else {  // do not read past this tile's channels (the last tile ends the buffer)
        for (int e = 0; e < A * A; ++e)
          for (int l = 0; l < L; ++l) mbuf[e * L + l] = l < lanes ? mt[e * m_stride + l] : 0.f;
        kern.output(mbuf, L, ybuf);
      }
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
          float* dst = base + i * p.ys[3] + j * p.ys[4] + k0;
          const float* src = ybuf + (i * m + j) * L;
          for (int l = 0; l < lanes; ++l) blend_store(dst + l, src[l], alpha, beta);
        }
    }
  }
}

// The alpha^2 products M[xi] = U[xi] V[xi] for xi in [xi_lo, xi_hi), one thread each, on the
// GEMM microkernel with U already in its panels.
void multiply(const ConvProblem& p, const Geometry& g, const WinogradKernelSet& set, const float* U, const float* V,
              float* M, int64_t grp, int64_t count, int xi_lo, int xi_hi) {
  const bool cl = channels_last(p);
  const int64_t Kg = p.kg(), Cg = p.cg(), Kp = padded_k(p, panel_width(p, set)), cols = (count + L - 1) / L * L;
  for (int xi = xi_lo; xi < xi_hi; ++xi) {
    const float* v = V + int64_t(xi) * Cg * g.pb;
    const float* u = U + (grp * g.xi + xi) * Kp * Cg;
    float* mx = M + int64_t(xi) * Kg * g.pb;
    if (cl) set.multiply_channels_last(v, u, mx, count, Kg, Cg);
    else set.multiply(v, u, mx, cols, Kg, Cg, g.pb);
  }
}

void forward(const ConvProblem& p, const ConvArgs& a, int m) {
  const Geometry g = geometry(p, m);
  const WinogradKernelSet& set = winograd_kernels(p.isa);
  const WinogradKernels& kern = m == 4 ? set.f4 : set.f2;
  WorkspaceCarver ws(a.workspace, a.workspace_bytes);
  const float* U = a.prepared_w;  // transformed once by prepare_filter, or now
  if (!U) {
    float* u = ws.take<float>(filter_floats(p, g, panel_width(p, set)));
    transform_filters(p, g, kern, panel_width(p, set), a.w, u);
    U = u;
  }
  const bool cl = channels_last(p);
  auto inputs = [&](int64_t grp, const std::vector<TileOrigin>& o, int64_t lo, int64_t hi, float* V) {
    if (cl) transform_inputs_cl(p, g, kern, a.x, grp, o, lo, hi, V);
    else transform_inputs(p, g, kern, a.x, grp, o, lo, hi, V);
  };
  auto outputs = [&](int64_t grp, const std::vector<TileOrigin>& o, int64_t lo, int64_t hi, const float* M) {
    if (cl) transform_outputs_cl(p, g, kern, M, grp, o, lo, hi, a.y, a.alpha, a.beta);
    else transform_outputs(p, g, kern, M, grp, o, lo, hi, a.y, a.alpha, a.beta);
  };
  const int sets = buffer_sets(p, g);
  float* buffers = ws.take<float>(block_floats(p, g) * std::size_t(sets));

  auto block_range = [&](int64_t b) { return std::pair<int64_t, int64_t>{b * g.pb, std::min(g.pb, g.tiles - b * g.pb)}; };
  if (g.blocks >= p.threads) {
    // Enough blocks: each thread transforms, multiplies and writes back whole blocks.
    parallel_for(g.blocks, p.threads, [&](int64_t lo, int64_t hi, int part) {
      float* V = buffers + std::size_t(part) * block_floats(p, g);
      float* M = V + std::size_t(g.xi * g.pb * p.cg());
      std::vector<TileOrigin> origins;
      for (int64_t b = lo; b < hi; ++b) {
        const auto [t0, count] = block_range(b);
        tile_origins(p, g, t0, count, origins);
        for (int64_t grp = 0; grp < p.groups; ++grp) {
          inputs(grp, origins, 0, p.cg(), V);
          multiply(p, g, set, U, V, M, grp, count, 0, g.xi);
          outputs(grp, origins, 0, p.kg(), M);
        }
      }
    });
    return;
  }
  // Few blocks (small images, batch 1): threads share each block phase by phase.
  float* V = buffers;
  float* M = V + std::size_t(g.xi * g.pb * p.cg());
  std::vector<TileOrigin> origins;
  for (int64_t b = 0; b < g.blocks; ++b) {
    const auto [t0, count] = block_range(b);
    tile_origins(p, g, t0, count, origins);
    for (int64_t grp = 0; grp < p.groups; ++grp) {
      parallel_for(p.cg(), p.threads, [&](int64_t lo, int64_t hi, int) {
        inputs(grp, origins, lo, hi, V);
      });
      parallel_for(g.xi, p.threads, [&](int64_t lo, int64_t hi, int) {
        multiply(p, g, set, U, V, M, grp, count, int(lo), int(hi));
      });
      parallel_for(p.kg(), p.threads, [&](int64_t lo, int64_t hi, int) {
        outputs(grp, origins, lo, hi, M);
      });
    }
  }
}

class WinogradAlgorithm final : public ConvAlgorithm {
 public:
  explicit WinogradAlgorithm(int m) : m_(m) {}
  ConvAlgo id() const override { return m_ == 4 ? ConvAlgo::winograd_4x4_3x3 : ConvAlgo::winograd_2x2_3x3; }

  Support supports(const ConvProblem& p) const override {
    if (p.op == ConvOp::backward_filter) return Support::no("backward-filter is not implemented with Winograd");
    if (p.filter[0] != 1 || p.filter[1] != 3 || p.filter[2] != 3) return Support::no("needs a 3x3 (2-D) filter");
    if (!p.unit_stride()) return Support::no("needs stride 1");
    if (!p.unit_dilation()) return Support::no("needs dilation 1");
    if (p.pad[0] != 0) return Support::no("needs no depth padding");
    if (p.op == ConvOp::backward_data && !backward_data_maps_to_forward(p))
      return Support::no("backward-data needs padding <= 2 to become a forward convolution");
    return Support::yes(m_ == 4 ? "3x3 stride 1: 4x fewer multiplies than direct" : "3x3 stride 1: 2.25x fewer multiplies");
  }

  std::size_t workspace_size(const ConvProblem& p) const override {
    const ConvProblem q = as_forward(p);
    const Geometry g = geometry(q, m_);
    const int width = panel_width(q, winograd_kernels(q.isa));
    const std::size_t filter = p.filter_prepared ? 0 : WorkspaceCarver::round_up(filter_floats(q, g, width) * 4);
    return filter + WorkspaceCarver::round_up(block_floats(q, g) * 4 * std::size_t(buffer_sets(q, g)));
  }

  // Prepared: the alpha^2 transformed filters U, computed once instead of per call (at batch 1
  // on 14x14 and 7x7 images they cost as much as the products themselves).
  std::size_t prepared_filter_floats(const ConvProblem& p) const override {
    return p.op == ConvOp::forward ? filter_floats(p, geometry(p, m_), panel_width(p, winograd_kernels(p.isa))) : 0;
  }
  void prepare_filter(const ConvProblem& p, const float* w, float* out) const override {
    const WinogradKernelSet& set = winograd_kernels(p.isa);
    transform_filters(p, geometry(p, m_), m_ == 4 ? set.f4 : set.f2, panel_width(p, set), w, out);
  }

  double estimated_cost(const ConvProblem& p) const override {
    const ConvProblem q = as_forward(p);
    const Geometry g = geometry(q, m_);
    const double cols = double((g.tiles + L - 1) / L * L);
    // GEMM flops at ~50 GFLOPS/thread (narrower than im2col's), transforms at ~1 ns per
    // element-lane per thread, the filter transform once per call.
    const double gemm = 2.0 * g.xi * double(q.kg() * q.cg() * q.groups) * cols / (50e9 * q.threads);
    const double transforms = (double(q.c) + double(q.k)) * cols * g.xi * 0.25e-9 / q.threads;
    const double filt = double(q.k * q.cg()) * g.xi * 0.5e-9 / q.threads;
    // Depthwise and tiny-channel problems run degenerate GEMMs.
    const double tiny = q.cg() < 8 || q.kg() < 8 ? 8.0 : 1.0;
    return (gemm + transforms) * tiny + filt;
  }

  void execute(const ConvProblem& p, const ConvArgs& a) const override {
    if (p.op == ConvOp::forward) return forward(p, a, m_);
    ConvArgs b = a;  // backward data: dx = forward(dy, flipped transposed w)
    b.x = a.y, b.y = a.x, b.w = backward_data_as_forward_filter(p, a.w);
    forward(backward_data_as_forward(p), b, m_);
  }

 private:
  static ConvProblem as_forward(const ConvProblem& p) {
    return p.op == ConvOp::backward_data ? backward_data_as_forward(p) : p;
  }
  int m_;
};

}  // namespace

const ConvAlgorithm& winograd_2x2_algorithm() {
  static const WinogradAlgorithm a(2);
  return a;
}
const ConvAlgorithm& winograd_4x4_algorithm() {
  static const WinogradAlgorithm a(4);
  return a;
}

}  // namespace strata::dnn::detail
