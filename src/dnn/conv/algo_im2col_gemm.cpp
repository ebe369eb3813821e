// im2col + GEMM: each image's receptive fields are copied into a column matrix in the
// workspace and the convolution becomes one blas::gemm per group (the classic Caffe
// lowering). All three operations, any stride, dilation, padding and group count, packed NCHW
// or NHWC activations. A 1x1, stride-1, unpadded convolution skips the copy: the tensor
// already is the column matrix.
//
// A bf16 or f16 forward reads x and w as stored (reads_narrow_inputs): the same lowering on
// 2-byte elements, over blocks of output pixels, and blas::gemm_ex, whose bf16 runs on the
// native kernels (AMX tiles or AVX512_BF16) and whose f16 is widened exactly while packed; each
// block's f32 results go through the dispatcher's sink (ConvArgs::narrow_out), which rounds
// them into y while they are in cache. Other algorithms compute on f32 copies of all tensors.
//
// Threading: with at least as many images as threads, each thread lowers and multiplies whole
// images with a one-thread GEMM (no synchronisation per image); otherwise images go one at a
// time and the GEMM is threaded. The GEMM engine gives the same bits for any thread count, so
// both plans agree bitwise. Backward-filter sums over images in image order (deterministic);
// in Determinism::fast it gives each thread a partial sum over its images instead, which
// changes the rounding with the thread count.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "algorithm.hpp"
#include "common.hpp"
#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::dnn::detail {

namespace {

using blas::Op;
using blas::Order;

bool channels_last(const ConvProblem& p) { return p.x_nhwc(); }

// A 1x1 unpadded stride-1 convolution reads the tensor as the column matrix directly.
bool pointwise(const ConvProblem& p) {
  return p.filter_spatial() == 1 && p.unit_stride() && p.pad == std::array<int64_t, 3>{0, 0, 0};
}

int64_t col_elements(const ConvProblem& p) { return p.cg() * p.filter_spatial() * p.out_spatial(); }

// A bf16/f16 forward on its stored inputs (see the file comment): 2-byte filter and columns.
bool narrow(const ConvProblem& p) { return p.op == ConvOp::forward && p.narrow_in_place; }
std::size_t element_bytes(const ConvProblem& p) { return narrow(p) ? 2 : 4; }
double narrow_speedup(const ConvProblem& p) {
  if (!narrow(p) || p.dtype != DType::bf16 || p.isa != Isa::avx512) return 1.0;
  if (cpu_features().amx_bf16 && amx_ready()) return 6.0;
  return cpu_features().avx512_bf16 ? 1.5 : 1.0;
}

// Whether whole images are distributed over threads (see the file comment).
bool image_parallel(const ConvProblem& p) { return p.threads > 1 && p.n >= p.threads; }
int col_buffers(const ConvProblem& p) { return image_parallel(p) ? p.threads : 1; }

bool fast_filter_split(const ConvProblem& p) {
  return p.op == ConvOp::backward_filter && !p.deterministic && image_parallel(p);
}

// ---- lowering: one image, one group, output positions [p0, p1) ------------------------------

// NCHW: col[q][p - p0], q = ((c*T + t)*R + r)*S + s over the group's channels, p = output
// position. T: float, or the bits of bf16/f16 (T{} is +0 in all three).
template <class T>
void im2col_nchw(const ConvProblem& p, const T* xg, T* col, int threads, int64_t p0, int64_t p1) {
  const int64_t TRS = p.filter_spatial(), Q = p.cg() * TRS, OW = p.out[2], OH = p.out[1];
  parallel_for(Q, threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t q = lo; q < hi; ++q) {
      const int64_t c = q / TRS, t = q / (p.filter[1] * p.filter[2]) % p.filter[0],
                    r = q / p.filter[2] % p.filter[1], s = q % p.filter[2];
      const T* xc = xg + c * p.xs[1];
      for (int64_t line = p0 / OW; line * OW < p1; ++line) {  // output rows (od, oh) in the range
        const int64_t od = line / OH, oh = line % OH;
        const int64_t w0 = std::max<int64_t>(p0 - line * OW, 0), w1 = std::min(p1 - line * OW, OW);
        T* row = col + q * (p1 - p0) + line * OW + w0 - p0;
        const int64_t id = od * p.stride[0] + t * p.dilation[0] - p.pad[0];
        const int64_t ih = oh * p.stride[1] + r * p.dilation[1] - p.pad[1];
        if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1]) {
          std::fill(row, row + (w1 - w0), T{});
          continue;
        }
        const T* xrow = xc + id * p.xs[2] + ih * p.xs[3];
        const int64_t sw = p.stride[2], off = s * p.dilation[2] - p.pad[2];
        for (int64_t ow = w0; ow < w1; ++ow) {
          const int64_t iw = ow * sw + off;
          row[ow - w0] = (iw >= 0 && iw < p.in[2]) ? xrow[iw * p.xs[4]] : T{};
        }
      }
    }
  });
}

