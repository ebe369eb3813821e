// dnn::Handle: the per-caller context of every strata::dnn call, like cudnnHandle_t. It holds
// the device, the thread count, the workspace budget the algorithm selection may use and
// whether results must be bitwise reproducible.
#pragma once
#include <cstddef>
#include <optional>

#include "strata/core/isa.hpp"
#include "strata/rt/device.hpp"

namespace strata::dnn {

// deterministic: bitwise-identical results across runs and thread counts (the default).
// fast: algorithms may split reductions across threads (backward-filter), so the rounding
// can change with the thread count.
enum class Determinism { deterministic, fast };

class Handle {
 public:
  explicit Handle(rt::Device device = rt::Device::cpu());

  rt::Device device() const noexcept { return device_; }

  // 0 = the process default (STRATA_NUM_THREADS or the affinity mask).
  void set_num_threads(int n);
  int num_threads() const;  // the resolved count

  // The most workspace (bytes) automatic selection may pick an algorithm for. Default 1 GiB.
  void set_workspace_budget(std::size_t bytes) noexcept { workspace_budget_ = bytes; }
  std::size_t workspace_budget() const noexcept { return workspace_budget_; }

  void set_determinism(Determinism d) noexcept { determinism_ = d; }
  Determinism determinism() const noexcept { return determinism_; }
  bool deterministic() const noexcept { return determinism_ == Determinism::deterministic; }

  // Forces an ISA for this handle's kernels (nullopt: the process-wide choice). Throws
  // not_supported when the CPU lacks it.
  void set_isa(std::optional<Isa> isa);
  Isa isa() const;

 private:
  rt::Device device_;
  int threads_ = 0;
  std::size_t workspace_budget_ = std::size_t(1) << 30;
  Determinism determinism_ = Determinism::deterministic;
  std::optional<Isa> isa_;
};

}  // namespace strata::dnn
