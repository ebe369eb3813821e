#include "strata/blas/handle.hpp"

#include "strata/core/status.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::blas {

Handle::Handle(rt::Device device) : device_(device) { (void)rt::device_info(device); }

void Handle::set_num_threads(int n) {
  check_arg(n >= 0, "n", "thread count must be >= 0 (0 = process default)");
  threads_ = n;
}

int Handle::num_threads() const { return threads_ > 0 ? threads_ : default_num_threads(); }

void Handle::set_pointer_mode(PointerMode m) {
  check_arg(m == PointerMode::host || device_.kind == rt::DeviceKind::cuda, "mode",
            "device pointer mode needs a CUDA handle; alpha/beta of a CPU handle live on the host");
  pointer_mode_ = m;
}

void Handle::set_isa(std::optional<Isa> isa) {
  if (isa && !isa_supported(*isa))
    throw_error(Status::not_supported, "isa", "this CPU cannot run the '" + std::string(isa_name(*isa)) + "' kernels");
  isa_ = isa;
}

Isa Handle::isa() const { return isa_ ? *isa_ : active_isa(); }

Handle& default_handle() {
  static Handle h;
  return h;
}

}  // namespace strata::blas
