// Timing policy shared by the `strata bench` commands.
#pragma once
#include <time.h>

#include <chrono>
#include <thread>

namespace strata::bench {

// With several threads, OpenBLAS's and OpenMP's workers busy-wait for a while after each call
// and take the second core from whichever library runs next (measured: strata's 2-thread
// 256^3 GEMM fell from ~125 to 15-70 GFLOPS after a peer). Multi-threaded timings therefore
// run one library at a time, each block starting once every worker of the process has gone
// quiet, then warm_up wakes that library's own threads.
// A fixed 200 ms pause was not enough with OpenBLAS and oneDNN both loaded: some worker still
// spun, and 2-thread 64^3 read 181 GFLOPS for strata and 172 for oneDNN, 265 and 255 after a
// 1.5 s pause. So the pause lasts until the process's CPU time stops growing: a 50 ms window
// in which all threads together used under 2 ms of CPU (or 5 s at most).
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

inline void let_peer_threads_park() {
  constexpr auto window = std::chrono::milliseconds(50);
  constexpr double quiet_cpu_seconds = 0.002;
  for (int i = 0; i < 100; ++i) {  // 100 windows: 5 s
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(window);
    if (process_cpu_seconds() - before < quiet_cpu_seconds) return;
  }
}

// Multi-threaded blocks come in this many rounds (library A, B, ..., A, B, ...), the
// repetitions spread over them, and the median taken over all: a burst of load on the host
// that slows one block (a few milliseconds on this 2-vCPU VM, one sub-millisecond layer's
// whole block) then moves the median less. With one block per library, a different
// convolution layer read 0.67-0.78x at batch 1 / 2 threads in each run (one of 23). Rounds do
// not help against the longer slow states of the second vCPU (seconds; docs/PERFORMANCE.md,
// twenty-second session): such rows are rerun.
inline constexpr int kThreadedRounds = 3;

// Untimed calls for at least 20 ms (and at least 3): threads woken from sleep, and a core
// that idled, take a few milliseconds to run at speed.
template <class Run>
void warm_up(Run&& run) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20); ++i) run();
}

}  // namespace strata::bench
