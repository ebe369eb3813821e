// Included once per ISA by winograd_kernels_<isa>.cpp (see winograd_kernels.hpp). Everything
// here has internal linkage, so the copies compiled with different -m flags never merge.
#pragma once
#include <cstring>

#include "strata/core/cpu.hpp"
#include "strata/tile/gemm.hpp"
#include "strata/tile/kernel_configs.hpp"
#include "transpose_blocks.hpp"
#include "winograd_kernels.hpp"

namespace strata::dnn::detail {
namespace {

// Eight floats as one value; GCC/Clang lower it to one AVX register or two SSE registers.
typedef float v8 __attribute__((vector_size(32)));
// Sixteen, for runs of two lane groups where the slot has AVX-512 (one zmm register).
typedef float v16 __attribute__((vector_size(64)));

template <class V = v8>
inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
inline void store(float* p, V v) { std::memcpy(p, &v, sizeof v); }

// run.template operator()<V>(c) over `groups` lane groups of 8 channels, c the first channel's
// offset: two groups at a time as one v16 where the slot has AVX-512, the rest as v8.
template <class Run>
[[gnu::always_inline]] inline void each_lane_run(int64_t groups, Run&& run) {
  constexpr int L = kWinogradLanes;
  int64_t g = 0;
#if defined(__AVX512F__)
  for (; g + 2 <= groups; g += 2) run.template operator()<v16>(g * L);
#endif
  for (; g < groups; ++g) run.template operator()<v8>(g * L);
}

// ---- one-dimensional transforms on alpha (or 3) vectors --------------------------------------

struct F4 {
  static constexpr int m = 4, alpha = 6;
  template <class V>
  static void in(const V* d, V* t) {  // B^T d
    t[0] = 4.f * d[0] - 5.f * d[2] + d[4];
    t[1] = -4.f * (d[1] + d[2]) + d[3] + d[4];
    t[2] = 4.f * (d[1] - d[2]) - d[3] + d[4];
    t[3] = 2.f * (d[3] - d[1]) - d[2] + d[4];
    t[4] = 2.f * (d[1] - d[3]) - d[2] + d[4];
    t[5] = 4.f * d[1] - 5.f * d[3] + d[5];
  }
  static void filt(const v8* g, v8* u) {  // G g
    u[0] = (1.f / 4) * g[0];
    u[1] = (-1.f / 6) * (g[0] + g[1] + g[2]);
    u[2] = (-1.f / 6) * (g[0] - g[1] + g[2]);
    u[3] = (1.f / 24) * g[0] + (1.f / 12) * g[1] + (1.f / 6) * g[2];
    u[4] = (1.f / 24) * g[0] - (1.f / 12) * g[1] + (1.f / 6) * g[2];
    u[5] = g[2];
  }
  template <class V>
  static void out(const V* s, V* y) {  // A^T s
    const V a = s[1] + s[2], b = s[1] - s[2], c = s[3] + s[4], d = s[3] - s[4];
    y[0] = s[0] + a + c;
    y[1] = b + 2.f * d;
    y[2] = a + 4.f * c;
    y[3] = b + 8.f * d + s[5];
  }
};

struct F2 {
  static constexpr int m = 2, alpha = 4;
  template <class V>
  static void in(const V* d, V* t) {
    t[0] = d[0] - d[2];
    t[1] = d[1] + d[2];
    t[2] = d[2] - d[1];
    t[3] = d[1] - d[3];
  }
  static void filt(const v8* g, v8* u) {
    u[0] = g[0];
    u[1] = 0.5f * (g[0] + g[1] + g[2]);
    u[2] = 0.5f * (g[0] - g[1] + g[2]);
    u[3] = g[2];
  }
  template <class V>
  static void out(const V* s, V* y) {
    y[0] = s[0] + s[1] + s[2];
    y[1] = s[1] - s[2] - s[3];
  }
};

// ---- two-dimensional: columns first, then rows -------------------------------------------------

// One patch's lanes: V's width of consecutive channels of each of the alpha x alpha pixels,
// those in `win` read where they lie (pixel (i, j) at first + (i - r0) * ldh + (j - c0) * ldw),
// the others (padding) zero.
template <class F, class V>
[[gnu::always_inline]] inline void input_patch(const float* first, int64_t ldh, int64_t ldw, PatchWindow win,
                                               float* v, int64_t v_stride) {
  constexpr int A = F::alpha;
  V d[A][A], t[A][A];
  for (int i = 0; i < A; ++i)
    for (int j = 0; j < A; ++j)
      d[i][j] = i >= win.r0 && i < win.r1 && j >= win.c0 && j < win.c1
                    ? load<V>(first + (i - win.r0) * ldh + (j - win.c0) * ldw)
                    : V{};
  for (int j = 0; j < A; ++j) {  // B^T d, column j
    V col[A], r[A];
    for (int i = 0; i < A; ++i) col[i] = d[i][j];
    F::in(col, r);
    for (int i = 0; i < A; ++i) t[i][j] = r[i];
  }
  for (int i = 0; i < A; ++i) {  // (B^T d) B, row i
    V r[A];
    F::in(t[i], r);
    for (int j = 0; j < A; ++j) store(v + (i * A + j) * v_stride, r[j]);
  }
}

// `groups` consecutive lane groups of one patch, read where they lie: one call per tile rather
// than per group, and two groups at a time in zmm registers where the slot has AVX-512.
template <class F>
void input_2d(const float* first, int64_t ldh, int64_t ldw, PatchWindow win, int64_t groups, float* v,
              int64_t v_stride) {
  each_lane_run(groups, [&]<class V>(int64_t c) { input_patch<F, V>(first + c, ldh, ldw, win, v + c, v_stride); });
}

template <class F>
void filter_2d(const float* gp, float* u) {
  constexpr int A = F::alpha;
  v8 g[3][3], t[A][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) g[i][j] = load<v8>(gp + (i * 3 + j) * kWinogradLanes);
  for (int j = 0; j < 3; ++j) {
    v8 col[3] = {g[0][j], g[1][j], g[2][j]}, r[A];
    F::filt(col, r);
    for (int i = 0; i < A; ++i) t[i][j] = r[i];
  }
  for (int i = 0; i < A; ++i) {
    v8 r[A];
    F::filt(t[i], r);
    for (int j = 0; j < A; ++j) store(u + (i * A + j) * kWinogradLanes, r[j]);
  }
}

// One tile's outputs for V's width of consecutive channels, those in `win` (rows [0, r1),
// columns [0, c1): the tile's part inside the image): y(i, j) at y + i * ldh + j * ldw becomes
// alpha * (A^T M A)(i, j) + beta * y(i, j) (beta == 0 never reads y).
template <class F, class V>
[[gnu::always_inline]] inline void output_patch(const float* mp, int64_t m_stride, float* y, int64_t ldh, int64_t ldw,
                                                PatchWindow win, float alpha, float beta) {
  constexpr int A = F::alpha, M = F::m;
  V s[A][A], t[M][A];
  for (int i = 0; i < A; ++i)
    for (int j = 0; j < A; ++j) s[i][j] = load<V>(mp + (i * A + j) * m_stride);
  for (int j = 0; j < A; ++j) {
    V col[A], r[M];
    for (int i = 0; i < A; ++i) col[i] = s[i][j];
    F::out(col, r);
    for (int i = 0; i < M; ++i) t[i][j] = r[i];
  }
  for (int i = 0; i < M && i < win.r1; ++i) {
    V r[M];
    F::out(t[i], r);
    for (int j = 0; j < M && j < win.c1; ++j) {
      float* dst = y + i * ldh + j * ldw;
      if (beta == 0.f) store(dst, alpha == 1.f ? r[j] : alpha * r[j]);
      else store(dst, alpha * r[j] + beta * load<V>(dst));
    }
  }
}

// `groups` consecutive lane groups of one tile (group g's M at mp + 8 g, its outputs at y + 8 g),
// two at a time in zmm registers where the slot has AVX-512.
template <class F>
void output_2d(const float* mp, int64_t m_stride, int64_t groups, float* y, int64_t ldh, int64_t ldw, PatchWindow win,
               float alpha, float beta) {
  each_lane_run(groups, [&]<class V>(int64_t c) { output_patch<F, V>(mp + c, m_stride, y + c, ldh, ldw, win, alpha, beta); });
}

// ---- the products -------------------------------------------------------------------------

using Kernel = tile::KernelF32;

const tile::BlockSizes& blocks() {
  const CpuFeatures& f = cpu_features();
  static const tile::BlockSizes bs =
      tile::derive_block_sizes(Kernel::mr, Kernel::nr, sizeof(float), f.l1d_bytes, f.l2_bytes, f.l3_bytes);
  return bs;
}

void multiply_channels_last(const float* v, const float* u, float* m, int64_t tiles, int64_t k, int64_t c) {
  tile::GemmArgs<float> shape;  // what the operand policy looks at: B = v, column-major
  shape.m = k, shape.n = tiles, shape.k = c, shape.b = {v, 1, c};
  const tile::PrepackedOperand<float, Kernel::mr> ut{u, c, 0};  // (k, c) in MR panels
  tile::gemm_operands<Kernel>(k, tiles, c, 1.f, ut, tile::b_operand(shape.b), 0.f, m, k, 1, blocks(),
                              tile::NoEpilogue{}, tile::choose_pack_policy<Kernel>(shape, blocks()));
}

void multiply_tiles_as_rows(const float* v, const float* u, float* m, int64_t ldm, int64_t tiles, int64_t k,
                            int64_t c) {
  const tile::MatrixView<float> vt{v, c, 1};  // tile t's channels contiguous: a row of v^T
  const tile::PrepackedOperand<float, Kernel::nr> ut{u, c, 0};  // (c, k) in NR panels
  tile::gemm_operands<Kernel>(tiles, k, c, 1.f, tile::a_operand(vt), ut, 0.f, m, ldm, 1, blocks(),
                              tile::NoEpilogue{}, tile::PackPolicy{});
}

WinogradKernelSet make_winograd_kernels() {
  return {{input_2d<F2>, filter_2d<F2>, output_2d<F2>},
          {input_2d<F4>, filter_2d<F4>, output_2d<F4>},
          Kernel::mr,
          multiply_channels_last,
          Kernel::nr,
          multiply_tiles_as_rows,
          transpose_blocks};
}

}  // namespace
}  // namespace strata::dnn::detail
