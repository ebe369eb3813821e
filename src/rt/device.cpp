#include "strata/rt/device.hpp"

#include <unistd.h>

#include <charconv>

#include "cuda/cuda_backend.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/status.hpp"

namespace strata::rt {

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.starts_with("cuda:")) {
    std::string_view num = text.substr(5);
    int i = -1;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), i);
    if (ec == std::errc() && p == num.data() + num.size() && i >= 0) return cuda(i);
  }
  throw_error(Status::invalid_argument, "device",
              "expected 'cpu', 'cuda' or 'cuda:N', got '" + std::string(text) + "'");
}

std::string Device::name() const {
  return kind == DeviceKind::cpu ? "cpu" : "cuda:" + std::to_string(index);
}

bool cuda_built() noexcept { return cuda_backend::built(); }

int cuda_device_count(std::string* reason) {
  static std::string cached_reason;
  static const int count = cuda_backend::device_count(&cached_reason);
  if (reason) *reason = cached_reason;
  return count;
}

DeviceInfo device_info(Device d) {
  DeviceInfo info;
  info.device = d;
  if (d.kind == DeviceKind::cpu) {
    check_arg(d.index == 0, "device", "there is one CPU device, 'cpu'");
    const CpuFeatures& f = cpu_features();
    info.name = f.brand.empty() ? "cpu" : f.brand;
    info.memory_bytes = std::size_t(sysconf(_SC_PHYS_PAGES)) * std::size_t(sysconf(_SC_PAGE_SIZE));
    info.multiprocessors = f.affinity_cpus;
    return info;
  }
  std::string why;
  int n = cuda_device_count(&why);
  if (d.index < 0 || d.index >= n)
    throw_error(Status::invalid_argument, "device",
                d.name() + " does not exist (" + std::to_string(n) + " CUDA devices" +
                    (why.empty() ? "" : "; " + why) + ")");
  cuda_backend::info(d.index, info);
  return info;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out{device_info(Device::cpu())};
  for (int i = 0, n = cuda_device_count(); i < n; ++i) out.push_back(device_info(Device::cuda(i)));
  return out;
}

}  // namespace strata::rt
