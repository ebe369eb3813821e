// One process-wide thread pool.
//
// * Size: STRATA_NUM_THREADS, else the CPUs in this process's affinity mask.
// * Static partitioning: parallel_for splits [0, n) into `parts` contiguous ranges whose
//   bounds depend only on n and parts, so results never depend on timing.
// * Parts are claimed: worker p runs part p unless the caller, its own part done, finds it
//   not yet begun and runs it itself (a worker descheduled by the OS delays no job).
// * Load-aware splits are the caller's choice (load_balance.hpp).
// * No oversubscription: a call made from inside a pool task, or while another user thread
//   holds the pool, runs its parts inline on the calling thread, in order.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace strata {

// Default thread count for strata calls (STRATA_NUM_THREADS or the affinity mask).
int default_num_threads();
// Changes the default for the rest of the process (0 restores the environment's value).
void set_default_num_threads(int n);

// True while the calling thread executes a pool task.
bool in_parallel_region() noexcept;

// Runs body(part) for part in [0, parts) on up to `parts` threads (the caller is one of them)
// and returns when all are done. The first exception thrown by a part is rethrown here.
void parallel_run(int parts, const std::function<void(int part)>& body);

// The threads a loop over n > 0 items runs on: `threads` (0 = default), at most n.
inline int loop_threads(int64_t n, int threads) {
  if (threads <= 0) threads = default_num_threads();
  return int(std::min<int64_t>(threads, n));
}

// Splits [0, n) into `threads` (0 = default) contiguous chunks of nearly equal size and runs
// body(begin, end, part) for the non-empty ones. Chunk bounds: part p gets
// [p*n/threads, (p+1)*n/threads).
template <class Body>
void parallel_for(int64_t n, int threads, Body&& body) {
  if (n <= 0) return;
  threads = loop_threads(n, threads);
  if (threads <= 1) return body(int64_t(0), n, 0);
  parallel_run(threads, [&](int p) {
    int64_t lo = n * p / threads, hi = n * (p + 1) / threads;
    if (lo < hi) body(lo, hi, p);
  });
}

// Runs body(begin, end, part) over chunks of [0, n) for items whose results do not depend on the
// thread that runs them (a batch's independent products): each of up to `threads` (0 = default)
// threads walks the chunks of its own contiguous share in order, then takes chunks left in the
// others' shares, so a thread slowed by the host or by another process does less. `part` (<
// threads) names the running thread's part, for per-thread scratch. Chunk bounds depend only on
// n and threads. (Chunks dealt round-robin from one counter instead cost 3-12% on batches of
// 16^3-32^3 products: each thread's operands no longer one stream.)
template <class Body>
void parallel_chunks(int64_t n, int threads, Body&& body) {
  if (n <= 0) return;
  threads = loop_threads(n, threads);
  if (threads <= 1) return body(int64_t(0), n, 0);
  const int64_t chunk = (n + 16 * int64_t(threads) - 1) / (16 * int64_t(threads));
  const int64_t chunks = (n + chunk - 1) / chunk;
  struct alignas(64) Next {
    std::atomic<int64_t> chunk;
  };
  std::vector<Next> next(static_cast<std::size_t>(threads));
  for (int p = 0; p < threads; ++p) next[std::size_t(p)].chunk.store(chunks * p / threads, std::memory_order_relaxed);
  parallel_run(threads, [&](int part) {
    for (int q = 0; q < threads; ++q) {
      const int owner = (part + q) % threads;  // its own share first, then the others' in turn
      const int64_t last = chunks * (owner + 1) / threads;
      std::atomic<int64_t>& at = next[std::size_t(owner)].chunk;
      for (int64_t c; (c = at.fetch_add(1, std::memory_order_relaxed)) < last;)
        body(c * chunk, std::min(n, (c + 1) * chunk), part);
    }
  });
}

}  // namespace strata
