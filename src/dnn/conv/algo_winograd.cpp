// Winograd F(2x2,3x3) and F(4x4,3x3) (Lavin & Gray 2016) for 3x3, stride-1, undilated
// convolutions: forward, and backward-data through its stride-1 forward form.
//
// Everything runs channels-last: tensors whose channels are not contiguous (NCHW) are staged
// through channels-last copies in the workspace, which costs one pass over x and y and lets
// every transform load and store 8 consecutive channels at once.
// Per group: the filter is transformed into alpha^2 matrices U[xi] (K x C), stored as one of
// the GEMM microkernel's packed operands (once per call, or once for all with a prepared
// filter); output tiles are processed in blocks of PB tiles (PB fixed by C, never by the
// thread count):
//   input transform  V[xi] (C x PB)  = B^T d B of each tile's alpha x alpha patch
//   alpha^2 GEMMs    M[xi] (K x PB)  = U[xi] V[xi]          (the tile engine)
//   output transform y tile          = A^T M A, blended with alpha/beta, edges clipped
// The products run in one of two orientations, fixed per problem with U's layout:
//   tiles as columns  M = U V, U as packed A panels: blocks of many tiles.
//   tiles as rows     M^T = V^T U^T, U as packed B panels: blocks of few tiles (small images
//                     at small batch), where whole row panels of tiles pad less than column
//                     tiles do and U, the bulk of the data, streams through once per block
//                     (res5's 7x7 images at batch 1: 16 tiles are exactly one 16-row panel,
//                     but 6 + 6 + 4 columns).
// Every output element is computed by the same arithmetic whichever thread owns its block,
// so results are bitwise identical across thread counts.
//
// Accuracy: the transforms scale values by up to 5 (F2: 1) in B and divide by up to 24 in G,
// so rounding grows. Measured on random data against a double reference the error stays
// within 4*k*eps*|x|*|w| (F2) and 16*k*eps*|x|*|w| (F4), k = C*9, where |x|*|w| is the
// convolution of the absolute values; tests/dnn enforce these bounds (docs/dnn.md).
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "algorithm.hpp"
#include "common.hpp"
#include "strata/core/thread_pool.hpp"
#include "transpose_blocks.hpp"
#include "winograd_kernels.hpp"

