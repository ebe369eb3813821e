/* A stand-in for libcudart used by the doctor's GPU-compute child tests (plain C, no CUDA
   needed). It implements exactly what `strata doctor --child gpu-compute` looks up, and models
   a device as a timeline: work queued by a call (a device-to-device copy here, an SGEMM from
   the fake libcublas through fake_gpu_queue) ends at a future instant, and
   cudaDeviceSynchronize sleeps until the last queued work is done. Queuing instead of sleeping
   in every call keeps the child's measured rate close to the scripted one even for short
   operations, because the sleep's overshoot is paid once per synchronize, as with a real GPU.

   Environment:
     FAKE_CUDART_DEVICES         cudaGetDeviceCount's count (default 1)
     FAKE_CUDART_COUNT_ERROR     cudaGetDeviceCount's return code (e.g. 35, insufficient driver)
     FAKE_CUDART_MALLOC_ERROR    cudaMalloc's return code (e.g. 2, cudaErrorMemoryAllocation)
     FAKE_CUDART_BANDWIDTH_GBPS  memory bandwidth in GB/s (default 1000); a copy of n bytes reads
                                 and writes n bytes, so it takes 2n / bandwidth
     FAKE_GPU_HANG               queued work never completes: cudaDeviceSynchronize never returns */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v ? atoi(v) : fallback;
}

static double env_double(const char* name, double fallback) {
  const char* v = getenv(name);
  return v ? atof(v) : fallback;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double busy_until; /* when the device finishes the work queued so far */
static int queued;        /* work was queued since the last synchronize */

/* Queues `seconds` of device work after what is already queued (used by fake_libcublas too). */
void fake_gpu_queue(double seconds) {
  double t = now_s();
  if (busy_until < t) busy_until = t;
  busy_until += seconds;
  queued = 1;
}

int cudaGetDeviceCount(int* n) {
  int rc = env_int("FAKE_CUDART_COUNT_ERROR", 0);
  *n = rc ? 0 : env_int("FAKE_CUDART_DEVICES", 1);
  return rc;
}

int cudaSetDevice(int d) { return d >= 0 && d < env_int("FAKE_CUDART_DEVICES", 1) ? 0 : 101; /* cudaErrorInvalidDevice */ }

int cudaMalloc(void** p, size_t bytes) {
  int rc = env_int("FAKE_CUDART_MALLOC_ERROR", 0);
  if (rc) {
    *p = NULL;
    return rc;
  }
  /* Nothing is ever read or written through these pointers: a unique non-null address is
     enough, and no host memory is spent on the 64 MiB buffers. */
  (void)bytes;
  *p = malloc(1);
  return *p ? 0 : 2;
}

int cudaFree(void* p) {
  free(p);
  return 0;
}

int cudaMemset(void* p, int value, size_t bytes) {
  (void)p, (void)value, (void)bytes;
  return 0;
}

int cudaMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  (void)dst, (void)src;
  if (kind != 3) return 21; /* cudaErrorInvalidMemcpyDirection: only device-to-device is modelled */
  fake_gpu_queue(2.0 * (double)bytes / (env_double("FAKE_CUDART_BANDWIDTH_GBPS", 1000) * 1e9));
  return 0;
}

int cudaDeviceSynchronize(void) {
  if (queued && getenv("FAKE_GPU_HANG"))
    for (;;) sleep(1);
  queued = 0;
  double left = busy_until - now_s();
  if (left > 0) {
    struct timespec ts;
    ts.tv_sec = (time_t)left;
    ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  return 0;
}
