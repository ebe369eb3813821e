#include "strata/core/thread_pool.hpp"

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "strata/core/cpu.hpp"
#include "strata/core/env.hpp"
#include "strata/core/status.hpp"

namespace strata {

namespace {

thread_local bool t_in_task = false;

// Waits (a worker for the next job, the caller for the workers) first spin this many times on
// the CPU's pause instruction (23 ns each here: about 25 us), then yield, then sleep: a job that
// follows within that time (the next of back-to-back small products) starts at once, where a
// yield loop noticed it only after its current sched_yield returned. 2 threads, in the
// bench against oneDNN: f32 64^3 1.10x -> 1.50x, 96^3 1.07x -> 1.19x, 128^3 1.00x -> 1.05x;
// 300 spins did as well, 3000 no better. The convolution layers (0.2-0.5 ms) were unchanged.
constexpr int pause_spins = 1000;

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The CPU this thread runs on now, or -1 where unknown.
int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// A worker woken by the caller's futex wake is often placed on the caller's own CPU (the
// scheduler's wake-affine choice) while another CPU idles; it then shares that CPU with the
// caller until the load balancer moves one of them, milliseconds later, and the parts run one
// after the other (2-thread GEMMs and convolutions measured at 1-thread speed, at random). Such
// a worker steps off: it leaves that CPU out of its affinity mask for a moment (the kernel
// migrates it at once), then restores its mask. Nothing stays pinned.
void step_off_cpu(int caller_cpu) {
#if defined(__linux__)
  if (caller_cpu < 0 || sched_getcpu() != caller_cpu) return;
  cpu_set_t mask;
  if (pthread_getaffinity_np(pthread_self(), sizeof mask, &mask) != 0) return;
  if (!CPU_ISSET(caller_cpu, &mask) || CPU_COUNT(&mask) < 2) return;
  cpu_set_t away = mask;
  CPU_CLR(caller_cpu, &away);
  if (pthread_setaffinity_np(pthread_self(), sizeof away, &away) == 0)
    pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
#else
  (void)caller_cpu;
#endif
}

// Workers sleep on a generation counter (futex via std::atomic::wait). A job is published by
// opening each part's claim and bumping the generation. Worker p runs part p if it claims it
// first; the caller, its own part done, claims and runs every part still unclaimed, so a
// worker the OS has not run yet (its core time-sliced with another process) delays the job by
// nothing: the caller waits only for parts a worker has begun. (With a busy loop sharing one
// of the 2 cores, 2-thread sgemm 256^3 ran at 9 GFLOPS, the caller waiting out the worker's
// time slices; docs/PERFORMANCE.md, forty-first session.) Claims are closed again by then, and
// the record (body, parts) is written only while every claim is closed: a worker reads it only
// after claiming, so it never reads a record being rewritten, and one that wakes late finds
// either nothing to claim or the current job.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lock(grow_mutex_);
      stop_.store(true, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
    }
    for (auto& t : workers_) t.join();
  }

  // Returns false when the pool is busy (another user thread): the caller runs inline.
  bool run(int parts, const std::function<void(int)>& body) {
    std::unique_lock busy(busy_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    ensure_workers(parts - 1);
    body_ = &body;
    caller_cpu_ = current_cpu();
    error_ = nullptr;
    unfinished_.store(parts - 1, std::memory_order_relaxed);
    for (int p = 1; p < parts; ++p) claims_[std::size_t(p - 1)]->store(false, std::memory_order_release);
    const bool woke_sleepers = sleepers_.load(std::memory_order_relaxed) > 0;
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    // A woken worker may have been queued on this CPU (see step_off_cpu): let it run now, so it
    // moves away at once instead of after this thread's whole part.
    if (woke_sleepers) std::this_thread::yield();
    run_part(0);
    for (int p = 1; p < parts; ++p)
      if (!claims_[std::size_t(p - 1)]->exchange(true, std::memory_order_acq_rel)) {
        run_part(p);
        unfinished_.fetch_sub(1, std::memory_order_acq_rel);
      }
    for (int spins = 0; unfinished_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < pause_spins) {
        cpu_pause();
      } else if (spins < 4000 + pause_spins) {
        std::this_thread::yield();
      } else {
        int p = unfinished_.load(std::memory_order_acquire);
        if (p != 0) unfinished_.wait(p, std::memory_order_acquire);
      }
    }
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  void ensure_workers(int n) {
    std::lock_guard lock(grow_mutex_);
    while (int(workers_.size()) < n) {
      int id = int(workers_.size()) + 1;
      uint64_t gen = generation_.load(std::memory_order_acquire);
      claims_.push_back(std::make_unique<std::atomic<bool>>(true));
      std::atomic<bool>* claim = claims_.back().get();
      workers_.emplace_back([this, id, gen, claim] { worker_loop(id, gen, *claim); });
    }
  }

  void run_part(int part) {
    t_in_task = true;
    try {
      (*body_)(part);
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    t_in_task = false;
  }

  void worker_loop(int id, uint64_t seen, std::atomic<bool>& claim) {
    for (;;) {
      for (int spins = 0; generation_.load(std::memory_order_acquire) == seen; ++spins) {
        if (spins < pause_spins) {
          cpu_pause();
        } else if (spins > 2000 + pause_spins) {
          sleepers_.fetch_add(1, std::memory_order_relaxed);
          generation_.wait(seen, std::memory_order_acquire);
          sleepers_.fetch_sub(1, std::memory_order_relaxed);
        } else {
          std::this_thread::yield();
        }
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed)) return;
      if (!claim.exchange(true, std::memory_order_acq_rel)) {
        step_off_cpu(caller_cpu_);
        run_part(id);
        if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) unfinished_.notify_one();
      }
    }
  }

  std::mutex busy_mutex_, grow_mutex_, error_mutex_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  // claims_[p - 1]: part p is taken (by worker p or the caller); true between jobs. Each in
  // its own allocation, as worker p holds it while the caller may grow the vector.
  std::vector<std::unique_ptr<std::atomic<bool>>> claims_;
  std::atomic<int> unfinished_{0};  // parts 1.. not yet finished
  std::atomic<int> sleepers_{0};  // workers asleep on generation_ (a hint: no ordering needed)
  const std::function<void(int)>* body_ = nullptr;
  int caller_cpu_ = -1;  // where the caller runs its own part (step_off_cpu)
  std::atomic<bool> stop_{false};  // read by workers that may be between jobs, claiming nothing
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool p;
  return p;
}

std::atomic<int> g_default_threads{0};

int env_threads() {
  static const int n = [] {
    long v = env_int("STRATA_NUM_THREADS", 0);
    if (v < 0) throw_error(Status::invalid_argument, "STRATA_NUM_THREADS", "must be >= 1");
    return v > 0 ? int(v) : cpu_features().affinity_cpus;
  }();
  return n;
}

}  // namespace

int default_num_threads() {
  int n = g_default_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : env_threads();
}

void set_default_num_threads(int n) {
  check_arg(n >= 0, "n", "thread count must be >= 0 (0 restores the default)");
  g_default_threads.store(n, std::memory_order_relaxed);
}

bool in_parallel_region() noexcept { return t_in_task; }

void parallel_run(int parts, const std::function<void(int)>& body) {
  if (parts <= 0) return;
  if (parts == 1 || t_in_task || !pool().run(parts, body)) {
    // Inline: same parts, same order, on this thread.
    const bool was = t_in_task;
    t_in_task = true;
    try {
      for (int p = 0; p < parts; ++p) body(p);
    } catch (...) {
      t_in_task = was;
      throw;
    }
    t_in_task = was;
  }
}

}  // namespace strata
