// In-order streams, device buffers and timing events.
// On the CPU a stream executes work inline at submission, so it is always synchronised.
#pragma once
#include <cstddef>
#include <memory>

#include "strata/rt/device.hpp"

namespace strata::rt {

class Stream {
 public:
  explicit Stream(Device d = Device::cpu());  // throws for a device that does not exist
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device device() const noexcept { return device_; }
  void synchronize();
  void* native_handle() const noexcept { return native_; }  // cudaStream_t on CUDA

 private:
  Device device_;
  void* native_ = nullptr;
};

// Owning device allocation.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Device d, std::size_t bytes);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }
  Device device() const noexcept { return device_; }

 private:
  void release() noexcept;
  Device device_{};
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Copies between any two devices, ordered on `stream` (its device must be one of the two
// unless both are CPU). Host pointers are plain CPU memory.
void copy(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes, Stream& stream);

// Timing events; elapsed time between two events recorded on the same stream.
class Event {
 public:
  explicit Event(Device d = Device::cpu());
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(Stream& s);
  void synchronize();
  static double elapsed_ms(const Event& start, const Event& end);

 private:
  Device device_;
  void* native_ = nullptr;  // cudaEvent_t on CUDA
  long long cpu_ns_ = 0;
};

}  // namespace strata::rt