// NHWC: col[p - p0][q], q = ((t*R + r)*S + s)*Cg + c, so every copy is a run of Cg channels.
template <class T>
void im2col_nhwc(const ConvProblem& p, const T* xg, T* col, int threads, int64_t p0, int64_t p1) {
  const int64_t Cg = p.cg(), Q = Cg * p.filter_spatial();
  parallel_for(p1 - p0, threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t pos = p0 + lo; pos < p0 + hi; ++pos) {
      const int64_t od = pos / (p.out[1] * p.out[2]), oh = pos / p.out[2] % p.out[1], ow = pos % p.out[2];
      T* dst = col + (pos - p0) * Q;
      for (int64_t t = 0; t < p.filter[0]; ++t) {
        const int64_t id = od * p.stride[0] + t * p.dilation[0] - p.pad[0];
        for (int64_t r = 0; r < p.filter[1]; ++r) {
          const int64_t ih = oh * p.stride[1] + r * p.dilation[1] - p.pad[1];
          for (int64_t s = 0; s < p.filter[2]; ++s, dst += Cg) {
            const int64_t iw = ow * p.stride[2] + s * p.dilation[2] - p.pad[2];
            if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 || iw >= p.in[2])
              std::fill(dst, dst + Cg, T{});
            else
              std::memcpy(dst, xg + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4], std::size_t(Cg) * sizeof(T));
          }
        }
      }
    }
  });
}

// dx (one image, all channels) := beta * dx, or 0 when beta == 0 (never read then).
void scale_image(const ConvProblem& p, float* dxn, float beta, int threads) {
  const int64_t S = p.in_spatial();
  parallel_for(p.c, threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t c = lo; c < hi; ++c)
      for (int64_t i = 0; i < S; ++i) {
        const int64_t d = i / (p.in[1] * p.in[2]), h = i / p.in[2] % p.in[1], w = i % p.in[2];
        float* v = dxn + c * p.xs[1] + d * p.xs[2] + h * p.xs[3] + w * p.xs[4];
        *v = beta == 0.f ? 0.f : beta * *v;
      }
  });
}

// The adjoint of im2col_nchw: dx += alpha * scatter(col). Channels are independent.
void col2im_nchw(const ConvProblem& p, const float* col, float* dxg, float alpha, int threads) {
  const int64_t TRS = p.filter_spatial(), P = p.out_spatial();
  parallel_for(p.cg(), threads, [&](int64_t lo, int64_t hi, int) {
    for (int64_t c = lo; c < hi; ++c)
      for (int64_t q = c * TRS; q < (c + 1) * TRS; ++q) {
        const int64_t t = q / (p.filter[1] * p.filter[2]) % p.filter[0], r = q / p.filter[2] % p.filter[1],
                      s = q % p.filter[2];
        const float* row = col + q * P;
        for (int64_t od = 0; od < p.out[0]; ++od) {
          const int64_t id = od * p.stride[0] + t * p.dilation[0] - p.pad[0];
          for (int64_t oh = 0; oh < p.out[1]; ++oh, row += p.out[2]) {
            const int64_t ih = oh * p.stride[1] + r * p.dilation[1] - p.pad[1];
            if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1]) continue;
            float* xrow = dxg + c * p.xs[1] + id * p.xs[2] + ih * p.xs[3];
            for (int64_t ow = 0; ow < p.out[2]; ++ow) {
              const int64_t iw = ow * p.stride[2] + s * p.dilation[2] - p.pad[2];
              if (iw >= 0 && iw < p.in[2]) xrow[iw * p.xs[4]] += alpha * row[ow];
            }
          }
        }
      }
  });
}

