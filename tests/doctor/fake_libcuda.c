/* A stand-in for the driver's libcuda.so.1 used by the doctor's child-process tests. Its
   behaviour comes from the environment: FAKE_CUDA_INIT (cuInit's return code),
   FAKE_CUDA_VERSION (cuDriverGetVersion), FAKE_CUDA_HANG (cuInit never returns),
   FAKE_CUDA_DEVICES (device count, default 1), FAKE_CUDA_GPU=a100 (an A100-SXM4-80GB instead
   of the default H100 SXM: name, compute capability, SMs and clocks, for the compute layer's
   per-architecture peak). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v ? atoi(v) : fallback;
}

int cuDriverGetVersion(int* v) { *v = env_int("FAKE_CUDA_VERSION", 13000); return 0; }
int cuInit(unsigned flags) {
  (void)flags;
  if (getenv("FAKE_CUDA_HANG")) for (;;) sleep(1);
  return env_int("FAKE_CUDA_INIT", 0);
}
static int a100(void) {
  const char* g = getenv("FAKE_CUDA_GPU");
  return g && strcmp(g, "a100") == 0;
}

int cuDeviceGetCount(int* n) { *n = env_int("FAKE_CUDA_DEVICES", 1); return 0; }
int cuDeviceGet(int* d, int i) { *d = i; return 0; }
int cuDeviceGetName(char* name, int len, int d) {
  (void)d;
  strncpy(name, a100() ? "NVIDIA A100-SXM4-80GB" : "NVIDIA H100 80GB HBM3", (size_t)len);
  return 0;
}
int cuDeviceGetAttribute(int* v, int attr, int d) {
  (void)d;
  if (a100()) {
    switch (attr) {
      case 75: *v = 8; return 0;
      case 76: *v = 0; return 0;
      case 16: *v = 108; return 0;
      case 13: *v = 1410000; return 0;
      case 36: *v = 1593000; return 0;
      case 37: *v = 5120; return 0;
      default: break;
    }
  }
  switch (attr) {
    case 75: *v = 9; break;        /* compute capability major */
    case 76: *v = 0; break;        /* minor */
    case 16: *v = 132; break;      /* SMs */
    case 13: *v = 1980000; break;  /* clock kHz */
    case 36: *v = 2619000; break;  /* memory clock kHz */
    case 37: *v = 5120; break;     /* bus width */
    default: *v = 0;
  }
  return 0;
}
int cuDeviceTotalMem_v2(size_t* bytes, int d) { (void)d; *bytes = (size_t)80 << 30; return 0; }
