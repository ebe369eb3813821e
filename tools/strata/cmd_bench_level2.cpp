// `strata bench level2`: the threaded Level 2 routines (symv, trmv N/T, syr2, gemv N/T) at 1 and 2
// threads, side by side with OpenBLAS's cblas_* at the same thread counts, interleaved in one
// process. These routines are memory-bound: the question is whether a second thread pays.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_level2.hpp"
#include "peers/gemm_peers.hpp"
#include "strata/blas/level2.hpp"
#include "strata/core/timer.hpp"

namespace strata::cli {

namespace {

enum : int { kColMajor = 102, kNoTrans = 111, kTrans = 112, kUpper = 121, kNonUnit = 131 };

struct Candidate {
  std::string routine, lib;
  int threads;
  std::function<void()> call;
  std::vector<double> times;
};

int run_level2_bench(int64_t n, int reps) {
  std::vector<std::string> missing;
  std::vector<bench::GemmPeer> peers = bench::load_gemm_peers({"openblas"}, missing);
  void* ob = peers.empty() ? nullptr : peers[0].handle;
  auto sym = [&](const char* name) { return ob ? dlsym(ob, name) : nullptr; };
  using dsymv_t = void (*)(int, int, int, double, const double*, int, const double*, int, double, double*, int);
  using dtrmv_t = void (*)(int, int, int, int, int, const double*, int, double*, int);
  using dsyr2_t = void (*)(int, int, int, double, const double*, int, const double*, int, double*, int);
  using dgemv_t = void (*)(int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
  auto* ob_symv = reinterpret_cast<dsymv_t>(sym("cblas_dsymv"));
  auto* ob_trmv = reinterpret_cast<dtrmv_t>(sym("cblas_dtrmv"));
  auto* ob_syr2 = reinterpret_cast<dsyr2_t>(sym("cblas_dsyr2"));
  auto* ob_gemv = reinterpret_cast<dgemv_t>(sym("cblas_dgemv"));

  std::vector<double> A(size_t(n * n), 1e-3), x(size_t(n), 1.0), y(size_t(n), 0.0), t(size_t(n), 1.0);
  std::vector<Candidate> cands;
  for (int threads : {1, 2}) {
    auto h = std::make_shared<blas::Handle>();
    h->set_num_threads(threads);
    const int ni = int(n);
    cands.push_back({"dsymv", "strata", threads, [=, &A, &x, &y] {
                       blas::symv<double>(*h, blas::Uplo::upper, n, 1.0, A.data(), n, x.data(), 1, 0.0, y.data(), 1);
                     }, {}});
    cands.push_back({"dtrmv", "strata", threads, [=, &A, &t] {
                       blas::trmv<double>(*h, blas::Uplo::upper, blas::Op::N, blas::Diag::non_unit, n, A.data(), n,
                                          t.data(), 1);
                     }, {}});
    cands.push_back({"dsyr2", "strata", threads, [=, &A, &x, &y] {
                       blas::syr2<double>(*h, blas::Uplo::upper, n, 1e-12, x.data(), 1, y.data(), 1, A.data(), n);
                     }, {}});
    cands.push_back({"dgemv", "strata", threads, [=, &A, &x, &y] {
                       blas::gemv<double>(*h, blas::Op::N, n, n, 1.0, A.data(), n, x.data(), 1, 0.0, y.data(), 1);
                     }, {}});
    cands.push_back({"dtrmv T", "strata", threads, [=, &A, &t] {
                       blas::trmv<double>(*h, blas::Uplo::upper, blas::Op::T, blas::Diag::non_unit, n, A.data(), n,
                                          t.data(), 1);
                     }, {}});
    cands.push_back({"dgemv T", "strata", threads, [=, &A, &x, &y] {
                       blas::gemv<double>(*h, blas::Op::T, n, n, 1.0, A.data(), n, x.data(), 1, 0.0, y.data(), 1);
                     }, {}});
    if (ob_symv && peers[0].set_threads) {
      auto set = [p = &peers[0], threads] { p->set_threads(p, threads); };
      cands.push_back({"dsymv", "openblas", threads, [=, &A, &x, &y] {
                         set();
                         ob_symv(kColMajor, kUpper, ni, 1.0, A.data(), ni, x.data(), 1, 0.0, y.data(), 1);
                       }, {}});
      cands.push_back({"dtrmv", "openblas", threads, [=, &A, &t] {
                         set();
                         ob_trmv(kColMajor, kUpper, kNoTrans, kNonUnit, ni, A.data(), ni, t.data(), 1);
                       }, {}});
      cands.push_back({"dsyr2", "openblas", threads, [=, &A, &x, &y] {
                         set();
                         ob_syr2(kColMajor, kUpper, ni, 1e-12, x.data(), 1, y.data(), 1, A.data(), ni);
                       }, {}});
      cands.push_back({"dgemv", "openblas", threads, [=, &A, &x, &y] {
                         set();
                         ob_gemv(kColMajor, kNoTrans, ni, ni, 1.0, A.data(), ni, x.data(), 1, 0.0, y.data(), 1);
                       }, {}});
      cands.push_back({"dtrmv T", "openblas", threads, [=, &A, &t] {
                         set();
                         ob_trmv(kColMajor, kUpper, kTrans, kNonUnit, ni, A.data(), ni, t.data(), 1);
                       }, {}});
      cands.push_back({"dgemv T", "openblas", threads, [=, &A, &x, &y] {
                         set();
                         ob_gemv(kColMajor, kTrans, ni, ni, 1.0, A.data(), ni, x.data(), 1, 0.0, y.data(), 1);
                       }, {}});
    }
  }
  for (auto& c : cands) c.call();  // warm-up
  for (int r = 0; r < reps; ++r)
    for (auto& c : cands) {
      Timer timer;
      c.call();
      c.times.push_back(timer.seconds());
    }
  for (auto& m : missing) std::fprintf(stderr, "bench: peer not available: %s\n", m.c_str());
  std::printf("# strata bench level2: n = %lld, f64, median of %d interleaved runs; speedup = 1 thread / 2 threads\n",
              static_cast<long long>(n), reps);
  std::printf("%-8s %-9s %10s %10s %8s\n", "routine", "library", "1T ms", "2T ms", "speedup");
  for (const char* routine : {"dsymv", "dtrmv", "dtrmv T", "dsyr2", "dgemv", "dgemv T"})
    for (const char* lib : {"strata", "openblas"}) {
      double ms[2] = {0, 0};
      for (auto& c : cands)
        if (c.routine == routine && c.lib == lib) {
          std::sort(c.times.begin(), c.times.end());
          ms[c.threads - 1] = c.times[c.times.size() / 2] * 1e3;
        }
      if (ms[0] > 0) std::printf("%-8s %-9s %10.2f %10.2f %7.2fx\n", routine, lib, ms[0], ms[1], ms[0] / ms[1]);
    }
  return 0;
}

}  // namespace

void add_bench_level2_command(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand("level2", "Threaded Level 2 BLAS (symv, trmv, syr2, gemv): 1 vs 2 threads, vs OpenBLAS");
  auto n = std::make_shared<int64_t>(4000);
  auto reps = std::make_shared<int>(15);
  cmd->add_option("-n", *n, "Matrix order (default 4000)")->check(CLI::PositiveNumber);
  cmd->add_option("-r,--reps", *reps, "Timed repetitions (median reported)")->check(CLI::PositiveNumber);
  cmd->callback([n, reps, &exit_code] { exit_code = run_level2_bench(*n, *reps); });
}

}  // namespace strata::cli
