// Peer GEMM libraries loaded at run time with dlopen, so strata never links them and a missing
// peer is just reported as absent. Every adapter exposes column-major BLAS semantics.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace strata::bench {

using SgemmFn = void (*)(void* self, char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                         int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);
using DgemmFn = void (*)(void* self, char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
                         const double* A, int64_t lda, const double* B, int64_t ldb, double beta, double* C,
                         int64_t ldc);

// Row-major u8 x s8 -> s32, C = op(A) op(B) (alpha 1, beta 0, no offsets).
using GemmU8S8S32Fn = void (*)(void* self, char ta, char tb, int64_t m, int64_t n, int64_t k, const uint8_t* A,
                               int64_t lda, const int8_t* B, int64_t ldb, int32_t* C, int64_t ldc);

struct GemmPeer {
  std::string name;     // "openblas", "blis", "onednn"
  std::string library;  // path that was loaded
  void* handle = nullptr;
  void* sgemm_sym = nullptr;
  void* dgemm_sym = nullptr;     // null when the peer has no f64 GEMM (oneDNN)
  void (*set_threads)(void* self, int n) = nullptr;
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  void* u8s8s32_sym = nullptr;
  GemmU8S8S32Fn gemm_u8s8s32 = nullptr;  // oneDNN only
  void* threads_sym = nullptr;
};

// Loads the requested peers ("all" = every known one); absent ones are listed in `missing`
// with the reason. Unsets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE in this process first, so
// OpenBLAS picks the kernels for this CPU rather than a forced older core type (on AVX-512
// CPUs it is then set to SkylakeX: an OpenBLAS that does not know the model falls back to
// generic kernels).
std::vector<GemmPeer> load_gemm_peers(const std::vector<std::string>& wanted, std::vector<std::string>& missing);

}  // namespace strata::bench
