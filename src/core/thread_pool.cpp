#include "strata/core/thread_pool.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "strata/core/cpu.hpp"
#include "strata/core/env.hpp"
#include "strata/core/status.hpp"

namespace strata {

namespace {

thread_local bool t_in_task = false;

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
    error_ = nullptr;
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    run_part(0);
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < 4000) {
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
        if (spins > 2000) generation_.wait(seen, std::memory_order_acquire);
        else std::this_thread::yield();
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_) return;
      if (id < parts_) run_part(id);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }

  std::mutex busy_mutex_, grow_mutex_, error_mutex_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  const std::function<void(int)>* body_ = nullptr;
  int parts_ = 0;
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
