// The boundary between BLAS and the per-ISA GEMM instantiations. Plain structs only: each
// kernels_<isa>.cpp compiles the tile templates in its own ISA namespace and exports one
// function per element type through this table.
#pragma once
#include <cstdint>
#include <type_traits>

#include "strata/core/dtype.hpp"
#include "strata/core/isa.hpp"
#include "strata/tile/epilogue.hpp"
#include "strata/tile/matrix.hpp"

namespace strata::blas::detail {

template <class T>
struct GemmCall {
  int64_t m, n, k;
  T alpha;
  const void* a;       // elements of type a_type (T unless a mixed-precision call)
  int64_t a_rs, a_cs;  // op(A)(i, p) = a[i * a_rs + p * a_cs]
  const void* b;
  int64_t b_rs, b_cs;  // op(B)(p, j) = b[p * b_rs + j * b_cs]
  T beta;
  T* c;
  int64_t ldc;
  int threads;
  // Optional epilogue program run on each finished tile (count 0: none).
  const tile::EpilogueStep<T>* epilogue = nullptr;
  std::size_t epilogue_count = 0;
  // Operand handling: automatic by shape, or forced by an Lt algorithm choice.
  enum class Packing : uint8_t { automatic, pack_both, stream_b, stream_a } packing = Packing::automatic;
  // Stored types of A and B: T, or (with T = float) bf16/f16 pairs or u8/i8 x i8, converted
  // exactly while packing.
  DType a_type = dtype_of_v<T>, b_type = dtype_of_v<T>;
  // m == n, real types, no epilogue: only this triangle of C (syrk, syr2k, gemmt).
  tile::Triangle triangle = tile::Triangle::none;
  // Real types: op(A) (m == k) or op(B) (k == n) triangular, its other entries never multiplied.
  tile::Triangle a_triangle = tile::Triangle::none, b_triangle = tile::Triangle::none;
  // A batch of `batch` products of this shape: entry i's operands at a + i * stride_a, b + i *
  // stride_b, c + i * stride_c (in elements of their stored types), or at a_array[i],
  // b_array[i], c_array[i] where those are given. split_batch: the entries are divided among
  // the threads, each product on one (small products); else they run one after the other, each
  // with all the threads.
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  const void* const* a_array = nullptr;
  const void* const* b_array = nullptr;
  T* const* c_array = nullptr;
  bool split_batch = false;
  // Filled, if given, with the way the engine ran the product (batch: the first entry), for traces.
  tile::GemmRoute* route = nullptr;
  // An entry of a batch after the first: the kernel's choices are not traced again.
  bool quiet = false;
  // MathMode::fast: the depth may be split among threads (tile/depth_split.hpp).
  bool split_depth = false;
};

// A call on these operands, the rest at its defaults. Member by member, not as a braced
// aggregate: GCC zeroed the braced one's 176 bytes with a `rep stos` before filling it, ~30
// cycles to start, a tenth of the overhead of a 32^3 call.
template <class T>
GemmCall<T> make_gemm_call(int64_t m, int64_t n, int64_t k, T alpha, const void* a, int64_t a_rs, int64_t a_cs,
                           const void* b, int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t ldc, int threads) {
  GemmCall<T> call;
  call.m = m, call.n = n, call.k = k, call.alpha = alpha, call.beta = beta, call.threads = threads;
  call.a = a, call.a_rs = a_rs, call.a_cs = a_cs;
  call.b = b, call.b_rs = b_rs, call.b_cs = b_cs;
  call.c = c, call.ldc = ldc;
  return call;
}

// The shape part of the few-column TN rule (transposed_product.hpp): n from half to twice the
// kernel's rows, in whole half-height tiles unless the values are 8 bytes, m >= 4n, a depth of
// 1 KB or more. Out of line in a baseline build: the ISA builds' rule and the Lt's reasons
// (lt.cpp) share it.
bool few_columns_transpose(int64_t m, int64_t n, int64_t k, int kernel_rows, int64_t value_bytes);

struct GemmKernelInfo {
  const char* name;  // e.g. "avx2 f32 16x6"
  int mr, nr;
  int64_t mc, kc, nc;
  bool dot_path = false;  // takes tile/dot_gemm.hpp's shapes there (tile::dot_gemm_pays)
  int64_t small_rows = 0;  // the small path's most rows (tile/small_gemm.hpp), 0 if none
};

template <class T>
struct GemmKernel {
  void (*run)(const GemmCall<T>&) = nullptr;
  // The small-product path (tile/small_gemm.hpp) on operands of type T with no epilogue, taken
  // before a GemmCall is built (building and reading it back was a third of a 4^3 call): runs
  // the product and returns true if the path serves its shape (m, n, k > 0 among it), else
  // returns false untouched. Requires alpha != 0 (the engine only scales C then).
  bool (*run_small)(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
                    int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t ldc) = nullptr;
  GemmKernelInfo (*info)() = nullptr;
  explicit operator bool() const { return run != nullptr; }
};

// One registry per element type, filled by kernels_<isa>.cpp. int32 is the integer GEMM
// (u8/s8 x s8 -> s32, a_type says which).
const IsaTable<GemmKernel<float>>& gemm_kernels_f32();
const IsaTable<GemmKernel<double>>& gemm_kernels_f64();
const IsaTable<GemmKernel<int32_t>>& gemm_kernels_i8();
// bf16 x bf16 -> f32 on a native dot-product kernel, where one exists (else empty: gemm_ex
// widens bf16 to f32 while packing for the f32 kernels).
const IsaTable<GemmKernel<float>>& gemm_kernels_bf16();

template <class T>
const IsaTable<GemmKernel<T>>& gemm_kernels() {
  if constexpr (std::is_same_v<T, float>) return gemm_kernels_f32();
  else if constexpr (std::is_same_v<T, int32_t>) return gemm_kernels_i8();
  else return gemm_kernels_f64();
}

GemmKernel<float> gemm_f32_portable();
GemmKernel<double> gemm_f64_portable();
GemmKernel<float> gemm_f32_avx2();
GemmKernel<double> gemm_f64_avx2();
GemmKernel<float> gemm_f32_avx512();
GemmKernel<double> gemm_f64_avx512();
GemmKernel<int32_t> gemm_i8_portable();
GemmKernel<int32_t> gemm_i8_avx2();
GemmKernel<int32_t> gemm_i8_avx2_vnni();    // call only on CPUs with AVX_VNNI
GemmKernel<int32_t> gemm_i8_avx512_vnni();  // call only on CPUs with AVX512_VNNI
GemmKernel<float> gemm_bf16_avx512();       // bf16 inputs only; call only on CPUs with AVX512_BF16
GemmKernel<float> gemm_bf16_amx();          // bf16 inputs only; call only where amx_ready()
GemmKernel<int32_t> gemm_i8_amx();          // call only where amx_ready() and the CPU has AMX-INT8

}  // namespace strata::blas::detail
