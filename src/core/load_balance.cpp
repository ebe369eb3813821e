#include "strata/core/load_balance.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <thread>

#include "strata/core/env.hpp"
#include "strata/core/status.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/core/timer.hpp"

namespace strata {

namespace {

// Each job moves a thread's speed this far towards what it measured: some ten jobs follow a
// change of the host's load (phases seconds long on the VM, thousands of 256^3 products or
// tens of 2048^3 ones), and one outlier (a part preempted once) moves it little.
constexpr double kLearnRate = 0.15;
// One job's relative speed is believed within [1/2, 2] of the job's mean; estimates within
// [1/5, 5]: a slow thread keeps a share, so its speed goes on being measured.
constexpr double kMeasuredClamp = 2.0, kSpeedClamp = 5.0;

struct Speeds {
  std::mutex mutex;
  std::array<double, kMaxBalancedParts> speed;
  Speeds() { speed.fill(1.0); }
};

Speeds& speeds() {
  static Speeds s;
  return s;
}

std::atomic<bool>& balancing() {
  static std::atomic<bool> on{env_int("STRATA_LOAD_BALANCE", 1) != 0};
  return on;
}

// Updates the speeds of threads 0..parts-1 from one job: shares[p] of the work took seconds[p].
void learn(int parts, const double* shares, const double* seconds) {
  std::array<double, kMaxBalancedParts> rate{};
  double mean_rate = 0;
  for (int p = 0; p < parts; ++p) {
    if (shares[p] <= 0 || seconds[p] < kMinTimedSeconds) return;
    rate[p] = shares[p] / seconds[p];
    mean_rate += rate[p] / parts;
  }
  Speeds& s = speeds();
  std::lock_guard lock(s.mutex);
  double mean_speed = 0;
  for (int p = 0; p < parts; ++p) mean_speed += s.speed[p] / parts;
  for (int p = 0; p < parts; ++p) {
    const double measured = mean_speed * std::clamp(rate[p] / mean_rate, 1 / kMeasuredClamp, kMeasuredClamp);
    s.speed[p] = std::clamp(s.speed[p] + kLearnRate * (measured - s.speed[p]), 1 / kSpeedClamp, kSpeedClamp);
  }
}

}  // namespace

void balanced_shares(int parts, double* shares) {
  if (parts <= 0) return;
  if (parts > kMaxBalancedParts || !balancing().load(std::memory_order_relaxed)) {
    std::fill(shares, shares + parts, 1.0 / parts);
    return;
  }
  Speeds& s = speeds();
  std::lock_guard lock(s.mutex);
  double total = 0;
  for (int p = 0; p < parts; ++p) total += s.speed[p];
  for (int p = 0; p < parts; ++p) shares[p] = s.speed[p] / total;
}

void parallel_run_timed(int parts, const double* shares, const std::function<void(int)>& body) {
  if (parts > kMaxBalancedParts || parts < 2 || !balancing().load(std::memory_order_relaxed))
    return parallel_run(parts, body);
  std::array<double, kMaxBalancedParts> seconds{};
  std::array<std::thread::id, kMaxBalancedParts> runner{};
  parallel_run(parts, [&](int p) {
    const Timer timer;
    body(p);
    seconds[p] = timer.seconds();
    runner[p] = std::this_thread::get_id();
  });
  // Parts run one after another on one thread (nested, or the pool busy) say nothing of speeds.
  for (int p = 1; p < parts; ++p)
    if (runner[p] == runner[0]) return;
  learn(parts, shares, seconds.data());
}

void set_load_balancing(bool on) { balancing().store(on, std::memory_order_relaxed); }

bool load_balancing() { return balancing().load(std::memory_order_relaxed); }

void set_thread_speeds(const double* speeds_in, int count) {
  check_arg(count >= 0 && count <= kMaxBalancedParts, "count", "must be in [0, kMaxBalancedParts]");
  for (int p = 0; p < count; ++p)
    check_arg(speeds_in[p] >= 1 / kSpeedClamp && speeds_in[p] <= kSpeedClamp, "speeds",
              "each relative speed must be in [0.2, 5]");
  Speeds& s = speeds();
  std::lock_guard lock(s.mutex);
  for (int p = 0; p < count; ++p) s.speed[p] = speeds_in[p];
}

}  // namespace strata