namespace strata::dnn::detail {

namespace {

constexpr int L = kWinogradLanes;

struct Geometry {
  int m, alpha, xi;                  // output tile size, input tile size, alpha^2
  int64_t th, tw, tiles_per_image;   // tiles per (n, d) plane
  int64_t tiles, pb, blocks;         // all tiles, tiles per block, block count
  bool tiles_as_rows = false;        // the products' orientation (header comment)
};

// Tiles per block: keep V (alpha^2 x C x PB floats) near 1 MiB; a multiple of the lane count.
// Where all of U fits in 1 MiB, near half of that: each block re-reads U, cheaply when it is
// small, and V and M (as large) then stay in L2 between the transforms and the products
// (res2_3x3, 576 KiB of U: 1.09-1.14x; res3_3x3, 2.3 MiB of U, ran 0.92-0.98x with the
// smaller blocks).
Geometry geometry(const ConvProblem& p, int m) {
  Geometry g;
  g.m = m, g.alpha = m + 2, g.xi = g.alpha * g.alpha;
  g.th = (p.out[1] + m - 1) / m, g.tw = (p.out[2] + m - 1) / m;
  g.tiles_per_image = g.th * g.tw;
  g.tiles = p.n * p.out[0] * g.tiles_per_image;
  const int64_t u_bytes = 4 * g.xi * p.cg() * p.kg();
  const int64_t v_bytes = u_bytes <= (int64_t(1) << 20) ? int64_t(1) << 19 : int64_t(1) << 20;
  const int64_t target = v_bytes / (4 * g.xi * std::max<int64_t>(p.cg(), p.kg()));
  g.pb = std::clamp<int64_t>(target / L * L, 2 * L, 16 * L);
  g.pb = std::min(g.pb, (g.tiles + L - 1) / L * L);
  g.blocks = (g.tiles + g.pb - 1) / g.pb;
  return g;
}

// U's panel width in the orientation g holds.
int u_width(const WinogradKernelSet& set, const Geometry& g) {
  return g.tiles_as_rows ? set.panel_width_b : set.panel_width_a;
}

// Tiles as rows for blocks of at most four row panels whose tiles and output channels, padded
// to whole panels, make a smaller product that way round.
bool prefers_tiles_as_rows(const ConvProblem& p, const Geometry& g, const WinogradKernelSet& set) {
  const int64_t cols = std::min(g.pb, g.tiles);
  const int mr = set.panel_width_a, nr = set.panel_width_b;
  if (cols > 4 * mr) return false;
  auto pad = [](int64_t x, int64_t w) { return (x + w - 1) / w * w; };
  return pad(cols, mr) * pad(p.kg(), nr) < pad(cols, nr) * pad(p.kg(), mr);
}

// The geometry with the orientation an unprepared call on p takes.
Geometry oriented_geometry(const ConvProblem& p, int m) {
  Geometry g = geometry(p, m);
  g.tiles_as_rows = prefers_tiles_as_rows(p, g, winograd_kernels(p.isa));
  return g;
}

// A prepared filter starts with a header (64 bytes, so U stays aligned) naming its orientation:
// a filter prepared on one problem serves calls with other batch and image sizes, whose own
// choice may differ (then the result equals the unprepared call's up to summation order: edge
// tiles add their steps in chains, tile::MicroKernel::chains).
constexpr std::size_t kPreparedHeaderFloats = 16;

int buffer_sets(const ConvProblem& p, const Geometry& g) { return int(std::min<int64_t>(p.threads, g.blocks)); }

// Channels are contiguous in x and y as given; otherwise the call stages them (staged_x/y).
bool staged_x(const ConvProblem& p) { return p.xs[1] != 1; }
bool staged_y(const ConvProblem& p) { return p.ys[1] != 1; }
// Workspace bytes of the staged copies (each carved separately, so each rounded up).
std::size_t staging_bytes(const ConvProblem& p) {
  std::size_t b = 0;
  if (staged_x(p)) b += WorkspaceCarver::round_up(std::size_t(p.n * p.c * p.in_spatial()) * sizeof(float));
  if (staged_y(p)) b += WorkspaceCarver::round_up(std::size_t(p.n * p.k * p.out_spatial()) * sizeof(float));
  return b;
}

// U: per group and xi, the filter transforms as the products' packed A (or B) operand, in
// panels of the kernel's MR (or NR) output channels; K rounded up to whole panels, zero-padded.
int64_t padded_k(const ConvProblem& p, int mr) { return (p.kg() + mr - 1) / mr * mr; }
std::size_t filter_floats(const ConvProblem& p, const Geometry& g, int mr) {
  return std::size_t(p.groups * g.xi * padded_k(p, mr) * p.cg());
}
// Floats between V's (and M's) alpha^2 matrices: a line more than one matrix, so that the
// alpha^2 stores of one patch's transform (the loads of one tile's) fall in different L1 sets.
// At the bare size, a multiple of 4 KiB from 128 channels up, all 36 of F(4x4) shared one set
// of 12 ways and missed L1 on every access. In-process (NHWC, prepared filters): res2_3x3
// 1.04-1.06x, res3_3x3 1.00-1.03x, res4_3x3 1.02x, res5_3x3 1.00-1.02x at batch 1 and 8, on 1
// and 2 threads, NCHW alike.
int64_t v_xi_stride(const ConvProblem& p, const Geometry& g) { return g.pb * p.cg() + 16; }
int64_t m_xi_stride(const ConvProblem& p, const Geometry& g) { return g.pb * p.kg() + 16; }
std::size_t block_floats(const ConvProblem& p, const Geometry& g) {
  return std::size_t(g.xi * (v_xi_stride(p, g) + m_xi_stride(p, g)));  // V and M
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

void transform_filters(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, int mr, const float* w,
                       float* U) {
  const int64_t Kg = p.kg(), Cg = p.cg(), Kp = padded_k(p, mr);
  if (Kp != Kg) std::fill(U, U + filter_floats(p, g, mr), 0.f);  // the padding channels of the last panel
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
        // (xi, k, c) lives in panel k / mr of U[xi], at depth c, lane k % mr.
        float* u = U + (grp * g.xi) * Kp * Cg + k / mr * mr * Cg + c0 * mr + k % mr;
        for (int xi = 0; xi < g.xi; ++xi)
          for (int l = 0; l < lanes; ++l) u[int64_t(xi) * Kp * Cg + l * mr] = ubuf[xi * L + l];
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

// Input transform of channels [c_lo, c_hi): V[xi] holds tile t's channels contiguously
// (V + xi * v_xi_stride + t * C + c), lanes are 8 consecutive channels.
void transform_inputs(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, const float* x,
                      int64_t grp, const std::vector<TileOrigin>& origins, int64_t c_lo, int64_t c_hi, float* V) {
  const int A = g.alpha;
  const int64_t Cg = p.cg(), ldh = p.xs[3], ldw = p.xs[4], v_stride = v_xi_stride(p, g);
  alignas(32) float dbuf[36 * L], vbuf[36 * L];
  const float* xg = x + grp * Cg * p.xs[1];
  for (std::size_t t = 0; t < origins.size(); ++t) {
    const TileOrigin& o = origins[t];
    const float* base = xg + o.n * p.xs[0] + o.d * p.xs[2];
    // The patch's rows and columns inside the image, read where they lie (the rest is padding),
    // all whole lane groups in one call.
    const PatchWindow win{int(std::clamp<int64_t>(-o.h0, 0, A)), int(std::clamp<int64_t>(p.in[1] - o.h0, 0, A)),
                          int(std::clamp<int64_t>(-o.w0, 0, A)), int(std::clamp<int64_t>(p.in[2] - o.w0, 0, A))};
    const bool any = win.r0 < win.r1 && win.c0 < win.c1;
    const float* first = any ? base + (o.h0 + win.r0) * ldh + (o.w0 + win.c0) * ldw : base;
    const int64_t groups = (c_hi - c_lo) / L, c0 = c_lo + groups * L;
    float* vt = V + int64_t(t) * Cg;
    kern.input(first + c_lo, ldh, ldw, win, groups, vt + c_lo, v_stride);
    if (c0 == c_hi) continue;
    // A partial last group goes through a zero-filled copy of its lanes: nothing past the
    // group's channels is read, and its V lanes are copied out so that none past them is written.
    const int lanes = int(c_hi - c0);
    std::fill(dbuf, dbuf + A * A * L, 0.f);
    for (int i = win.r0; i < win.r1; ++i)
      for (int j = win.c0; j < win.c1; ++j)
        std::memcpy(dbuf + (i * A + j) * L, first + (i - win.r0) * ldh + (j - win.c0) * ldw + c0,
                    sizeof(float) * std::size_t(lanes));
    kern.input(dbuf, A * L, L, PatchWindow{0, A, 0, A}, 1, vbuf, L);
    for (int e = 0; e < A * A; ++e) std::memcpy(vt + c0 + e * v_stride, vbuf + e * L, sizeof(float) * std::size_t(lanes));
  }
}

// The output transform of 8 lanes of M at mt (the xi-th values at mt + xi * m_stride); a partial
// group of lanes goes through a zero-padded copy, so nothing past its valid lanes is read (the
// last tile ends the buffer; rows past a block's tiles were never written).
void output_lanes(const WinogradKernels& kern, const Geometry& g, const float* mt, int64_t m_stride, int lanes,
                  float* ybuf) {
  const PatchWindow all{0, g.m, 0, g.m};
  if (lanes == L) return kern.output(mt, m_stride, 1, ybuf, g.m * L, L, all, 1.f, 0.f);
  alignas(32) float mbuf[36 * L];
  for (int e = 0; e < g.xi; ++e)
    for (int l = 0; l < L; ++l) mbuf[e * L + l] = l < lanes ? mt[e * m_stride + l] : 0.f;
  kern.output(mbuf, L, 1, ybuf, g.m * L, L, all, 1.f, 0.f);
}

// Where tile o's outputs start in y (channel 0 of its top-left pixel) and how many of its
// rows and columns lie inside the image.
struct TileOutput {
  float* base;
  int rows, cols;
};
TileOutput tile_output(const ConvProblem& p, const Geometry& g, const TileOrigin& o, float* yg) {
  return {yg + o.n * p.ys[0] + o.d * p.ys[2] + o.oh0 * p.ys[3] + o.ow0 * p.ys[4],
          int(std::min<int64_t>(g.m, p.out[1] - o.oh0)), int(std::min<int64_t>(g.m, p.out[2] - o.ow0))};
}

// Output transform of filters [k_lo, k_hi), tiles as columns: M[xi] holds tile t's output
// channels contiguously (M + xi * m_xi_stride + t * K + k); lanes are 8 consecutive channels.
void transform_outputs_tiles_as_columns(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern,
                                        const float* M, int64_t grp, const std::vector<TileOrigin>& origins,
                                        int64_t k_lo, int64_t k_hi, float* y, float alpha, float beta) {
  const int64_t Kg = p.kg(), m_stride = m_xi_stride(p, g);
  alignas(32) float ybuf[16 * L];
  float* yg = y + grp * Kg * p.ys[1];
  for (std::size_t t = 0; t < origins.size(); ++t) {
    const TileOutput out = tile_output(p, g, origins[t], yg);
    // The tile's part inside the output written in place, all whole lane groups in one call;
    // a partial last group through a buffer.
    const int64_t groups = (k_hi - k_lo) / L;
    kern.output(M + int64_t(t) * Kg + k_lo, m_stride, groups, out.base + k_lo, p.ys[3], p.ys[4],
                PatchWindow{0, out.rows, 0, out.cols}, alpha, beta);
    for (int64_t k0 = k_lo + groups * L; k0 < k_hi; k0 += L) {
      const int lanes = int(std::min<int64_t>(L, k_hi - k0));
      output_lanes(kern, g, M + int64_t(t) * Kg + k0, m_stride, lanes, ybuf);
      for (int i = 0; i < out.rows; ++i)
        for (int j = 0; j < out.cols; ++j) {
          float* dst = out.base + i * p.ys[3] + j * p.ys[4] + k0;
          const float* src = ybuf + (i * g.m + j) * L;
          for (int l = 0; l < lanes; ++l) blend_store(dst + l, src[l], alpha, beta);
        }
    }
  }
}

// The same with tiles as rows: M[xi] holds channel k's tiles contiguously
// (M + xi * m_xi_stride + k * pb + t), so lanes are 8 consecutive tiles of one channel, each lane's
// outputs stored to its own tile.
void transform_outputs_tiles_as_rows(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern,
                                     const float* M, int64_t grp, const std::vector<TileOrigin>& origins,
                                     int64_t k_lo, int64_t k_hi, float* y, float alpha, float beta) {
  const int64_t m_stride = m_xi_stride(p, g), count = int64_t(origins.size());
  alignas(32) float ybuf[16 * L];
  float* yg = y + grp * p.kg() * p.ys[1];
  for (int64_t t0 = 0; t0 < count; t0 += L) {
    const int lanes = int(std::min<int64_t>(L, count - t0));
    for (int64_t k = k_lo; k < k_hi; ++k) {
      output_lanes(kern, g, M + k * g.pb + t0, m_stride, lanes, ybuf);
      for (int l = 0; l < lanes; ++l) {
        const TileOutput out = tile_output(p, g, origins[std::size_t(t0 + l)], yg);
        for (int i = 0; i < out.rows; ++i)
          for (int j = 0; j < out.cols; ++j)
            blend_store(out.base + i * p.ys[3] + j * p.ys[4] + k, ybuf[(i * g.m + j) * L + l], alpha, beta);
      }
    }
  }
}

void transform_outputs(const ConvProblem& p, const Geometry& g, const WinogradKernels& kern, const float* M,
                       int64_t grp, const std::vector<TileOrigin>& origins, int64_t k_lo, int64_t k_hi, float* y,
                       float alpha, float beta) {
  if (g.tiles_as_rows) transform_outputs_tiles_as_rows(p, g, kern, M, grp, origins, k_lo, k_hi, y, alpha, beta);
  else transform_outputs_tiles_as_columns(p, g, kern, M, grp, origins, k_lo, k_hi, y, alpha, beta);
}

// The alpha^2 products M[xi] = U[xi] V[xi] for xi in [xi_lo, xi_hi), one thread each, on the
// GEMM microkernel with U already in its panels.
void multiply(const ConvProblem& p, const Geometry& g, const WinogradKernelSet& set, const float* U, const float* V,
              float* M, int64_t grp, int64_t count, int xi_lo, int xi_hi) {
  const int64_t Kg = p.kg(), Cg = p.cg(), Kp = padded_k(p, u_width(set, g));
  for (int xi = xi_lo; xi < xi_hi; ++xi) {
    const float* v = V + int64_t(xi) * v_xi_stride(p, g);
    const float* u = U + (grp * g.xi + xi) * Kp * Cg;
    float* m = M + int64_t(xi) * m_xi_stride(p, g);
    if (g.tiles_as_rows) set.multiply_tiles_as_rows(v, u, m, g.pb, count, Kg, Cg);
    else set.multiply_channels_last(v, u, m, count, Kg, Cg);
  }
}

// Packed channels-last element strides {n, c, d, h, w} of an (n, ch, dims) tensor.
std::array<int64_t, 5> channels_last_strides(int64_t ch, const std::array<int64_t, 3>& dims) {
  return {dims[0] * dims[1] * dims[2] * ch, 1, dims[1] * dims[2] * ch, dims[2] * ch, ch};
}

// The staging copies, one image row (n, d, h) at a time, 8 channels per pass: the
// channels-last side is written (or read) 8 consecutive floats at a time and the other side
// reads (or writes) 8 rows along w, so both stay in cache (a channel-by-channel copy touched a
// new line for every element).
template <class Copy>
void for_each_row_of_channel_blocks(const ConvProblem& p, const std::array<int64_t, 3>& dims, int64_t ch, Copy&& copy) {
  constexpr int64_t B = 8;
  parallel_for(p.n * dims[0] * dims[1], p.threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t n = r / (dims[0] * dims[1]), d = r / dims[1] % dims[0], h = r % dims[1];
      for (int64_t c0 = 0; c0 < ch; c0 += B) copy(n, d, h, c0, std::min(B, ch - c0));
    }
  });
}

// dst (channels-last) = src (strides ss) for an (n, ch, dims) tensor. Pixel planes go through
// the ISA's register transposes (planes_to_channels_last; one image row at a time over all
// planes had NCHW res2_3x3 spend 1 ms of its 2.5 in the two staging copies).
void stage_in(const ConvProblem& p, const WinogradKernelSet& set, int64_t ch, const std::array<int64_t, 3>& dims,
              const float* src, const std::array<int64_t, 5>& ss, float* dst) {
  const auto cs = channels_last_strides(ch, dims);
  if (pixel_planes(dims, ss))
    return planes_to_channels_last(src, ss[0], ss[1], p.n, ch, dims[0] * dims[1] * dims[2], dst, p.threads,
                                   set.transpose);
  for_each_row_of_channel_blocks(p, dims, ch, [&](int64_t n, int64_t d, int64_t h, int64_t c0, int64_t nb) {
    const float* s = src + n * ss[0] + c0 * ss[1] + d * ss[2] + h * ss[3];
    float* o = dst + n * cs[0] + c0 + d * cs[2] + h * cs[3];
    int64_t w = 0;
    if (nb == 8 && ss[4] == 1)  // 8 x 8 blocks through a small buffer: contiguous on both sides
      for (; w + 8 <= dims[2]; w += 8) {
        float t[8][8];
        for (int64_t c = 0; c < 8; ++c)
          for (int64_t i = 0; i < 8; ++i) t[i][c] = s[c * ss[1] + w + i];
        for (int64_t i = 0; i < 8; ++i)
          for (int64_t c = 0; c < 8; ++c) o[(w + i) * ch + c] = t[i][c];
      }
    for (; w < dims[2]; ++w)
      for (int64_t c = 0; c < nb; ++c) o[w * ch + c] = s[c * ss[1] + w * ss[4]];
  });
}

// dst (strides ds) = alpha * src (channels-last) + beta * dst; beta == 0 never reads dst.
// Pixel planes through the ISA's register transposes, 8 planes per step.
void stage_out(const ConvProblem& p, const WinogradKernelSet& set, int64_t ch, const std::array<int64_t, 3>& dims,
               const float* src, float* dst, const std::array<int64_t, 5>& ds, float alpha, float beta) {
  const auto cs = channels_last_strides(ch, dims);
  if (pixel_planes(dims, ds)) {
    const int64_t pixels = dims[0] * dims[1] * dims[2], blocks = (ch + 7) / 8;
    parallel_for(p.n * blocks, p.threads, [&](int64_t lo, int64_t hi, int) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t n = b / blocks, c0 = b % blocks * 8;
        set.transpose(src + n * cs[0] + c0, ch, std::min<int64_t>(8, ch - c0), pixels, dst + n * ds[0] + c0 * ds[1],
                      ds[1], alpha, beta);
      }
    });
    return;
  }
  for_each_row_of_channel_blocks(p, dims, ch, [&](int64_t n, int64_t d, int64_t h, int64_t c0, int64_t nb) {
    const float* s = src + n * cs[0] + c0 + d * cs[2] + h * cs[3];
    float* o = dst + n * ds[0] + c0 * ds[1] + d * ds[2] + h * ds[3];
    int64_t w = 0;
    if (nb == 8 && ds[4] == 1 && beta == 0.f)  // the common case, 8 x 8 blocks as in stage_in
      for (; w + 8 <= dims[2]; w += 8) {
        float t[8][8];
        for (int64_t i = 0; i < 8; ++i)
          for (int64_t c = 0; c < 8; ++c) t[c][i] = s[(w + i) * ch + c];
        for (int64_t c = 0; c < 8; ++c)
          for (int64_t i = 0; i < 8; ++i) o[c * ds[1] + w + i] = alpha * t[c][i];
      }
    for (int64_t c = 0; c < nb; ++c)
      for (int64_t wi = w; wi < dims[2]; ++wi) blend_store(o + c * ds[1] + wi * ds[4], s[wi * ch + c], alpha, beta);
  });
}

