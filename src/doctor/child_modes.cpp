// Code that runs only inside a child process (`strata doctor --child ...`): it dlopen's the
// driver or cuBLAS and prints key=value lines. A crash or hang here cannot hurt the doctor.
#include <dlfcn.h>

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
  void* rt = dlopen(libcudart_path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  void* bl = rt ? dlopen(libcublas_path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!rt || !bl) {
    std::fprintf(stderr, "dlopen failed: %s\n", dlerror());
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
    std::fprintf(stderr, "missing symbols in libcudart/libcublas\n");
    return 1;
  }
  int count = 0;
  if (getCount(&count) != 0) return 1;
  using clock = std::chrono::steady_clock;
  for (int d = 0; d < count && d < 16; ++d) {
    if (setDevice(d) != 0) continue;
    const int n = 4096;
    void *a = nullptr, *b = nullptr, *c = nullptr;
    std::size_t bytes = std::size_t(n) * n * sizeof(float);
    if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes) || cudaMalloc(&c, bytes)) continue;
    cudaMemset(a, 0, bytes);
    cudaMemset(b, 0, bytes);
    void* h = nullptr;
    if (create(&h) == 0) {
      const float one = 1, zero = 0;
      sgemm(h, 0, 0, n, n, n, &one, static_cast<float*>(a), n, static_cast<float*>(b), n, &zero, static_cast<float*>(c), n);
      sync();
      const int reps = 10;
      auto t0 = clock::now();
      for (int r = 0; r < reps; ++r)
        sgemm(h, 0, 0, n, n, n, &one, static_cast<float*>(a), n, static_cast<float*>(b), n, &zero, static_cast<float*>(c), n);
      sync();
      double s = std::chrono::duration<double>(clock::now() - t0).count();
      std::printf("device%d.sgemm_gflops=%.1f\n", d, 2.0 * n * n * double(n) * reps / s * 1e-9);
      destroy(h);
    }
    cudaMemcpy(b, a, bytes, 3);  // warm-up, cudaMemcpyDeviceToDevice
    sync();
    auto t0 = clock::now();
    for (int r = 0; r < 10; ++r) cudaMemcpy(b, a, bytes, 3);
    sync();
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    std::printf("device%d.d2d_gbps=%.1f\n", d, 2.0 * double(bytes) * 10 / s * 1e-9);  // read + write
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  return 0;
}

}  // namespace strata::doctor
