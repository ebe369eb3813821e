// Tiled FFT convolution for large kernels (stride 1): forward, and backward-data through its
// stride-1 forward form. The output is cut into tiles so every FFT has a small fixed size
// N x N (16 or 32): a tile's input patch is N x N, its valid output (N - R + 1) x (N - S + 1).
//   filters:  W[f][k][c] = FFT(w[k][c] placed at the origin, dilated)       once per call
//   inputs:   X[f][c][t] = FFT(patch of tile t, channel c)                  per block of tiles
//   products: Y[f][k][t] = sum_c conj(W[f][k][c]) X[f][c][t]                 complex blas::gemm
//   outputs:  y tile = real(IFFT(Y[.][k][t])), first valid rows/cols only
// Circular cross-correlation is X * conj(W); the patch is large enough that the valid part
// never wraps. Inputs are real, so only the N*(N/2 + 1) non-redundant frequencies are kept
// and multiplied; the inverse rebuilds the other half by conjugate symmetry.
// Each output is computed by the same arithmetic whichever thread owns its block (blocks
// have a fixed size), so results are bitwise identical across thread counts.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "algorithm.hpp"
#include "common.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::dnn::detail {

namespace {

using cf = std::complex<float>;
constexpr int64_t kTilesPerBlock = 16;
constexpr int64_t kMaxExtent = 17;  // largest dilated filter extent (N = 32 leaves 16 outputs)

int64_t extent(const ConvProblem& p, int d) { return p.dilation[d] * (p.filter[d] - 1) + 1; }
int fft_size(const ConvProblem& p) { return std::max(extent(p, 1), extent(p, 2)) <= 6 ? 16 : 32; }

struct Geometry {
  int n;                 // FFT size
  int64_t freqs;         // n * (n/2 + 1)
  int64_t mh, mw;        // valid outputs per tile
  int64_t th, tw, tiles_per_image, tiles, blocks;
};

Geometry geometry(const ConvProblem& p) {
  Geometry g;
  g.n = fft_size(p);
  g.freqs = int64_t(g.n) * (g.n / 2 + 1);
  g.mh = g.n - extent(p, 1) + 1, g.mw = g.n - extent(p, 2) + 1;
  g.th = (p.out[1] + g.mh - 1) / g.mh, g.tw = (p.out[2] + g.mw - 1) / g.mw;
  g.tiles_per_image = g.th * g.tw;
  g.tiles = p.n * p.out[0] * g.tiles_per_image;
  g.blocks = (g.tiles + kTilesPerBlock - 1) / kTilesPerBlock;
  return g;
}

// In-place radix-2 FFT of n points spaced `stride` apart; inverse is unscaled.
void fft(cf* a, int n, int64_t stride, bool inverse) {
  for (int i = 1, j = 0; i < n; ++i) {
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i * stride], a[j * stride]);
  }
  for (int len = 2; len <= n; len <<= 1) {
    const double ang = 2 * M_PI / len * (inverse ? 1 : -1);
    for (int k = 0; k < len / 2; ++k) {
      const cf wk(float(std::cos(ang * k)), float(std::sin(ang * k)));
      for (int i = 0; i < n; i += len) {
        cf& u = a[(i + k) * stride];
        cf& v = a[(i + k + len / 2) * stride];
        const cf t = v * wk;
        v = u - t;
        u = u + t;
      }
    }
  }
}

// 2-D forward FFT of a real n x n grid (in `grid`, complex, row-major); returns the
// non-redundant half: out[u * (n/2+1) + v] for v in [0, n/2], stride `out_stride` between freqs.
void fft2_half(cf* grid, int n, cf* out, int64_t out_stride) {
  for (int r = 0; r < n; ++r) fft(grid + r * n, n, 1, false);
  const int half = n / 2 + 1;
  for (int v = 0; v < half; ++v) fft(grid + v, n, n, false);
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < half; ++v) out[(int64_t(u) * half + v) * out_stride] = grid[u * n + v];
}