void forward(const ConvProblem& p, const ConvArgs& a, int m) {
  const WinogradKernelSet& set = winograd_kernels(p.isa);
  const WinogradKernels& kern = m == 4 ? set.f4 : set.f2;
  Geometry g = oriented_geometry(p, m);
  WorkspaceCarver ws(a.workspace, a.workspace_bytes);
  const float* U = a.prepared_w;  // transformed once by prepare_filter (its header says how), or now
  if (U) {
    g.tiles_as_rows = U[0] != 0.f;
    U += kPreparedHeaderFloats;
  } else {
    float* u = ws.take<float>(filter_floats(p, g, u_width(set, g)));
    transform_filters(p, g, kern, u_width(set, g), a.w, u);
    U = u;
  }
  // The channels-last problem actually computed: x and y staged when their channels are not
  // contiguous; a staged y is written plainly and blended into the caller's y afterwards.
  ConvProblem q = p;
  const float* x = a.x;
  float* y = a.y;
  float alpha = a.alpha, beta = a.beta;
  if (staged_x(p)) {
    float* sx = ws.take<float>(std::size_t(p.n * p.c * p.in_spatial()));
    stage_in(p, set, p.c, p.in, a.x, p.xs, sx);
    q.xs = channels_last_strides(p.c, p.in);
    x = sx;
  }
  if (staged_y(p)) {
    y = ws.take<float>(std::size_t(p.n * p.k * p.out_spatial()));
    q.ys = channels_last_strides(p.k, p.out);
    alpha = 1.f, beta = 0.f;
  }
  const int sets = buffer_sets(q, g);
  float* buffers = ws.take<float>(block_floats(q, g) * std::size_t(sets));

  auto block_range = [&](int64_t b) { return std::pair<int64_t, int64_t>{b * g.pb, std::min(g.pb, g.tiles - b * g.pb)}; };
  if (g.blocks >= q.threads) {
    // Enough blocks: each thread transforms, multiplies and writes back whole blocks, its own
    // share first, then blocks left in the other's (parallel_chunks: each block's arithmetic is
    // its own, so the bits do not depend on which thread runs it).
    parallel_chunks(g.blocks, q.threads, [&](int64_t lo, int64_t hi, int part) {
      float* V = buffers + std::size_t(part) * block_floats(q, g);
      float* M = V + std::size_t(g.xi * v_xi_stride(q, g));
      std::vector<TileOrigin> origins;
      for (int64_t b = lo; b < hi; ++b) {
        const auto [t0, count] = block_range(b);
        tile_origins(q, g, t0, count, origins);
        for (int64_t grp = 0; grp < q.groups; ++grp) {
          transform_inputs(q, g, kern, x, grp, origins, 0, q.cg(), V);
          multiply(q, g, set, U, V, M, grp, count, 0, g.xi);
          transform_outputs(q, g, kern, M, grp, origins, 0, q.kg(), y, alpha, beta);
        }
      }
    });
  } else {
    // Few blocks (small images, batch 1): threads share each block phase by phase.
    float* V = buffers;
    float* M = V + std::size_t(g.xi * v_xi_stride(q, g));
    std::vector<TileOrigin> origins;
    for (int64_t b = 0; b < g.blocks; ++b) {
      const auto [t0, count] = block_range(b);
      tile_origins(q, g, t0, count, origins);
      for (int64_t grp = 0; grp < q.groups; ++grp) {
        parallel_for(q.cg(), q.threads, [&](int64_t lo, int64_t hi, int) {
          transform_inputs(q, g, kern, x, grp, origins, lo, hi, V);
        });
        parallel_for(g.xi, q.threads, [&](int64_t lo, int64_t hi, int) {
          multiply(q, g, set, U, V, M, grp, count, int(lo), int(hi));
        });
        parallel_for(q.kg(), q.threads, [&](int64_t lo, int64_t hi, int) {
          transform_outputs(q, g, kern, M, grp, origins, lo, hi, y, alpha, beta);
        });
      }
    }
  }
  if (staged_y(p)) stage_out(p, set, p.k, p.out, y, a.y, p.ys, a.alpha, a.beta);
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
    const Geometry g = oriented_geometry(q, m_);
    const std::size_t filter =
        p.filter_prepared ? 0 : WorkspaceCarver::round_up(filter_floats(q, g, u_width(winograd_kernels(q.isa), g)) * 4);
    return filter + staging_bytes(q) +
           WorkspaceCarver::round_up(block_floats(q, g) * 4 * std::size_t(buffer_sets(q, g)));
  }

  // Prepared: the alpha^2 transformed filters U, computed once instead of per call (at batch 1
  // on 14x14 and 7x7 images they cost as much as the products themselves).
  std::size_t prepared_filter_floats(const ConvProblem& p) const override {
    if (p.op != ConvOp::forward) return 0;
    const Geometry g = oriented_geometry(p, m_);
    return kPreparedHeaderFloats + filter_floats(p, g, u_width(winograd_kernels(p.isa), g));
  }
  void prepare_filter(const ConvProblem& p, const float* w, float* out) const override {
    const WinogradKernelSet& set = winograd_kernels(p.isa);
    const Geometry g = oriented_geometry(p, m_);
    std::fill(out, out + kPreparedHeaderFloats, 0.f);
    out[0] = g.tiles_as_rows ? 1.f : 0.f;
    transform_filters(p, g, m_ == 4 ? set.f4 : set.f2, u_width(set, g), w, out + kPreparedHeaderFloats);
  }

  double estimated_cost(const ConvProblem& p) const override {
    const ConvProblem q = as_forward(p);
    const Geometry g = geometry(q, m_);
    const double cols = double((g.tiles + L - 1) / L * L);
    // GEMM flops at ~50 GFLOPS/thread (narrower than im2col's), transforms at ~1 ns per
    // element-lane per thread, the filter transform once per call unless it is prepared: ~2 ns
    // per filter element-lane (measured per call, res5_3x3 at batch 1: F(2x2) 9.7 ms and
    // F(4x4) 25 ms against ~2 ms prepared; at 0.5 ns, and with im2col charged its filter, the
    // heuristic ranked F(2x2) first there per call, 2.4x slower than im2col).
    const double gemm = 2.0 * g.xi * double(q.kg() * q.cg() * q.groups) * cols / (50e9 * q.threads);
    const double transforms = (double(q.c) + double(q.k)) * cols * g.xi * 0.25e-9 / q.threads;
    const double filt = q.filter_prepared ? 0.0 : double(q.k * q.cg()) * g.xi * 2e-9 / q.threads;
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
