// Devices: `cpu`, and `cuda:N` when strata was built with CUDA and a GPU is present at run time.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace strata::rt {

enum class DeviceKind { cpu, cuda };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;

  static constexpr Device cpu() { return {DeviceKind::cpu, 0}; }
  static constexpr Device cuda(int i) { return {DeviceKind::cuda, i}; }
  // "cpu", "cuda", "cuda:1"; throws invalid_argument for anything else.
  static Device parse(std::string_view text);
  std::string name() const;  // "cpu" or "cuda:N"
  friend bool operator==(const Device& a, const Device& b) { return a.kind == b.kind && a.index == b.index; }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

struct DeviceInfo {
  Device device;
  std::string name;             // CPU brand string or GPU name
  std::size_t memory_bytes = 0; // physical RAM or GPU global memory
  int compute_major = 0, compute_minor = 0;  // CUDA compute capability
  int multiprocessors = 0;      // CPU cores available to this process, or GPU SMs
};

// True when the CUDA backend was compiled in (toolkit found at configure time).
bool cuda_built() noexcept;
// Number of usable CUDA devices; 0 with `reason` set when the driver/GPU is absent.
int cuda_device_count(std::string* reason = nullptr);

// Every device usable now: the CPU first, then each GPU.
std::vector<DeviceInfo> list_devices();
DeviceInfo device_info(Device d);  // throws invalid_argument for a device that does not exist

}  // namespace strata::rt
