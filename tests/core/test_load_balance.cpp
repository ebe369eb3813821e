// Load-aware shares (core/load_balance.hpp) and the pool's claims: shares follow set speeds
// and learnt ones, a job's parts each run exactly once whoever runs them, and the caller takes
// over parts no worker has begun.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "strata/core/load_balance.hpp"
#include "strata/core/status.hpp"
#include "strata/core/thread_pool.hpp"

using namespace strata;

namespace {

void reset_speeds() {
  const std::vector<double> ones(kMaxBalancedParts, 1.0);
  set_thread_speeds(ones.data(), kMaxBalancedParts);
  set_load_balancing(true);
}

TEST(LoadBalance, SharesFollowTheSetSpeeds) {
  reset_speeds();
  double shares[3];
  balanced_shares(3, shares);
  for (double s : shares) EXPECT_DOUBLE_EQ(s, 1.0 / 3);
  const double speeds[3] = {1.0, 2.0, 0.5};
  set_thread_speeds(speeds, 3);
  balanced_shares(3, shares);
  EXPECT_DOUBLE_EQ(shares[0], 1.0 / 3.5);
  EXPECT_DOUBLE_EQ(shares[1], 2.0 / 3.5);
  EXPECT_DOUBLE_EQ(shares[2], 0.5 / 3.5);
  set_load_balancing(false);  // equal while off; the speeds are kept
  balanced_shares(3, shares);
  for (double s : shares) EXPECT_DOUBLE_EQ(s, 1.0 / 3);
  set_load_balancing(true);
  balanced_shares(3, shares);
  EXPECT_DOUBLE_EQ(shares[1], 2.0 / 3.5);
  std::vector<double> many(kMaxBalancedParts + 1);  // beyond the timed parts: equal
  balanced_shares(kMaxBalancedParts + 1, many.data());
  EXPECT_DOUBLE_EQ(many[1], 1.0 / (kMaxBalancedParts + 1));
  reset_speeds();
}

TEST(LoadBalance, SpeedsOutOfRangeAreRejected) {
  const double bad[2] = {1.0, 0.1}, worse[1] = {6.0};
  EXPECT_THROW(set_thread_speeds(bad, 2), Error);
  EXPECT_THROW(set_thread_speeds(worse, 1), Error);
  EXPECT_THROW(set_thread_speeds(bad, kMaxBalancedParts + 1), Error);
}

// Part 1 runs at half part 0's rate (each part spins for its share of 2 ms, part 1 twice that):
// the shares move towards 2/3 and 1/3, where both parts take the same time.
TEST(LoadBalance, SharesLearnFromTimedParts) {
  reset_speeds();
  using Clock = std::chrono::steady_clock;
  double shares[2];
  for (int job = 0; job < 60; ++job) {
    balanced_shares(2, shares);
    parallel_run_timed(2, shares, [&](int p) {
      const auto until = Clock::now() + std::chrono::duration<double>(shares[p] * (p == 1 ? 4e-3 : 2e-3));
      while (Clock::now() < until) {
      }
    });
  }
  balanced_shares(2, shares);
  EXPECT_GT(shares[0], 0.58);
  EXPECT_LT(shares[0], 0.75);
  // Off: nothing is learnt.
  set_load_balancing(false);
  const double before = shares[0];
  const double half[2] = {0.5, 0.5};
  for (int job = 0; job < 10; ++job)
    parallel_run_timed(2, half, [&](int p) {
      const auto until = Clock::now() + std::chrono::duration<double>(p == 0 ? 4e-3 : 1e-3);
      while (Clock::now() < until) {
      }
    });
  set_load_balancing(true);
  balanced_shares(2, shares);
  EXPECT_DOUBLE_EQ(shares[0], before);
  reset_speeds();
}

// Many short jobs: every part runs exactly once, and with parts this short the caller often
// finds a worker's part unclaimed and runs it itself.
TEST(ThreadPoolClaims, EveryPartRunsOnceAndTheCallerTakesUnstartedOnes) {
  const auto caller = std::this_thread::get_id();
  std::atomic<long> taken_by_caller{0};
  for (int job = 0; job < 20000; ++job) {
    const int parts = 2 + job % 3;
    std::vector<std::atomic<int>> runs(static_cast<size_t>(parts));
    parallel_run(parts, [&](int p) {
      runs[size_t(p)].fetch_add(1, std::memory_order_relaxed);
      if (p > 0 && std::this_thread::get_id() == caller) taken_by_caller.fetch_add(1, std::memory_order_relaxed);
    });
    for (int p = 0; p < parts; ++p) ASSERT_EQ(runs[size_t(p)].load(), 1) << "job " << job << " part " << p;
  }
  EXPECT_GT(taken_by_caller.load(), 0);
}

// A part taken over by the caller still reports its exception.
TEST(ThreadPoolClaims, ExceptionsOfAnyPartReachTheCaller) {
  for (int job = 0; job < 2000; ++job)
    EXPECT_THROW(parallel_run(2,
                              [](int p) {
                                if (p == 1) throw std::runtime_error("part 1");
                              }),
                 std::runtime_error);
}

}  // namespace
