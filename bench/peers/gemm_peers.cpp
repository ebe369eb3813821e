#include "gemm_peers.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace strata::bench {

namespace {

enum CblasOrder { CblasColMajor = 102 };
enum CblasTranspose { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
using cblas_sgemm_t = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                               float*, int);
using cblas_dgemm_t = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                               double*, int);
int cblas_op(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }

void cblas_sgemm_adapter(void* self, char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                         int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  auto f = reinterpret_cast<cblas_sgemm_t>(static_cast<GemmPeer*>(self)->sgemm_sym);
  f(CblasColMajor, cblas_op(ta), cblas_op(tb), int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C,
    int(ldc));
}
void cblas_dgemm_adapter(void* self, char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
                         const double* A, int64_t lda, const double* B, int64_t ldb, double beta, double* C,
                         int64_t ldc) {
  auto f = reinterpret_cast<cblas_dgemm_t>(static_cast<GemmPeer*>(self)->dgemm_sym);
  f(CblasColMajor, cblas_op(ta), cblas_op(tb), int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C,
    int(ldc));
}
void int_threads(void* self, int n) {
  reinterpret_cast<void (*)(int)>(static_cast<GemmPeer*>(self)->threads_sym)(n);
}
void blis_threads(void* self, int n) {
  reinterpret_cast<void (*)(long)>(static_cast<GemmPeer*>(self)->threads_sym)(long(n));
}

// oneDNN's dnnl_sgemm is row-major: column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T,
// and a column-major matrix read row-major is its transpose, so swapping the operands suffices.
using dnnl_sgemm_t = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                             int64_t, float, float*, int64_t);
void dnnl_sgemm_adapter(void* self, char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                        int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  auto f = reinterpret_cast<dnnl_sgemm_t>(static_cast<GemmPeer*>(self)->sgemm_sym);
  f(tb, ta, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
}

using dnnl_gemm_u8s8s32_t = int (*)(char, char, char, int64_t, int64_t, int64_t, float, const uint8_t*, int64_t,
                                    uint8_t, const int8_t*, int64_t, int8_t, float, int32_t*, int64_t, const int32_t*);
void dnnl_u8s8s32_adapter(void* self, char ta, char tb, int64_t m, int64_t n, int64_t k, const uint8_t* A,
                          int64_t lda, const int8_t* B, int64_t ldb, int32_t* C, int64_t ldc) {
  auto f = reinterpret_cast<dnnl_gemm_u8s8s32_t>(static_cast<GemmPeer*>(self)->u8s8s32_sym);
  const int32_t zero = 0;
  f(ta, tb, 'F', m, n, k, 1.0f, A, lda, 0, B, ldb, 0, 0.0f, C, ldc, &zero);
}

void* open_first(std::initializer_list<const char*> paths, std::string& loaded) {
  for (const char* p : paths)
    if (void* h = dlopen(p, RTLD_NOW | RTLD_LOCAL)) {
      loaded = p;
      return h;
    }
  return nullptr;
}

bool wanted_peer(const std::vector<std::string>& wanted, const char* name) {
  for (const auto& w : wanted)
    if (w == "all" || w == name) return true;
  return false;
}

}  // namespace

std::vector<GemmPeer> load_gemm_peers(const std::vector<std::string>& wanted, std::vector<std::string>& missing) {
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("OPENBLAS_L2_SIZE");
  // OpenBLAS 0.3.21 (Debian 12) falls back to its generic Prescott kernels on a CPU model newer
  // than it knows (an Emerald Rapids VM: 15 GFLOPS sgemm at 1024^3, 10% of the peak). Where the
  // CPU has AVX-512, its SkylakeX kernels are what it picks for every AVX-512 model it knows
  // (Zen 5 included), so that is asked for by name.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  std::vector<GemmPeer> peers;
  if (wanted_peer(wanted, "openblas")) {
    GemmPeer p;
    p.name = "openblas";
    p.handle = open_first({"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0"},
                          p.library);
    if (p.handle && (p.sgemm_sym = dlsym(p.handle, "cblas_sgemm")) && (p.dgemm_sym = dlsym(p.handle, "cblas_dgemm"))) {
      p.threads_sym = dlsym(p.handle, "openblas_set_num_threads");
      p.sgemm = cblas_sgemm_adapter, p.dgemm = cblas_dgemm_adapter, p.set_threads = p.threads_sym ? int_threads : nullptr;
      peers.push_back(p);
    } else {
      missing.push_back("openblas (libopenblas.so.0 not found; Debian package libopenblas0-pthread)");
    }
  }
  if (wanted_peer(wanted, "blis")) {
    GemmPeer p;
    p.name = "blis";
    p.handle = open_first({"/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4", "libblis.so.4"}, p.library);
    if (p.handle && (p.sgemm_sym = dlsym(p.handle, "cblas_sgemm")) && (p.dgemm_sym = dlsym(p.handle, "cblas_dgemm"))) {
      p.threads_sym = dlsym(p.handle, "bli_thread_set_num_threads");
      p.sgemm = cblas_sgemm_adapter, p.dgemm = cblas_dgemm_adapter, p.set_threads = p.threads_sym ? blis_threads : nullptr;
      peers.push_back(p);
    } else {
      missing.push_back("blis (libblis.so.4 not found; Debian package libblis4-pthread)");
    }
  }
  if (wanted_peer(wanted, "onednn")) {
    GemmPeer p;
    p.name = "onednn";
    p.handle = open_first({"libdnnl.so.3", "libdnnl.so.2"}, p.library);
    if (p.handle && (p.sgemm_sym = dlsym(p.handle, "dnnl_sgemm"))) {
      // oneDNN from Debian runs on OpenMP; its thread count is OpenMP's.
      p.threads_sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
      if (!p.threads_sym)
        if (void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) p.threads_sym = dlsym(gomp, "omp_set_num_threads");
      p.sgemm = dnnl_sgemm_adapter, p.set_threads = p.threads_sym ? int_threads : nullptr;
      if ((p.u8s8s32_sym = dlsym(p.handle, "dnnl_gemm_u8s8s32"))) p.gemm_u8s8s32 = dnnl_u8s8s32_adapter;
      peers.push_back(p);
    } else {
      missing.push_back("onednn (libdnnl.so not found; Debian package libdnnl-dev)");
    }
  }
  return peers;
}

}  // namespace strata::bench
