// Code that runs only inside a child process (`strata doctor --child ...`): it dlopen's the
// driver or cuBLAS and prints key=value lines. A crash or hang here cannot hurt the doctor.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "strata/doctor/doctor.hpp"

namespace strata::doctor {

namespace {

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

int child_driver_api(const std::string& libcuda_path) {
  void* lib = dlopen(libcuda_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("error=dlopen failed: %s\n", dlerror());
    return 1;
  }
  using InitFn = int (*)(unsigned);
  using IntOutFn = int (*)(int*);
  using DevGetFn = int (*)(int*, int);
  using NameFn = int (*)(char*, int, int);
  using AttrFn = int (*)(int*, int, int);
  using MemFn = int (*)(std::size_t*, int);
  auto cuInit = sym<InitFn>(lib, "cuInit");
  auto cuDriverGetVersion = sym<IntOutFn>(lib, "cuDriverGetVersion");
  if (!cuInit || !cuDriverGetVersion) {
    std::printf("error=cuInit/cuDriverGetVersion not exported by %s\n", libcuda_path.c_str());
    return 1;
  }
  int version = 0;
  cuDriverGetVersion(&version);
  std::printf("driver_version=%d\n", version);
  int rc = cuInit(0);
  std::printf("cuInit=%d\n", rc);
  if (rc != 0) return 0;
  auto cuDeviceGetCount = sym<IntOutFn>(lib, "cuDeviceGetCount");
  auto cuDeviceGet = sym<DevGetFn>(lib, "cuDeviceGet");
  auto cuDeviceGetName = sym<NameFn>(lib, "cuDeviceGetName");
  auto cuDeviceGetAttribute = sym<AttrFn>(lib, "cuDeviceGetAttribute");
  auto cuDeviceTotalMem = sym<MemFn>(lib, "cuDeviceTotalMem_v2");
  int count = 0;
  if (cuDeviceGetCount) cuDeviceGetCount(&count);
  std::printf("device_count=%d\n", count);
  // CUdevice_attribute values from cuda.h.
  enum { kClockRate = 13, kMultiprocessors = 16, kMemClock = 36, kBusWidth = 37, kCcMajor = 75, kCcMinor = 76 };
  for (int i = 0; i < count && i < 64; ++i) {
    int dev = 0;
    if (!cuDeviceGet || cuDeviceGet(&dev, i) != 0) continue;
    char name[256] = {0};
    if (cuDeviceGetName) cuDeviceGetName(name, sizeof name - 1, dev);
    auto attr = [&](int a) {
      int v = 0;
      if (cuDeviceGetAttribute) cuDeviceGetAttribute(&v, a, dev);
      return v;
    };
    std::size_t mem = 0;
    if (cuDeviceTotalMem) cuDeviceTotalMem(&mem, dev);
    std::printf("device=%d\nname=%s\ncc_major=%d\ncc_minor=%d\nsms=%d\nclock_khz=%d\nmem_clock_khz=%d\nbus_width=%d\nmemory=%zu\n", i,
                name, attr(kCcMajor), attr(kCcMinor), attr(kMultiprocessors), attr(kClockRate), attr(kMemClock), attr(kBusWidth), mem);
  }
  return 0;
}

int child_gpu_compute(const std::string& libcudart_path, const std::string& libcublas_path) {
  // Output, read by probe_compute: device_count=N, then per device deviceI.sgemm_gflops=,
  // deviceI.d2d_gbps= and, for each call that failed, deviceI.error=<function>:<code> (the
  // parent explains the code); error= lines for problems before any device. Every return code
  // is checked: a GPU that cannot compute must be told apart from one that was not measured.
  void* rt = dlopen(libcudart_path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!rt) {
    std::printf("error=dlopen %s failed: %s\n", libcudart_path.c_str(), dlerror());
    return 1;
  }
  void* bl = dlopen(libcublas_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!bl) {
    std::printf("error=dlopen %s failed: %s\n", libcublas_path.c_str(), dlerror());
    return 1;
  }
  using CountFn = int (*)(int*);
  using SetFn = int (*)(int);
  using MallocFn = int (*)(void**, std::size_t);
  using FreeFn = int (*)(void*);
  using MemcpyFn = int (*)(void*, const void*, std::size_t, int);
  using MemsetFn = int (*)(void*, int, std::size_t);
  using SyncFn = int (*)();
  using CreateFn = int (*)(void**);
  using DestroyFn = int (*)(void*);
  using SgemmFn = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int, const float*, float*, int);
  auto getCount = sym<CountFn>(rt, "cudaGetDeviceCount");
  auto setDevice = sym<SetFn>(rt, "cudaSetDevice");
  auto cudaMalloc = sym<MallocFn>(rt, "cudaMalloc");
  auto cudaFree = sym<FreeFn>(rt, "cudaFree");
  auto cudaMemcpy = sym<MemcpyFn>(rt, "cudaMemcpy");
  auto cudaMemset = sym<MemsetFn>(rt, "cudaMemset");
  auto sync = sym<SyncFn>(rt, "cudaDeviceSynchronize");
  auto create = sym<CreateFn>(bl, "cublasCreate_v2");
  auto destroy = sym<DestroyFn>(bl, "cublasDestroy_v2");
  auto sgemm = sym<SgemmFn>(bl, "cublasSgemm_v2");
  if (!getCount || !setDevice || !cudaMalloc || !cudaFree || !cudaMemcpy || !cudaMemset || !sync || !create || !destroy || !sgemm) {
    std::printf("error=missing symbols in %s / %s\n", libcudart_path.c_str(), libcublas_path.c_str());
    return 1;
  }
  int count = 0;
  if (int rc = getCount(&count); rc != 0) {
    std::printf("error=cudaGetDeviceCount:%d\n", rc);
    return 0;
  }
  std::printf("device_count=%d\n", count);
  std::fflush(stdout);  // a later hang must not swallow what was already found
  using clock = std::chrono::steady_clock;
  // Times `op` (which queues work) `reps` times and the synchronize after it. The repetitions
  // are chosen so that the timed run lasts about 0.1 s: one 64 MiB copy is tens of
  // microseconds on a datacenter GPU, too short to time alone, a 4096^3 SGEMM tens of ms on a
  // small one. Returns seconds per repetition, or a negative value after an error.
  auto timed = [&](int d, const char* what, auto op) -> double {
    auto run = [&](int reps) -> double {
      auto t0 = clock::now();
      for (int r = 0; r < reps; ++r)
        if (int rc = op(); rc != 0) {
          std::printf("device%d.error=%s:%d\n", d, what, rc);
          return -1;
        }
      if (int rc = sync(); rc != 0) {
        std::printf("device%d.error=cudaDeviceSynchronize:%d\n", d, rc);
        return -1;
      }
      return std::chrono::duration<double>(clock::now() - t0).count() / reps;
    };
    if (run(1) < 0) return -1;  // warm-up: handle, kernels and clocks
    double one = run(1);
    if (one < 0) return -1;
    const double target_s = 0.1;
    int reps = one > 0 ? int(std::min(10000.0, std::max(3.0, target_s / one))) : 10000;
    return run(reps);
  };
  for (int d = 0; d < count && d < 16; ++d) {
    if (int rc = setDevice(d); rc != 0) {
      std::printf("device%d.error=cudaSetDevice:%d\n", d, rc);
      continue;
    }
    const int n = 4096;
    const std::size_t bytes = std::size_t(n) * n * sizeof(float);
    void* buf[3] = {nullptr, nullptr, nullptr};
    int rc = 0;
    for (auto& p : buf)
      if (rc == 0) rc = cudaMalloc(&p, bytes);
    if (rc != 0) {
      std::printf("device%d.error=cudaMalloc:%d\n", d, rc);
      for (void* p : buf)
        if (p) cudaFree(p);
      continue;
    }
    auto* a = static_cast<float*>(buf[0]);
    auto* b = static_cast<float*>(buf[1]);
    auto* c = static_cast<float*>(buf[2]);
    cudaMemset(a, 0, bytes);
    cudaMemset(b, 0, bytes);
    void* h = nullptr;
    if (int crc = create(&h); crc != 0) {
      std::printf("device%d.error=cublasCreate_v2:%d\n", d, crc);
    } else {
      const float one = 1, zero = 0;
      double s = timed(d, "cublasSgemm_v2", [&] { return sgemm(h, 0, 0, n, n, n, &one, a, n, b, n, &zero, c, n); });
      if (s > 0) std::printf("device%d.sgemm_gflops=%.1f\n", d, 2.0 * n * n * double(n) / s * 1e-9);
      destroy(h);
    }
    std::fflush(stdout);
    // cudaMemcpyDeviceToDevice = 3; a copy reads and writes `bytes`.
    double s = timed(d, "cudaMemcpy", [&] { return cudaMemcpy(b, a, bytes, 3); });
    if (s > 0) std::printf("device%d.d2d_gbps=%.1f\n", d, 2.0 * double(bytes) / s * 1e-9);
    std::fflush(stdout);
    for (void* p : buf) cudaFree(p);
  }
  return 0;
}

}  // namespace strata::doctor