// The adjoint of im2col_nhwc; threads split the group's channels.
void col2im_nhwc(const ConvProblem& p, const float* col, float* dxg, float alpha, int threads) {
  const int64_t Cg = p.cg(), Q = Cg * p.filter_spatial(), P = p.out_spatial();
  parallel_for(Cg, threads, [&](int64_t c0, int64_t c1, int) {
    for (int64_t pos = 0; pos < P; ++pos) {
      const int64_t od = pos / (p.out[1] * p.out[2]), oh = pos / p.out[2] % p.out[1], ow = pos % p.out[2];
      const float* src = col + pos * Q;
      for (int64_t t = 0; t < p.filter[0]; ++t) {
        const int64_t id = od * p.stride[0] + t * p.dilation[0] - p.pad[0];
        for (int64_t r = 0; r < p.filter[1]; ++r) {
          const int64_t ih = oh * p.stride[1] + r * p.dilation[1] - p.pad[1];
          for (int64_t s = 0; s < p.filter[2]; ++s, src += Cg) {
            const int64_t iw = ow * p.stride[2] + s * p.dilation[2] - p.pad[2];
            if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 || iw >= p.in[2]) continue;
            float* dst = dxg + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4];
            for (int64_t c = c0; c < c1; ++c) dst[c] += alpha * src[c];
          }
        }
      }
    }
  });
}

// ---- the three operations for one image --------------------------------------------------

struct Plan {
  const float* w = nullptr;  // filter packed kcrs (NCHW) or krsc (NHWC)
  float* dw = nullptr;       // backward-filter accumulator (packed), or the caller's dw
  bool dw_is_caller = false;
  float* cols = nullptr;     // col_buffers(p) column matrices
};

// Row-major C (f32) = alpha A B + beta C on f32 operands (sgemm) or on bf16/f16 bits of type
// dt (gemm_ex).
template <class T>
void gemm_row_major(const blas::Handle& bh, DType dt, Op ta, Op tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const T* A, int64_t lda, const T* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    (void)dt;
    blas::gemm<float>(bh, Order::row_major, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  } else {
    blas::gemm_ex(bh, Order::row_major, ta, tb, m, n, k, alpha, A, dt, lda, B, dt, ldb, beta, C, ldc);
  }
}

// One image's forward from the packed filter w.
void forward_image(const ConvProblem& p, const ConvArgs& a, const float* w, int64_t n, float* col, int threads) {
  const blas::Handle bh = blas_handle_for(p, threads);
  const int64_t Kg = p.kg(), Cg = p.cg(), Q = Cg * p.filter_spatial(), P = p.out_spatial();
  for (int64_t g = 0; g < p.groups; ++g) {
    const float* xg = a.x + n * p.xs[0] + g * Cg * p.xs[1];
    float* yg = a.y + n * p.ys[0] + g * Kg * p.ys[1];
    const float* wg = w + g * Kg * Q;
    if (!channels_last(p)) {
      const float* B = xg;
      if (!pointwise(p)) im2col_nchw(p, xg, col, threads, 0, P), B = col;
      gemm_row_major(bh, p.dtype, Op::N, Op::N, Kg, P, Q, a.alpha, wg, Q, B, P, a.beta, yg, P);
    } else {
      const float* A = xg;
      int64_t lda = p.c;
      if (!pointwise(p)) im2col_nhwc(p, xg, col, threads, 0, P), A = col, lda = Q;
      gemm_row_major(bh, p.dtype, Op::N, Op::T, P, Kg, Q, a.alpha, A, lda, wg, Q, a.beta, yg, p.k);
    }
  }
}

