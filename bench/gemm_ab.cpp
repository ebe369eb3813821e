// One sgemm shape timed through blas::gemm<float>: prints the median GFLOPS of `reps` calls
// (after two untimed ones). bench/compare_builds.sh compiles it against two builds of
// libstrata_blas and runs the two alternately, so clock drift hits both alike.
// Usage: gemm_ab M N K REPS [THREADS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "strata/blas/handle.hpp"
#include "strata/blas/level3.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s M N K REPS [THREADS]\n", argv[0]);
    return 2;
  }
  const long m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  const int reps = std::max(1, std::atoi(argv[4])), threads = argc > 5 ? std::atoi(argv[5]) : 1;
  std::vector<float> a(std::size_t(m * k), 0.5f), b(std::size_t(k * n), 0.25f), c(std::size_t(m * n));
  strata::blas::Handle h;
  h.set_num_threads(threads);
  std::vector<double> seconds;
  for (int r = 0; r < reps + 2; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    strata::blas::gemm<float>(h, strata::blas::Op::N, strata::blas::Op::N, m, n, k, 1.f, a.data(), m, b.data(), k,
                              0.f, c.data(), m);
    if (r >= 2) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("%.1f\n", 2.0 * double(m) * double(n) * double(k) / seconds[seconds.size() / 2] / 1e9);
}
