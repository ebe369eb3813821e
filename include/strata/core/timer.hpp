// Monotonic time for benchmarks and verbose timings.
#pragma once
#include <chrono>
#include <cstdint>

namespace strata {

inline int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Timer {
 public:
  Timer() noexcept : start_(now_ns()) {}
  void reset() noexcept { start_ = now_ns(); }
  double seconds() const noexcept { return double(now_ns() - start_) * 1e-9; }

 private:
  int64_t start_;
};

}  // namespace strata