// one(n, part, threads) for every image: whole images per thread (image_parallel), else one
// image at a time on all threads (part 0).
template <class F>
void for_each_image(const ConvProblem& p, F&& one) {
  if (image_parallel(p)) {
    parallel_for(p.n, p.threads, [&](int64_t lo, int64_t hi, int part) {
      for (int64_t n = lo; n < hi; ++n) one(n, part, 1);
    });
  } else {
    for (int64_t n = 0; n < p.n; ++n) one(n, 0, p.threads);
  }
}

void backward_data_image(const ConvProblem& p, const ConvArgs& a, const Plan& plan, int64_t n, float* col,
                         int threads) {
  const blas::Handle bh = blas_handle_for(p, threads);
  const int64_t Kg = p.kg(), Cg = p.cg(), Q = Cg * p.filter_spatial(), P = p.out_spatial();
  float* dxn = a.x + n * p.xs[0];
  if (!pointwise(p)) scale_image(p, dxn, a.beta, threads);
  for (int64_t g = 0; g < p.groups; ++g) {
    float* dxg = dxn + g * Cg * p.xs[1];
    const float* dyg = a.y + n * p.ys[0] + g * Kg * p.ys[1];
    const float* wg = plan.w + g * Kg * Q;
    if (!channels_last(p)) {
      if (pointwise(p)) {
        blas::gemm<float>(bh, Order::row_major, Op::T, Op::N, Q, P, Kg, a.alpha, wg, Q, dyg, P, a.beta, dxg, P);
        continue;
      }
      blas::gemm<float>(bh, Order::row_major, Op::T, Op::N, Q, P, Kg, 1.f, wg, Q, dyg, P, 0.f, col, P);
      col2im_nchw(p, col, dxg, a.alpha, threads);
    } else {
      if (pointwise(p)) {
        blas::gemm<float>(bh, Order::row_major, Op::N, Op::N, P, Q, Kg, a.alpha, dyg, p.k, wg, Q, a.beta, dxg, p.c);
        continue;
      }
      blas::gemm<float>(bh, Order::row_major, Op::N, Op::N, P, Q, Kg, 1.f, dyg, p.k, wg, Q, 0.f, col, Q);
      col2im_nhwc(p, col, dxg, a.alpha, threads);
    }
  }
}

// dw (packed) = alpha * dY_n * col_n^T + beta_n * dw, for one image.
void backward_filter_image(const ConvProblem& p, const ConvArgs& a, float* dw, float alpha, float beta, int64_t n,
                           float* col, int threads) {
  const blas::Handle bh = blas_handle_for(p, threads);
  const int64_t Kg = p.kg(), Cg = p.cg(), Q = Cg * p.filter_spatial(), P = p.out_spatial();
  for (int64_t g = 0; g < p.groups; ++g) {
    const float* xg = a.x + n * p.xs[0] + g * Cg * p.xs[1];
    const float* dyg = a.y + n * p.ys[0] + g * Kg * p.ys[1];
    float* dwg = dw + g * Kg * Q;
    if (!channels_last(p)) {
      const float* B = xg;
      if (!pointwise(p)) im2col_nchw(p, xg, col, threads, 0, P), B = col;
      blas::gemm<float>(bh, Order::row_major, Op::N, Op::T, Kg, Q, P, alpha, dyg, P, B, P, beta, dwg, Q);
    } else {
      const float* B = xg;
      int64_t ldb = p.c;
      if (!pointwise(p)) im2col_nhwc(p, xg, col, threads, 0, P), B = col, ldb = Q;
      blas::gemm<float>(bh, Order::row_major, Op::T, Op::N, Kg, Q, P, alpha, dyg, p.k, B, ldb, beta, dwg, Q);
    }
  }
}

// ---- narrow inputs: blocks of output pixels, finished while in cache -------------------------

