// The pool's contract: static partitions, every part runs exactly once, nested and concurrent
// calls run inline without deadlock or oversubscription, exceptions reach the caller.
// Also built under TSan by the test script (preset tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "strata/core/thread_pool.hpp"

using namespace strata;

TEST(ThreadPool, PartitionIsStaticAndCoversTheRange) {
  for (int threads : {1, 2, 3, 7}) {
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(10), int64_t(1001)}) {
      std::vector<int> hits(size_t(n), 0);
      std::vector<std::pair<int64_t, int64_t>> ranges(size_t(threads), {-1, -1});
      parallel_for(n, threads, [&](int64_t lo, int64_t hi, int part) {
        ranges[size_t(part)] = {lo, hi};
        for (int64_t i = lo; i < hi; ++i) hits[size_t(i)]++;
      });
      for (int h : hits) EXPECT_EQ(h, 1);
      int used = int(std::min<int64_t>(threads, n));
      for (int p = 0; p < used; ++p) {
        EXPECT_EQ(ranges[size_t(p)].first, n * p / used);
        EXPECT_EQ(ranges[size_t(p)].second, n * (p + 1) / used);
      }
    }
  }
}

TEST(ThreadPool, UsesSeveralThreadsWhenAllowed) {
  std::set<std::thread::id> ids;
  std::mutex m;
  std::atomic<int> started{0};
  parallel_run(4, [&](int p) {
    {
      std::lock_guard lock(m);
      ids.insert(std::this_thread::get_id());
    }
    started.fetch_add(1);
    // The caller would take over parts no worker has begun once its own is done: it waits
    // (up to 5 s) for the workers to begin theirs.
    if (p == 0)
      for (int i = 0; i < 5000 && started.load() < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_EQ(ids.size(), 4u);  // caller + 3 workers (the pool grows to an explicit request)
}

TEST(ThreadPool, NestedCallsRunInline) {
  std::atomic<int> total{0};
  parallel_run(2, [&](int) {
    EXPECT_TRUE(in_parallel_region());
    auto outer = std::this_thread::get_id();
    parallel_for(100, 4, [&](int64_t lo, int64_t hi, int) {
      EXPECT_EQ(std::this_thread::get_id(), outer);  // no new threads from inside a task
      total += int(hi - lo);
    });
  });
  EXPECT_EQ(total.load(), 200);
  EXPECT_FALSE(in_parallel_region());
}

TEST(ThreadPool, ConcurrentUserThreadsAllComplete) {
  constexpr int users = 6;
  std::vector<int64_t> sums(users, 0);
  std::vector<std::thread> ts;
  for (int u = 0; u < users; ++u)
    ts.emplace_back([&, u] {
      for (int rep = 0; rep < 200; ++rep) {
        std::vector<int64_t> partial(2, 0);
        parallel_for(1000, 2, [&](int64_t lo, int64_t hi, int part) {
          for (int64_t i = lo; i < hi; ++i) partial[size_t(part)] += i;
        });
        sums[size_t(u)] += partial[0] + partial[1];
      }
    });
  for (auto& t : ts) t.join();
  for (int64_t s : sums) EXPECT_EQ(s, 200 * (999 * 1000 / 2));
}

TEST(ThreadPool, ExceptionsPropagateToTheCaller) {
  EXPECT_THROW(parallel_run(3, [](int p) {
                 if (p == 2) throw std::runtime_error("boom");
               }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> n{0};
  parallel_run(3, [&](int) { n++; });
  EXPECT_EQ(n.load(), 3);
}

TEST(ThreadPool, DefaultThreadsCanBeChanged) {
  int before = default_num_threads();
  EXPECT_GE(before, 1);
  set_default_num_threads(3);
  EXPECT_EQ(default_num_threads(), 3);
  set_default_num_threads(0);
  EXPECT_EQ(default_num_threads(), before);
}

TEST(ThreadPool, ChunksCoverTheRangeOnceWithPartsBelowTheThreads) {
  for (int64_t n : {0, 1, 5, 100, 1001})
    for (int threads : {1, 2, 3, 4}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<bool> bad_part{false};
      parallel_chunks(n, threads, [&](int64_t lo, int64_t hi, int part) {
        if (part < 0 || part >= threads || lo >= hi) bad_part = true;
        for (int64_t i = lo; i < hi; ++i) hits[size_t(i)].fetch_add(1);
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1) << n << " items, " << threads << " threads";
      EXPECT_FALSE(bad_part.load());
    }
}

// A thread ten times slower per chunk (2 ms against 0.2) takes fewer of them: chunks go to
// whichever thread is free.
TEST(ThreadPool, ChunksGoToTheThreadThatIsFree) {
  std::atomic<int> taken[2] = {0, 0};
  parallel_chunks(64, 2, [&](int64_t, int64_t, int part) {
    taken[part].fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds(part == 1 ? 2000 : 200));
  });
  EXPECT_EQ(taken[0].load() + taken[1].load(), 32);  // 16 a thread
  EXPECT_GT(taken[0].load(), taken[1].load());
}