// Inverse of fft2_half: rebuilds the full spectrum from the half, transforms back, scales.
void ifft2_half(const cf* in, int64_t in_stride, int n, cf* grid) {
  const int half = n / 2 + 1;
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      grid[u * n + v] = v < half ? in[(int64_t(u) * half + v) * in_stride]
                                 : std::conj(in[(int64_t((n - u) % n) * half + (n - v)) * in_stride]);
  for (int r = 0; r < n; ++r) fft(grid + r * n, n, 1, true);
  for (int c = 0; c < n; ++c) fft(grid + c, n, n, true);
  const float scale = 1.f / float(n * n);
  for (int i = 0; i < n * n; ++i) grid[i] *= scale;
}

std::size_t filter_elems(const ConvProblem& p, const Geometry& g) { return std::size_t(p.groups * g.freqs * p.kg() * p.cg()); }
std::size_t block_elems(const ConvProblem& p, const Geometry& g) {
  return std::size_t(g.freqs * kTilesPerBlock * (p.cg() + p.kg()) + int64_t(g.n) * g.n);
}
int buffer_sets(const ConvProblem& p, const Geometry& g) { return int(std::min<int64_t>(p.threads, g.blocks)); }

void forward(const ConvProblem& p, const ConvArgs& a) {
  const Geometry g = geometry(p);
  const int n = g.n;
  const int64_t Kg = p.kg(), Cg = p.cg(), TB = kTilesPerBlock;
  WorkspaceCarver ws(a.workspace, a.workspace_bytes);
  cf* W = ws.take<cf>(filter_elems(p, g));  // [group][freq][k][c], conjugated
  cf* buffers = ws.take<cf>(block_elems(p, g) * std::size_t(buffer_sets(p, g)));

  parallel_for(p.groups * Kg, p.threads, [&](int64_t lo, int64_t hi, int) {
    std::vector<cf> grid(std::size_t(n * n));
    for (int64_t gk = lo; gk < hi; ++gk) {
      const int64_t grp = gk / Kg, k = gk % Kg;
      for (int64_t c = 0; c < Cg; ++c) {
        std::fill(grid.begin(), grid.end(), cf{});
        const float* wkc = a.w + grp * p.ws[0] + k * p.ws[1] + c * p.ws[2];
        for (int64_t r = 0; r < p.filter[1]; ++r)
          for (int64_t s = 0; s < p.filter[2]; ++s)
            grid[std::size_t(r * p.dilation[1] * n + s * p.dilation[2])] = wkc[r * p.ws[4] + s * p.ws[5]];
        cf* dst = W + (grp * g.freqs) * Kg * Cg + k * Cg + c;
        fft2_half(grid.data(), n, dst, Kg * Cg);
        for (int64_t f = 0; f < g.freqs; ++f) dst[f * Kg * Cg] = std::conj(dst[f * Kg * Cg]);
      }
    }
  });

  parallel_for(g.blocks, p.threads, [&](int64_t lo, int64_t hi, int part) {
    cf* X = buffers + std::size_t(part) * block_elems(p, g);  // [freq][c][tile]
    cf* Y = X + g.freqs * Cg * TB;                             // [freq][k][tile]
    cf* grid = Y + g.freqs * Kg * TB;
    const blas::Handle bh = blas_handle_for(p, 1);
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t t0 = b * TB, count = std::min(TB, g.tiles - t0);
      for (int64_t grp = 0; grp < p.groups; ++grp) {
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t t = 0; t < TB; ++t) {
            std::fill(grid, grid + n * n, cf{});
            if (t < count) {
              const int64_t tile = t0 + t, img = tile / g.tiles_per_image, rr = tile % g.tiles_per_image;
              const int64_t nn = img / p.out[0], d = img % p.out[0];
              const int64_t h0 = rr / g.tw * g.mh - p.pad[1], w0 = rr % g.tw * g.mw - p.pad[2];
              const float* xc = a.x + nn * p.xs[0] + (grp * Cg + c) * p.xs[1] + d * p.xs[2];
              for (int i = 0; i < n; ++i) {
                const int64_t ih = h0 + i;
                if (ih < 0 || ih >= p.in[1]) continue;
                for (int j = 0; j < n; ++j) {
                  const int64_t iw = w0 + j;
                  if (iw >= 0 && iw < p.in[2]) grid[i * n + j] = xc[ih * p.xs[3] + iw * p.xs[4]];
                }
              }
            }
            fft2_half(grid, n, X + c * TB + t, Cg * TB);
          }
        for (int64_t f = 0; f < g.freqs; ++f)
          blas::gemm<cf>(bh, blas::Order::row_major, blas::Op::N, blas::Op::N, Kg, TB, Cg, cf(1.f),
                         W + (grp * g.freqs + f) * Kg * Cg, Cg, X + f * Cg * TB, TB, cf(0.f), Y + f * Kg * TB, TB);
        for (int64_t k = 0; k < Kg; ++k)
          for (int64_t t = 0; t < count; ++t) {
            ifft2_half(Y + k * TB + t, Kg * TB, n, grid);
            const int64_t tile = t0 + t, img = tile / g.tiles_per_image, rr = tile % g.tiles_per_image;
            const int64_t nn = img / p.out[0], d = img % p.out[0];
            const int64_t oh0 = rr / g.tw * g.mh, ow0 = rr % g.tw * g.mw;
            float* yk = a.y + nn * p.ys[0] + (grp * Kg + k) * p.ys[1] + d * p.ys[2];
            for (int64_t i = 0; i < g.mh && oh0 + i < p.out[1]; ++i)
              for (int64_t j = 0; j < g.mw && ow0 + j < p.out[2]; ++j)
                blend_store(yk + (oh0 + i) * p.ys[3] + (ow0 + j) * p.ys[4], grid[i * n + j].real(), a.alpha, a.beta);
          }
      }
    }
  });
}