// Output pixels per block of a bf16/f16 forward: where an image's f32 results (P x K) outgrow
// L2, blocks of them within half of it (and at least 512 pixels), so the sink rounds them into
// y while they are still there. In-process on AMX, against rounding the whole y after the
// products: res2_1x1_64_256 (3.2 MB of results) 1.20x at batch 1, 1.81x at batch 4;
// splitting images whose results fit L2 lost up to 14% (res4's 196 pixels x 1024 channels:
// every block packs the filter again). Equal blocks in multiples of 16 rows (an AMX tile's), a
// function of the problem and the caches only.
int64_t narrow_block(const ConvProblem& p) {
  const int64_t P = p.out_spatial(), k = std::max<int64_t>(p.k, 1);
  const int64_t l2 = std::max<int64_t>(cpu_features().l2_bytes, int64_t(256) << 10);
  if (P * k * 4 <= l2) return std::max<int64_t>(P, 1);
  const int64_t most = std::max<int64_t>(512, l2 / 2 / (4 * k));
  const int64_t blocks = (P + most - 1) / most;
  return std::min(P, ((P + blocks - 1) / blocks + 15) / 16 * 16);
}
int64_t narrow_blocks(const ConvProblem& p) {
  const int64_t b = narrow_block(p);
  return p.n * ((p.out_spatial() + b - 1) / b);
}
// Blocks go one per thread (one-thread GEMMs) when there are at least as many as threads.
int narrow_parts(const ConvProblem& p) { return p.threads > 1 && narrow_blocks(p) >= p.threads ? p.threads : 1; }
std::size_t narrow_part_bytes(const ConvProblem& p) {
  const std::size_t block = std::size_t(narrow_block(p));
  const std::size_t col = pointwise(p) ? 0 : block * std::size_t(p.cg() * p.filter_spatial()) * 2;
  return WorkspaceCarver::round_up(block * std::size_t(p.k) * 4) + WorkspaceCarver::round_up(col);
}

// Output pixels [p0, p1) of image img into `out` (f32, all K channels), then through the sink.
void forward_narrow_block(const ConvProblem& p, const ConvArgs& a, const uint16_t* x, const uint16_t* w, int64_t img,
                          int64_t p0, int64_t p1, float* out, uint16_t* col, int threads) {
  const blas::Handle bh = blas_handle_for(p, threads);
  const int64_t Kg = p.kg(), Cg = p.cg(), Q = Cg * p.filter_spatial(), P = p.out_spatial(), K = p.k, np = p1 - p0;
  for (int64_t g = 0; g < p.groups; ++g) {
    const uint16_t* xg = x + img * p.xs[0] + g * Cg * p.xs[1];
    const uint16_t* wg = w + g * Kg * Q;
    if (!channels_last(p)) {  // out[k][pixel - p0]
      const uint16_t* B = xg + p0;  // a 1x1's columns: each channel's plane of P pixels
      int64_t ldb = P;
      if (!pointwise(p)) im2col_nchw(p, xg, col, threads, p0, p1), B = col, ldb = np;
      gemm_row_major(bh, p.dtype, Op::N, Op::N, Kg, np, Q, a.alpha, wg, Q, B, ldb, 0.f, out + g * Kg * np, np);
    } else {  // out[pixel - p0][k]
      const uint16_t* A = xg + p0 * p.c;
      int64_t lda = p.c;
      if (!pointwise(p)) im2col_nhwc(p, xg, col, threads, p0, p1), A = col, lda = Q;
      gemm_row_major(bh, p.dtype, Op::N, Op::T, np, Kg, Q, a.alpha, A, lda, wg, Q, 0.f, out + g * Kg, K);
    }
  }
  if (channels_last(p)) return a.narrow_out->store(out, (img * P + p0) * K, np * K);
  for (int64_t ch = 0; ch < K; ++ch) a.narrow_out->store(out + ch * np, (img * K + ch) * P + p0, np);
}

