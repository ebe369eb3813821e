// Stand-alone comparison of the two walks dnn's channels-last 1x1 layers can take on AVX-512
// (docs/PERFORMANCE.md, thirty-third session): C = filter x pixels, the filter prepacked, each
// pixel's channels read in place (pixel j at x + j K). The column walk on 32x12 tiles (the
// filter streamed from L2 past each 12-pixel panel) against the tile-stationary walk on 64x6
// (tile::PackPolicy::stationary_a: a 64-channel filter tile held in L1 over 192 pixels), both
// through tile::gemm_operands on one thread, each as a fraction of an FMA-only loop timed
// beside it, interleaved; medians over 31 rounds.
// Usage: pointwise_walks M PIXELS K   (e.g. 128 3136 256: res3_1x1_256_128 at batch 1)
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "strata/core/cpu.hpp"
#include "strata/tile/gemm.hpp"
#include "strata/tile/kernel_configs.hpp"

namespace {

using namespace strata::tile;
using Column = KernelF32;    // 32x12
using Tall = KernelF32Tall;  // 64x6

// 12 independent FMA chains: the rate the walks are measured against.
[[gnu::noinline]] float fma_loop(long steps) {
  __m512 x[12];
  for (int i = 0; i < 12; ++i) x[i] = _mm512_set1_ps(1.f + float(i));
  const __m512 m = _mm512_set1_ps(0.999f), add = _mm512_set1_ps(0.001f);
  for (long r = 0; r < steps; ++r)
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) x[i] = _mm512_fmadd_ps(x[i], m, add);
  for (int i = 1; i < 12; ++i) x[0] = _mm512_add_ps(x[0], x[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, x[0]);
  return lanes[0];  // kept, so the loop is not dropped
}

// The filter (m x k, rows of k) as panels of W rows over the whole depth, zero-padded.
template <int W>
std::vector<float> panels(const std::vector<float>& w, int64_t m, int64_t k) {
  std::vector<float> out(std::size_t((m + W - 1) / W * W * k), 0.f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) out[std::size_t(i / W * W * k + p * W + i % W)] = w[std::size_t(i * k + p)];
  return out;
}

double seconds(auto&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s M PIXELS K\n", argv[0]);
    return 2;
  }
  if (!strata::cpu_features().avx512f) {
    std::fprintf(stderr, "pointwise_walks: needs AVX-512\n");
    return 1;
  }
  const int64_t m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  std::vector<float> w(std::size_t(m * k)), x(std::size_t(n * k)), c(std::size_t(m * n));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.001f * float(i % 7);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.002f * float(i % 5);
  const std::vector<float> a_column = panels<Column::mr>(w, m, k), a_tall = panels<Tall::mr>(w, m, k);
  const auto pixels = b_operand(MatrixView<float>{x.data(), 1, k});
  const auto& f = strata::cpu_features();
  const BlockSizes bs = derive_block_sizes(Column::mr, Column::nr, sizeof(float), f.l1d_bytes, f.l2_bytes, f.l3_bytes);
  auto column_walk = [&] {
    PackPolicy policy;
    policy.pack_b = false;
    gemm_operands<Column>(m, n, k, 1.f, PrepackedOperand<float, Column::mr>{a_column.data(), k}, pixels, 0.f,
                          c.data(), m, 1, bs, NoEpilogue{}, policy);
  };
  auto stationary_walk = [&] {
    PackPolicy policy;
    policy.pack_b = false, policy.stationary_a = true;
    gemm_operands<Tall>(m, n, k, 1.f, PrepackedOperand<float, Tall::mr>{a_tall.data(), k}, pixels, 0.f, c.data(), m,
                        1, bs, NoEpilogue{}, policy);
  };
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const long steps = long(flops / (2.0 * 16 * 12));
  std::vector<double> column, stationary;
  volatile float sink = 0;
  constexpr int rounds = 31;
  for (int r = 0; r < rounds; ++r) {
    const double fma_rate = 2.0 * 16 * 12 * double(steps) / seconds([&] { sink = fma_loop(steps); });
    column.push_back(flops / seconds(column_walk) / fma_rate);
    stationary.push_back(flops / seconds(stationary_walk) / fma_rate);
  }
  std::sort(column.begin(), column.end());
  std::sort(stationary.begin(), stationary.end());
  std::printf("m %ld pixels %ld k %ld (of the FMA-only loop, medians of %d): column walk 32x12 %.3f, "
              "tile-stationary 64x6 %.3f\n",
              long(m), long(n), long(k), rounds, column[rounds / 2], stationary[rounds / 2]);
  return 0;
}
