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
#include <cstdint>
#include <functional>

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

// Splits [0, n) into `threads` (0 = default) contiguous chunks of nearly equal size and runs
// body(begin, end, part) for the non-empty ones. Chunk bounds: part p gets
// [p*n/threads, (p+1)*n/threads).
template <class Body>
void parallel_for(int64_t n, int threads, Body&& body) {
  if (n <= 0) return;
  if (threads <= 0) threads = default_num_threads();
  if (threads > n) threads = int(n);
  if (threads <= 1) {
    body(int64_t(0), n, 0);
    return;
  }
  parallel_run(threads, [&](int p) {
    int64_t lo = n * p / threads, hi = n * (p + 1) / threads;
    if (lo < hi) body(lo, hi, p);
  });
}

}  // namespace strata
