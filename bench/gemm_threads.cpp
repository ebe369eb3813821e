// sgemm of one build at 1 and 2 threads (or the counts given in GEMM_THREADS, e.g. "1,2,4"),
// alternating in one process, one thread pool: the honest way to see what a second thread buys
// a shape. (bench/gemm_ab loads two builds, each with its own pool; at 2 threads one pool's
// spinning workers take the core the other needs, so its 2-thread ratios say little.)
// Build and run against this tree's libraries:
//   c++ -O2 -std=c++20 -Iinclude bench/gemm_threads.cpp -o build/ab/gemm_threads \
//       -Lbuild/release/src/blas -Lbuild/release/src/core -lstrata_blas -lstrata_core
//   LD_LIBRARY_PATH=build/release/src/blas:build/release/src/core:build/release/src/rt \
//       build/ab/gemm_threads 64 64 64 100 100 100 ...
// (LD_LIBRARY_PATH pointing at a copy of another build's libstrata_blas.so.0 times that build.)
// GEMM_TYPE=u8s8s32 times the integer gemm_ex (u8 A, s8 B, s32 C; GOPS) instead of sgemm.
// GEMM_BATCH=1000 times each shape as one strided batched call of that many products.
// A count followed by "s" (GEMM_THREADS=2,2s) runs with load balancing off: equal strips
// (strata::set_load_balancing), against the learnt shares of the plain count.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/load_balance.hpp"

int main(int argc, char** argv) {
  using namespace strata::blas;
  if (argc < 4 || (argc - 1) % 3 != 0) {
    std::fprintf(stderr, "usage: %s M N K [M N K ...]\n", argv[0]);
    return 2;
  }
  std::vector<int> counts;
  std::vector<bool> equal_strips;
  std::stringstream list(std::getenv("GEMM_THREADS") ? std::getenv("GEMM_THREADS") : "1,2");
  for (std::string item; std::getline(list, item, ',');) {
    counts.push_back(std::max(1, std::atoi(item.c_str())));
    equal_strips.push_back(!item.empty() && item.back() == 's');
  }
  std::printf("%-16s", "shape");
  for (std::size_t i = 0; i < counts.size(); ++i) std::printf(" %7d%s thr", counts[i], equal_strips[i] ? "s" : " ");
  const bool int8 = std::getenv("GEMM_TYPE") && std::string(std::getenv("GEMM_TYPE")) == "u8s8s32";
  std::printf("   %s (median of 15 rounds)\n", int8 ? "u8s8s32 GOPS" : "sgemm GFLOPS");
  const long batch = std::max(1L, std::getenv("GEMM_BATCH") ? std::atol(std::getenv("GEMM_BATCH")) : 1L);
  for (int s = 1; s + 2 < argc; s += 3) {
    const long m = std::atol(argv[s]), n = std::atol(argv[s + 1]), k = std::atol(argv[s + 2]);
    const std::size_t sa = std::size_t(m * k), sb = std::size_t(k * n), sc = std::size_t(m * n);
    std::vector<float> a(sa * batch, 0.5f), b(sb * batch, 0.25f), c(sc * batch);
    std::vector<uint8_t> a8(sa * batch, 3);
    std::vector<int8_t> b8(sb * batch, -2);
    std::vector<int32_t> c32(sc * batch);
    const double flop = 2.0 * double(m) * double(n) * double(k) * double(batch);
    const long calls = std::max(3L, long(2e7 / flop));  // a few ms per turn
    std::vector<Handle> handles(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) handles[i].set_num_threads(counts[i]);
    std::vector<std::vector<double>> seconds(counts.size());
    for (int round = 0; round < 15; ++round)
      for (std::size_t i = 0; i < counts.size(); ++i) {
        strata::set_load_balancing(!equal_strips[i]);
        const auto t0 = std::chrono::steady_clock::now();
        for (long r = 0; r < calls; ++r)
          if (int8 && batch > 1)
            gemm_strided_batched_ex(handles[i], Op::N, Op::N, m, n, k, int32_t(1), a8.data(), strata::DType::u8, m,
                                    long(sa), b8.data(), strata::DType::i8, k, long(sb), int32_t(0), c32.data(), m,
                                    long(sc), batch);
          else if (batch > 1)
            gemm_strided_batched<float>(handles[i], Op::N, Op::N, m, n, k, 1.f, a.data(), m, long(sa), b.data(), k,
                                        long(sb), 0.f, c.data(), m, long(sc), batch);
          else if (int8)
            gemm_ex(handles[i], Op::N, Op::N, m, n, k, int32_t(1), a8.data(), strata::DType::u8, m, b8.data(), strata::DType::i8, k,
                    int32_t(0), c32.data(), m);
          else
            gemm<float>(handles[i], Op::N, Op::N, m, n, k, 1.f, a.data(), m, b.data(), k, 0.f, c.data(), m);
        seconds[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls);
      }
    char shape[64];
    std::snprintf(shape, sizeof shape, "%ldx%ldx%ld", m, n, k);
    std::printf("%-16s", shape);
    for (auto& v : seconds) {
      std::sort(v.begin(), v.end());
      std::printf(" %12.1f", flop / v[v.size() / 2] * 1e-9);
    }
    std::printf("\n");
  }
}
