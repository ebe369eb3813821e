// oneDNN's matmul primitive as a GEMM peer for bf16 x bf16 -> f32 and u8 x s8 -> s32, loaded with
// dlopen (libdnnl.so.2/.3) so strata never links it. oneDNN reaches AMX (brgemm kernels) only
// through this primitive, not through its BLAS-like dnnl_gemm_* entry points, so this is the
// peer that shows oneDNN's fastest path on AMX machines.
// Operands are described in place by element strides (no copies, no reorders): any transpose and
// leading dimension is a description. The primitive is built once per problem in prepare();
// run() only points the memories at the caller's buffers and executes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace strata::bench {

enum class MatmulTypes { bf16bf16f32, u8s8s32 };

// C = A B for each of `batch` items: A is m x k, B is k x n, C is m x n; element (i, j) of a
// matrix lies at i * row stride + j * col stride, item b at b * batch stride.
struct MatmulLayout {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t a_row = 0, a_col = 0, a_batch = 0;
  int64_t b_row = 0, b_col = 0, b_batch = 0;
  int64_t c_row = 0, c_col = 0, c_batch = 0;
};

class OnednnMatmul {
 public:
  // nullptr with `why_not` set when the library, its header at build time or a symbol is missing.
  static std::unique_ptr<OnednnMatmul> load(std::string& why_not);
  ~OnednnMatmul();
  OnednnMatmul(const OnednnMatmul&) = delete;
  OnednnMatmul& operator=(const OnednnMatmul&) = delete;

  std::string library() const { return library_; }
  // oneDNN sizes its blocking for the thread count it sees when the primitive is created, so
  // call this before prepare().
  void set_threads(int n);
  // Builds the primitive for this problem. False with `err` when oneDNN rejects it.
  bool prepare(MatmulTypes types, const MatmulLayout& layout, std::string& err);
  // One execution over the whole batch (waits for completion).
  void run(const void* a, const void* b, void* c);
  // oneDNN's name for the kernel it chose for the prepared problem, e.g. "brg:avx512_core_amx".
  const char* impl() const;

  struct State;

 private:
  OnednnMatmul() = default;
  std::string library_;
  std::unique_ptr<State> st_;
};

}  // namespace strata::bench
