/* A stand-in for libcublas used by the doctor's GPU-compute child tests (plain C, no CUDA
   needed): cublasCreate_v2, cublasDestroy_v2 and cublasSgemm_v2, the symbols
   `strata doctor --child gpu-compute` looks up. An SGEMM queues 2*m*n*k / rate seconds of work
   on the fake libcudart's device timeline (found with dlsym, since the child loads libcudart
   RTLD_GLOBAL before this library, as real cuBLAS needs the runtime loaded too).

   Environment:
     FAKE_CUBLAS_TFLOPS        the SGEMM rate in TFLOPS (default 10)
     FAKE_CUBLAS_CREATE_ERROR  cublasCreate_v2's return code (e.g. 1, CUBLAS_STATUS_NOT_INITIALIZED)
     FAKE_CUBLAS_SGEMM_ERROR   cublasSgemm_v2's return code (e.g. 13, CUBLAS_STATUS_EXECUTION_FAILED) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v ? atoi(v) : fallback;
}

static int handle_storage;

int cublasCreate_v2(void** handle) {
  int rc = env_int("FAKE_CUBLAS_CREATE_ERROR", 0);
  *handle = rc ? NULL : &handle_storage;
  return rc;
}

int cublasDestroy_v2(void* handle) { return handle == &handle_storage ? 0 : 1; }

int cublasSgemm_v2(void* handle, int transa, int transb, int m, int n, int k, const float* alpha, const float* a, int lda,
                   const float* b, int ldb, const float* beta, float* c, int ldc) {
  (void)transa, (void)transb, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
  if (handle != &handle_storage) return 1; /* CUBLAS_STATUS_NOT_INITIALIZED */
  int rc = env_int("FAKE_CUBLAS_SGEMM_ERROR", 0);
  if (rc) return rc;
  const char* rate = getenv("FAKE_CUBLAS_TFLOPS");
  double seconds = 2.0 * (double)m * (double)n * (double)k / ((rate ? atof(rate) : 10.0) * 1e12);
  void (*queue)(double) = (void (*)(double))dlsym(RTLD_DEFAULT, "fake_gpu_queue");
  if (queue) {
    queue(seconds);
  } else { /* loaded without the fake runtime: run synchronously */
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  return 0;
}
