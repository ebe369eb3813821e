#include "strata/core/thread_pool.hpp"

#include <atomic>
#include <exception>
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
// bumping the generation; every worker acknowledges every generation, so the job record is
// never rewritten while a worker may still read it.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lock(grow_mutex_);
      stop_ = true;
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
    parts_ = parts;
    caller_cpu_ = current_cpu();
    error_ = nullptr;
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    const bool woke_sleepers = sleepers_.load(std::memory_order_relaxed) > 0;
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    // A woken worker may have been queued on this CPU (see step_off_cpu): let it run now, so it
    // moves away at once instead of after this thread's whole part.
    if (woke_sleepers) std::this_thread::yield();
    run_part(0);
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < pause_spins) {
        cpu_pause();
      } else if (spins < 4000 + pause_spins) {
        std::this_thread::yield();
      } else {
        int p = pending_.load(std::memory_order_acquire);
        if (p != 0) pending_.wait(p, std::memory_order_acquire);
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
      workers_.emplace_back([this, id, gen] { worker_loop(id, gen); });
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

  void worker_loop(int id, uint64_t seen) {
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
      if (stop_) return;
      if (id < parts_) {
        step_off_cpu(caller_cpu_);
        run_part(id);
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }

  std::mutex busy_mutex_, grow_mutex_, error_mutex_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleepers_{0};  // workers asleep on generation_ (a hint: no ordering needed)
  const std::function<void(int)>* body_ = nullptr;
  int parts_ = 0;
  int caller_cpu_ = -1;  // where the caller runs its own part (step_off_cpu)
  bool stop_ = false;
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
