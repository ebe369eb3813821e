// The narrow interface between rt and the CUDA runtime. Implemented by cuda_backend.cu when
// the toolkit is found, and by no_cuda.cpp otherwise; nothing else in strata includes CUDA.
#pragma once
#include <cstddef>
#include <string>

#include "strata/rt/device.hpp"

namespace strata::rt::cuda_backend {

bool built() noexcept;
int device_count(std::string* reason);  // 0 + reason when no driver / no GPU
void info(int index, DeviceInfo& out);
void* malloc(int index, std::size_t bytes);
void free(int index, void* p) noexcept;
enum class CopyKind { host_to_device, device_to_host, device_to_device };
void memcpy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, void* stream);
void* stream_create(int index);
void stream_destroy(void* s) noexcept;
void stream_sync(void* s);
void* event_create(int index);
void event_destroy(void* e) noexcept;
void event_record(void* e, void* s);
void event_sync(void* e);
double event_elapsed_ms(void* start, void* end);

}  // namespace strata::rt::cuda_backend
