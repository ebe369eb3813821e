// The CUDA runtime behind strata::rt. Linked against the static cudart, which finds the
// driver (libcuda.so.1) at run time: a machine without a driver simply reports 0 devices.
#include <cuda_runtime.h>

#include <string>

#include "cuda_backend.hpp"
#include "strata/core/status.hpp"

namespace strata::rt::cuda_backend {

namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw_error(Status::device_error, "", std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                                              cudaGetErrorString(e) + ")");
}
struct DeviceGuard {
  int previous = 0;
  explicit DeviceGuard(int index) {
    cudaGetDevice(&previous);
    check(cudaSetDevice(index), "cudaSetDevice");
  }
  ~DeviceGuard() { cudaSetDevice(previous); }
};
// A trivial kernel so the build proves nvcc produces device code for this project.
__global__ void fill_bytes(unsigned char* p, unsigned char v, std::size_t n) {
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = v;
}
}  // namespace

bool built() noexcept { return true; }

int device_count(std::string* reason) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (reason) *reason = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky-free error so later calls are not confused
    return 0;
  }
  if (n == 0 && reason) *reason = "the CUDA driver reports no devices";
  return n;
}

void info(int index, DeviceInfo& out) {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
  out.name = p.name;
  out.memory_bytes = p.totalGlobalMem;
  out.compute_major = p.major;
  out.compute_minor = p.minor;
  out.multiprocessors = p.multiProcessorCount;
}

void* malloc(int index, std::size_t bytes) {
  DeviceGuard g(index);
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
  if (e == cudaErrorMemoryAllocation)
    throw_error(Status::out_of_memory, "bytes", "cudaMalloc of " + std::to_string(bytes) + " bytes failed");
  check(e, "cudaMalloc");
  fill_bytes<<<1, 1>>>(static_cast<unsigned char*>(p), 0, 0);  // no-op launch keeps the kernel referenced
  return p;
}

void free(int index, void* p) noexcept {
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(index);
  cudaFree(p);
  cudaSetDevice(previous);
}

void memcpy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, void* stream) {
  cudaMemcpyKind k = kind == CopyKind::host_to_device   ? cudaMemcpyHostToDevice
                     : kind == CopyKind::device_to_host ? cudaMemcpyDeviceToHost
                                                        : cudaMemcpyDeviceToDevice;
  check(cudaMemcpyAsync(dst, src, bytes, k, static_cast<cudaStream_t>(stream)), "cudaMemcpyAsync");
}

void* stream_create(int index) {
  DeviceGuard g(index);
  cudaStream_t s{};
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return s;
}
void stream_destroy(void* s) noexcept { cudaStreamDestroy(static_cast<cudaStream_t>(s)); }
void stream_sync(void* s) { check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize"); }

void* event_create(int index) {
  DeviceGuard g(index);
  cudaEvent_t e{};
  check(cudaEventCreate(&e), "cudaEventCreate");
  return e;
}
void event_destroy(void* e) noexcept { cudaEventDestroy(static_cast<cudaEvent_t>(e)); }
void event_record(void* e, void* s) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(s)), "cudaEventRecord");
}
void event_sync(void* e) { check(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize"); }
double event_elapsed_ms(void* start, void* end) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
        "cudaEventElapsedTime");
  return ms;
}

}  // namespace strata::rt::cuda_backend