// The forward of a bf16/f16 problem on its stored x and w.
void forward_narrow(const ConvProblem& p, const ConvArgs& a, FilterOrder order) {
  WorkspaceCarver ws(a.workspace, a.workspace_bytes);
  const auto* w = static_cast<const uint16_t*>(a.w_narrow);
  if (!filter_is(p, order)) {
    uint16_t* packed = ws.take<uint16_t>(std::size_t(p.k * p.cg() * p.filter_spatial()));
    pack_filter(p, w, packed, order);
    w = packed;
  }
  const int parts = narrow_parts(p);
  std::byte* buffers = ws.take<std::byte>(std::size_t(parts) * narrow_part_bytes(p));
  const int64_t block = narrow_block(p), P = p.out_spatial(), per_image = (P + block - 1) / block;
  const auto* x = static_cast<const uint16_t*>(a.x_narrow);
  auto one = [&](int64_t item, int part, int threads) {
    std::byte* mine = buffers + std::size_t(part) * narrow_part_bytes(p);
    auto* out = reinterpret_cast<float*>(mine);
    auto* col = reinterpret_cast<uint16_t*>(mine + WorkspaceCarver::round_up(std::size_t(block * p.k) * 4));
    const int64_t p0 = item % per_image * block;
    forward_narrow_block(p, a, x, w, item / per_image, p0, std::min(P, p0 + block), out, col, threads);
  };
  if (parts > 1) {
    parallel_for(narrow_blocks(p), p.threads, [&](int64_t lo, int64_t hi, int part) {
      for (int64_t item = lo; item < hi; ++item) one(item, part, 1);
    });
  } else {
    for (int64_t item = 0; item < narrow_blocks(p); ++item) one(item, 0, p.threads);
  }
}

class Im2colGemmAlgorithm final : public ConvAlgorithm {
 public:
  ConvAlgo id() const override { return ConvAlgo::im2col_gemm; }

  bool reads_narrow_inputs(const ConvProblem& p) const override { return narrow(p); }

  Support supports(const ConvProblem& p) const override {
    const bool nchw = p.x_nchw() && p.y_nchw(), nhwc = p.x_nhwc() && p.y_nhwc();
    if (!nchw && !nhwc) return Support::no("needs x and y both packed NCHW or both packed NHWC");
    return Support::yes(pointwise(p) ? "1x1 stride 1: one GEMM per image, no lowering" : "lowers to columns, then GEMM");
  }

  std::size_t workspace_size(const ConvProblem& p) const override {
    const std::size_t filter_floats = std::size_t(p.k * p.cg() * p.filter_spatial()), elem = element_bytes(p);
    std::size_t bytes = 0;
    if (p.op != ConvOp::backward_filter && !filter_is(p, order(p)))
      bytes += WorkspaceCarver::round_up(filter_floats * elem);
    if (p.op == ConvOp::backward_filter) {
      const std::size_t partials = fast_filter_split(p) ? std::size_t(p.threads) : 0;
      const std::size_t own = filter_is(p, order(p)) && partials == 0 ? 0 : 1;
      bytes += (partials + own) * WorkspaceCarver::round_up(filter_floats * 4);
    }
    if (narrow(p)) return bytes + std::size_t(narrow_parts(p)) * narrow_part_bytes(p);
    if (!pointwise(p))
      bytes += WorkspaceCarver::round_up(std::size_t(col_buffers(p)) * std::size_t(col_elements(p)) * elem);
    return bytes;
  }

  bool deterministic(const ConvProblem& p) const override { return !fast_filter_split(p); }

  double estimated_cost(const ConvProblem& p) const override {
    // GEMM at ~60 GFLOPS per thread plus the lowering traffic (~1 ns per column element); bf16
    // inputs read as stored run ~6x that on AMX tiles, ~1.5x on AVX512_BF16.
    const double gemm = p.flops() / (60e9 * p.threads * narrow_speedup(p));
    const double lower = pointwise(p) ? 0.0 : double(p.n * p.groups * col_elements(p)) * 1e-9 / p.threads;
    // The filter as it lies is an operand of every call: the GEMM packs it (NHWC: it is A,
    // with strided rows) or streams it from memory (NCHW: B), ~1 ns per element, where
    // implicit GEMM reads a prepared filter's panels. Without it the heuristic ranked im2col
    // first on every 1x1 layer of ResNet-50 in both layouts; measured (batch 1, 1 thread,
    // prepared filters), implicit GEMM ran 1.05-1.44x faster on the res4/res5 ones (0.5-2 M
    // filter elements) and within +-5-10% of im2col on the res2/res3 ones, where this charge
    // is small.
    const double filter =
        p.op != ConvOp::backward_filter ? double(p.k * p.cg() * p.filter_spatial()) * 1e-9 : 0.0;
    return gemm + lower + filter;
  }

