// blas::Handle: the per-caller context of every strata BLAS call, like cublasHandle_t.
#pragma once
#include <optional>

#include "strata/core/isa.hpp"
#include "strata/rt/device.hpp"

namespace strata::blas {

// Where alpha/beta live (cuBLAS's pointer mode). Host is the only mode on the CPU device;
// device mode is accepted for CUDA handles.
enum class PointerMode { host, device };

// deterministic: bitwise-identical results for any thread count (the default).
// fast: products of few rows and columns over a long depth split the depth among threads
// (tile/depth_split.hpp), so their rounding changes with the thread count.
enum class MathMode { deterministic, fast };

class Handle {
 public:
  explicit Handle(rt::Device device = rt::Device::cpu());

  rt::Device device() const noexcept { return device_; }

  // 0 = the process default (STRATA_NUM_THREADS or the affinity mask).
  void set_num_threads(int n);
  int num_threads() const;  // the resolved count

  void set_pointer_mode(PointerMode m);
  PointerMode pointer_mode() const noexcept { return pointer_mode_; }

  void set_math_mode(MathMode m) noexcept { math_mode_ = m; }
  MathMode math_mode() const noexcept { return math_mode_; }

  // Forces an ISA for this handle's calls (nullopt: the process-wide choice). Throws
  // not_supported when the CPU lacks it.
  void set_isa(std::optional<Isa> isa);
  Isa isa() const;

 private:
  rt::Device device_;
  int threads_ = 0;
  PointerMode pointer_mode_ = PointerMode::host;
  MathMode math_mode_ = MathMode::deterministic;
  std::optional<Isa> isa_;
};

// The handle used by the Fortran/CBLAS ABI and by calls that pass none.
Handle& default_handle();

}  // namespace strata::blas