class FftTiledAlgorithm final : public ConvAlgorithm {
 public:
  ConvAlgo id() const override { return ConvAlgo::fft_tiled; }

  Support supports(const ConvProblem& p) const override {
    if (p.op == ConvOp::backward_filter) return Support::no("backward-filter is not implemented with FFT");
    if (p.filter[0] != 1 || p.pad[0] != 0) return Support::no("needs a 2-D (or 1-D) problem");
    if (!p.unit_stride()) return Support::no("needs stride 1");
    if (extent(p, 1) > kMaxExtent || extent(p, 2) > kMaxExtent) return Support::no("dilated filter larger than 17");
    if (p.op == ConvOp::backward_data && !backward_data_maps_to_forward(p))
      return Support::no("backward-data needs padding <= dilation*(filter-1)");
    return Support::yes("stride 1: cost independent of the filter size");
  }

  std::size_t workspace_size(const ConvProblem& p) const override {
    const ConvProblem q = as_forward(p);
    const Geometry g = geometry(q);
    return WorkspaceCarver::round_up(filter_elems(q, g) * sizeof(cf)) +
           WorkspaceCarver::round_up(block_elems(q, g) * sizeof(cf) * std::size_t(buffer_sets(q, g)));
  }

  double estimated_cost(const ConvProblem& p) const override {
    const ConvProblem q = as_forward(p);
    const Geometry g = geometry(q);
    const double cols = double(g.blocks * kTilesPerBlock);
    const double products = 8.0 * double(g.freqs) * double(q.kg() * q.cg() * q.groups) * cols / (30e9 * q.threads);
    const double ffts = double(q.c + q.k) * cols * 5.0 * g.n * g.n * std::log2(double(g.n)) / (2e9 * q.threads);
    const double filt = double(q.k * q.cg()) * 5.0 * g.n * g.n * std::log2(double(g.n)) / (2e9 * q.threads);
    return products + ffts + filt;
  }

  void execute(const ConvProblem& p, const ConvArgs& a) const override {
    if (p.op == ConvOp::forward) return forward(p, a);
    ConvArgs b = a;
    b.x = a.y, b.y = a.x, b.w = backward_data_as_forward_filter(p, a.w);
    forward(backward_data_as_forward(p), b);
  }

 private:
  static ConvProblem as_forward(const ConvProblem& p) {
    return p.op == ConvOp::backward_data ? backward_data_as_forward(p) : p;
  }
};

}  // namespace

const ConvAlgorithm& fft_tiled_algorithm() {
  static const FftTiledAlgorithm a;
  return a;
}

}  // namespace strata::dnn::detail