  void execute(const ConvProblem& p, const ConvArgs& a) const override {
    if (narrow(p)) return forward_narrow(p, a, order(p));
    WorkspaceCarver ws(a.workspace, a.workspace_bytes);
    const std::size_t filter_floats = std::size_t(p.k * p.cg() * p.filter_spatial());
    Plan plan;
    if (p.op != ConvOp::backward_filter) {
      if (filter_is(p, order(p))) {
        plan.w = a.w;
      } else {
        float* packed = ws.take<float>(filter_floats);
        pack_filter(p, a.w, packed, order(p));
        plan.w = packed;
      }
    }
    float* partials = nullptr;
    if (p.op == ConvOp::backward_filter) {
      if (fast_filter_split(p)) partials = ws.take<float>(filter_floats * std::size_t(p.threads));
      plan.dw_is_caller = filter_is(p, order(p)) && !partials;
      plan.dw = plan.dw_is_caller ? a.w : ws.take<float>(filter_floats);
    }
    plan.cols = pointwise(p) ? nullptr : ws.take<float>(std::size_t(col_elements(p)) * std::size_t(col_buffers(p)));
    auto col_of = [&](int part) { return plan.cols ? plan.cols + std::size_t(part) * std::size_t(col_elements(p)) : nullptr; };

    switch (p.op) {
      case ConvOp::forward:
      case ConvOp::backward_data: {
        for_each_image(p, [&](int64_t n, int part, int threads) {
          if (p.op == ConvOp::forward) forward_image(p, a, plan.w, n, col_of(part), threads);
          else backward_data_image(p, a, plan, n, col_of(part), threads);
        });
        break;
      }
      case ConvOp::backward_filter: {
        if (partials) {
          // Each thread sums its own images; the partials are then added in thread order.
          parallel_for(p.n, p.threads, [&](int64_t lo, int64_t hi, int part) {
            float* mine = partials + std::size_t(part) * filter_floats;
            for (int64_t n = lo; n < hi; ++n) backward_filter_image(p, a, mine, 1.f, n == lo ? 0.f : 1.f, n, col_of(part), 1);
          });
          const int used = int(std::min<int64_t>(p.threads, p.n));
          parallel_for(int64_t(filter_floats), p.threads, [&](int64_t lo, int64_t hi, int) {
            for (int64_t i = lo; i < hi; ++i) {
              float s = partials[i];
              for (int t = 1; t < used; ++t) s += partials[std::size_t(t) * filter_floats + std::size_t(i)];
              plan.dw[i] = s;
            }
          });
        } else {
          const float alpha = plan.dw_is_caller ? a.alpha : 1.f;
          const float beta0 = plan.dw_is_caller ? a.beta : 0.f;
          for (int64_t n = 0; n < p.n; ++n)
            backward_filter_image(p, a, plan.dw, alpha, n == 0 ? beta0 : 1.f, n, col_of(0), p.threads);
        }
        if (!plan.dw_is_caller) unpack_filter_blend(p, plan.dw, order(p), a.w, a.alpha, a.beta);
        break;
      }
    }
  }

 private:
  static FilterOrder order(const ConvProblem& p) { return channels_last(p) ? FilterOrder::krsc : FilterOrder::kcrs; }
};

}  // namespace

const ConvAlgorithm& im2col_gemm_algorithm() {
  static const Im2colGemmAlgorithm a;
  return a;
}

}  // namespace strata::dnn::detail
