// `strata bench pool`: how often a multi-threaded call runs its parts one after the other.
// Bursts of calls, each part a fixed busy wait, separated by pauses long enough for the pool's
// workers to fall asleep; a call whose wall time exceeds 1.5 parts ran (partly) serialised —
// what the wake placement of sleeping workers used to cause (docs/blas.md, thread pool).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "bench_pool.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::cli {

namespace {

using Clock = std::chrono::steady_clock;

void busy_for(double ms) {
  const auto start = Clock::now();
  while (std::chrono::duration<double, std::milli>(Clock::now() - start).count() < ms) {
  }
}

int run_pool_bench(int threads, double part_ms, int pause_ms, int bursts, int calls) {
  int serialised = 0, first_serialised = 0;
  for (int b = 0; b < bursts; ++b) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    for (int c = 0; c < calls; ++c) {
      const auto start = Clock::now();
      parallel_run(threads, [&](int) { busy_for(part_ms); });
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (ms > 1.5 * part_ms) {
        ++serialised;
        if (c == 0) ++first_serialised;
      }
    }
  }
  std::printf("# strata bench pool: %d parts of %.2f ms per call, %d bursts of %d calls after %d ms pauses\n",
              threads, part_ms, bursts, calls, pause_ms);
  std::printf("calls serialised: %d of %d (first calls of a burst: %d of %d)\n", serialised, bursts * calls,
              first_serialised, bursts);
  return 0;
}

}  // namespace

void add_bench_pool_command(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand("pool", "Thread pool: how often a call's parts run one after the other");
  auto threads = std::make_shared<int>(2);
  auto part_ms = std::make_shared<double>(1.0);
  auto pause_ms = std::make_shared<int>(20);
  auto bursts = std::make_shared<int>(40);
  auto calls = std::make_shared<int>(5);
  cmd->add_option("-t,--threads", *threads, "Parts per call (default 2)")->check(CLI::Range(2, 256));
  cmd->add_option("--part-ms", *part_ms, "Busy time per part in ms (default 1)")->check(CLI::PositiveNumber);
  cmd->add_option("--pause-ms", *pause_ms, "Pause before each burst in ms (default 20)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--bursts", *bursts, "Bursts (default 40)")->check(CLI::PositiveNumber);
  cmd->add_option("--calls", *calls, "Calls per burst (default 5)")->check(CLI::PositiveNumber);
  cmd->callback([=, &exit_code] { exit_code = run_pool_bench(*threads, *part_ms, *pause_ms, *bursts, *calls); });
}

}  // namespace strata::cli
