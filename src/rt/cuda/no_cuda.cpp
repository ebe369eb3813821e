// Built when no CUDA toolkit was found: every call reports that the backend is absent.
#include "cuda_backend.hpp"
#include "strata/core/status.hpp"

namespace strata::rt::cuda_backend {

namespace {
[[noreturn]] void absent() {
  throw_error(Status::not_supported, "device", "strata was built without the CUDA backend");
}
}  // namespace

bool built() noexcept { return false; }
int device_count(std::string* reason) {
  if (reason) *reason = "strata was built without CUDA (no toolkit found at configure time)";
  return 0;
}
void info(int, DeviceInfo&) { absent(); }
void* malloc(int, std::size_t) { absent(); }
void free(int, void*) noexcept {}
void memcpy_async(void*, const void*, std::size_t, CopyKind, void*) { absent(); }
void* stream_create(int) { absent(); }
void stream_destroy(void*) noexcept {}
void stream_sync(void*) { absent(); }
void* event_create(int) { absent(); }
void event_destroy(void*) noexcept {}
void event_record(void*, void*) { absent(); }
void event_sync(void*) { absent(); }
double event_elapsed_ms(void*, void*) { absent(); }

}  // namespace strata::rt::cuda_backend
