#include "strata/dnn/handle.hpp"

#include <string>

#include "strata/core/status.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::dnn {

Handle::Handle(rt::Device device) : device_(device) {
  if (device.kind != rt::DeviceKind::cpu)
    throw_error(Status::not_supported, "device", "strata::dnn runs on the CPU device only in this build");
}

void Handle::set_num_threads(int n) {
  check_arg(n >= 0, "n", "thread count must be >= 0 (0 = process default)");
  threads_ = n;
}

int Handle::num_threads() const { return threads_ > 0 ? threads_ : default_num_threads(); }

void Handle::set_isa(std::optional<Isa> isa) {
  if (isa && !isa_supported(*isa))
    throw_error(Status::not_supported, "isa", "this CPU cannot run the '" + std::string(isa_name(*isa)) + "' kernels");
  isa_ = isa;
}

Isa Handle::isa() const { return isa_ ? *isa_ : active_isa(); }

}  // namespace strata::dnn
