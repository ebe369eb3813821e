#include "strata/rt/stream.hpp"

#include <cstring>
#include <utility>

#include "cuda/cuda_backend.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/status.hpp"
#include "strata/core/timer.hpp"

namespace strata::rt {

namespace {
bool is_cuda(Device d) { return d.kind == DeviceKind::cuda; }
void require_device(Device d) { (void)device_info(d); }  // throws with a clear reason
}  // namespace

Stream::Stream(Device d) : device_(d) {
  require_device(d);
  if (is_cuda(d)) native_ = cuda_backend::stream_create(d.index);
}
Stream::~Stream() {
  if (native_) cuda_backend::stream_destroy(native_);
}
void Stream::synchronize() {
  if (native_) cuda_backend::stream_sync(native_);
}

Buffer::Buffer(Device d, std::size_t bytes) : device_(d), bytes_(bytes) {
  require_device(d);
  ptr_ = is_cuda(d) ? cuda_backend::malloc(d.index, bytes) : aligned_alloc_bytes(bytes);
}
Buffer::~Buffer() { release(); }
Buffer::Buffer(Buffer&& o) noexcept
    : device_(o.device_), ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    device_ = o.device_;
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
void Buffer::release() noexcept {
  if (!ptr_) return;
  if (is_cuda(device_)) cuda_backend::free(device_.index, ptr_);
  else aligned_free(ptr_);
  ptr_ = nullptr;
}

void copy(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes, Stream& stream) {
  if (bytes == 0) return;
  check_arg(dst != nullptr, "dst", "must not be null");
  check_arg(src != nullptr, "src", "must not be null");
  if (!is_cuda(dst_dev) && !is_cuda(src_dev)) {
    std::memmove(dst, src, bytes);
    return;
  }
  check_arg(is_cuda(stream.device()) && (stream.device() == dst_dev || stream.device() == src_dev), "stream", [&] {
    return "a copy involving " + (is_cuda(dst_dev) ? dst_dev : src_dev).name() +
           " must be ordered on a stream of that device";
  });
  using K = cuda_backend::CopyKind;
  K kind = is_cuda(dst_dev) && is_cuda(src_dev) ? K::device_to_device
           : is_cuda(dst_dev)                   ? K::host_to_device
                                                : K::device_to_host;
  cuda_backend::memcpy_async(dst, src, bytes, kind, stream.native_handle());
}

Event::Event(Device d) : device_(d) {
  require_device(d);
  if (is_cuda(d)) native_ = cuda_backend::event_create(d.index);
}
Event::~Event() {
  if (native_) cuda_backend::event_destroy(native_);
}
void Event::record(Stream& s) {
  check_arg(s.device() == device_, "stream", "event and stream must be on the same device");
  if (native_) cuda_backend::event_record(native_, s.native_handle());
  else cpu_ns_ = now_ns();
}
void Event::synchronize() {
  if (native_) cuda_backend::event_sync(native_);
}
double Event::elapsed_ms(const Event& start, const Event& end) {
  check_arg(start.device_ == end.device_, "end", "events must be on the same device");
  if (start.native_) return cuda_backend::event_elapsed_ms(start.native_, end.native_);
  return double(end.cpu_ns_ - start.cpu_ns_) * 1e-6;
}

}  // namespace strata::rt
