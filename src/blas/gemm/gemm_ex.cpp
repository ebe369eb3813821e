// gemm_ex and its batched forms: argument checks, then the f32 kernels with operands widened
// while packing, a native bf16 kernel, or the integer kernels (int16 pairs / byte quads / AMX
// tiles, tile/int8_gemm.hpp) for u8/s8 x s8 -> s32. A single product is a batch of one.
#include "strata/blas/gemm_ex.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "../common/parallel.hpp"
#include "gemm_dispatch.hpp"
#include "gemm_kernels.hpp"
#include "strata/core/log.hpp"
#include "strata/core/status.hpp"

namespace strata::blas {

namespace {

// The products of one call (count 1 for plain gemm_ex), A and B of the stored types named apart.
template <class T>
using ExBatch = detail::BatchOperands<void, T>;

template <class T>
ExBatch<T> strided(const void* A, index_t stride_a, const void* B, index_t stride_b, T* C, index_t stride_c,
                   index_t count) {
  ExBatch<T> o;
  o.a = A, o.b = B, o.c = C, o.stride_a = stride_a, o.stride_b = stride_b, o.stride_c = stride_c, o.count = count;
  return o;
}

template <class T>
ExBatch<T> arrays(const void* const A[], const void* const B[], T* const C[], index_t count) {
  detail::check_batch_arrays(count, A, B, C);  // (a negative count: run_*_out's check)
  ExBatch<T> o;
  o.a_array = A, o.b_array = B, o.c_array = C, o.count = count;
  return o;
}

// Every entry's pointers, before any C is written. reads_ab: the product reads A and B.
template <class T>
void check_pointers(const ExBatch<T>& o, bool reads_ab) {
  const bool many = o.c_array != nullptr;
  for (index_t i = 0; i < (many ? o.count : std::min<index_t>(o.count, 1)); ++i) {
    const char* what = many ? "must not be null (a batch entry)" : "must not be null";
    check_arg((many ? o.c_array[i] : o.c) != nullptr, "C", what);
    if (!reads_ab) continue;
    check_arg((many ? o.a_array[i] : o.a) != nullptr, "A", what);
    check_arg((many ? o.b_array[i] : o.b) != nullptr, "B", what);
  }
}

// The engine call for column-major C = alpha op(A) op(B) + beta C with stored types a/b_type,
// over the batch (its entries divided among the threads when that pays).
template <class T>
detail::GemmCall<T> make_call(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                              DType a_type, index_t lda, DType b_type, index_t ldb, T beta, index_t ldc,
                              const ExBatch<T>& o) {
  detail::GemmCall<T> call =
      detail::make_gemm_call<T>(m, n, k, alpha, o.a, 1, lda, o.b, 1, ldb, beta, o.c, ldc, h.num_threads());
  call.split_depth = h.math_mode() == MathMode::fast;
  if (transa != Op::N) call.a_rs = lda, call.a_cs = 1;
  if (transb != Op::N) call.b_rs = ldb, call.b_cs = 1;
  call.a_type = a_type, call.b_type = b_type;
  if (o.count == 1 && o.c_array) {
    call.a = o.a_array[0], call.b = o.b_array[0], call.c = o.c_array[0];
  } else if (o.count != 1) {
    call.batch = o.count;
    call.stride_a = o.stride_a, call.stride_b = o.stride_b, call.stride_c = o.stride_c;
    call.a_array = o.a_array, call.b_array = o.b_array, call.c_array = o.c_array;
    call.split_batch = detail::split_batch_among_threads(h, o.count, m, n, k, detail::level3_small_problem);
  }
  return call;
}

template <class T>
std::string batch_text(const detail::GemmCall<T>& call) {
  if (call.batch == 1) return "";
  return cat(" batch=", call.batch, call.split_batch ? " (entries divided among " : " (each entry on ", call.threads,
             " thread(s))");
}

void run_f32_out(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
                 DType a_type, index_t lda, DType b_type, index_t ldb, float beta, index_t ldc, ExBatch<float> o) {
  detail::check_gemm_shape(order, transa, transb, m, n, k, lda, ldb, ldc);
  if (dtype_info(a_type).is_integer || dtype_info(b_type).is_integer)
    throw_error(Status::invalid_argument, "a_type",
                "integer inputs need the int32 form of gemm_ex (int32 alpha, beta and C)");
  auto supported = [](DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; };
  check_arg(supported(a_type), "a_type", "must be f32, bf16 or f16");
  check_arg(b_type == a_type, "b_type", "must equal a_type");
  check_arg(o.count >= 0, "batch_count", "must be >= 0");
  if (m == 0 || n == 0 || o.count == 0) return;
  check_pointers(o, k > 0 && alpha != 0.0f);
  // Row-major: C^T = op(B)^T op(A)^T in column-major terms.
  if (order == Order::row_major) {
    std::swap(transa, transb), std::swap(m, n), std::swap(lda, ldb);
    std::swap(o.a, o.b), std::swap(o.stride_a, o.stride_b), std::swap(o.a_array, o.b_array);
  }
  const auto call = make_call(h, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc, o);
  // No product (k 0 or alpha 0): the f32 route's engine only scales C (the native kernels would
  // read A and B, which may then be null).
  if (a_type == DType::bf16 && k > 0 && alpha != 0.0f) {
    if (const auto native = detail::gemm_kernels_bf16().select(h.isa())) {
      if (verbose(1))
        verbose_write("blas", cat("gemm_ex bf16xbf16->f32 ", char(transa), char(transb), " m=", m, " n=", n, " k=", k,
                                  batch_text(call), " kernel='", native.info().name,
                                  "' (native kernel: subnormal bf16 inputs and f32 results flush to zero)"));
      return native.run(call);
    }
  }
  const auto kernel = detail::gemm_kernels<float>().select(h.isa());
  if (verbose(1))
    verbose_write("blas", cat("gemm_ex ", dtype_name(a_type), "x", dtype_name(b_type), "->f32 ", char(transa),
                              char(transb), " m=", m, " n=", n, " k=", k, batch_text(call), " kernel='",
                              kernel.info().name, "' (inputs widened to f32 while packing: no native ",
                              dtype_name(a_type), " dot-product kernel registered for isa=", isa_name(h.isa()), ")"));
  kernel.run(call);
}

// C := beta * C with wrap-around (signed overflow is undefined in C++); beta == 0 writes zeros.
void scale_i32(index_t m, index_t n, int32_t beta, int32_t* C, index_t ldc) {
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      int32_t& c = C[i + j * ldc];
      c = beta == 0 ? 0 : int32_t(uint32_t(c) * uint32_t(beta));
    }
}

void run_i32_out(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha, DType a_type,
                 index_t lda, DType b_type, index_t ldb, int32_t beta, index_t ldc, const ExBatch<int32_t>& o) {
  detail::check_gemm_shape(Order::col_major, transa, transb, m, n, k, lda, ldb, ldc);
  check_arg(a_type == DType::u8 || a_type == DType::i8, "a_type", "must be u8 or i8 for the integer GEMM");
  check_arg(b_type == DType::i8, "b_type", "must be i8 for the integer GEMM");
  check_arg(o.count >= 0, "batch_count", "must be >= 0");
  if (m == 0 || n == 0 || o.count == 0) return;
  const bool product = k > 0 && alpha != 0;
  check_pointers(o, product);
  if (!product) {
    if (beta == 1) return;
    for (index_t i = 0; i < o.count; ++i) scale_i32(m, n, beta, o.c_array ? o.c_array[i] : o.c + i * o.stride_c, ldc);
    return;
  }
  const auto call = make_call(h, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc, o);
  const auto kernel = detail::gemm_kernels<int32_t>().select(h.isa());
  if (verbose(1))
    verbose_write("blas", cat("gemm_ex ", dtype_name(a_type), "x", dtype_name(b_type), "->i32 ", char(transa),
                              char(transb), " m=", m, " n=", n, " k=", k, batch_text(call), " kernel='",
                              kernel.info().name,
                              "' (exact integer kernels: AMX tiles, int16 pairs, or byte quads for u8 A: with VNNI "
                              "any, without it below 128)"));
  kernel.run(call);
}

}  // namespace

void gemm_ex(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
             const void* A, DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, float beta, float* C,
             index_t ldc) {
  run_f32_out(h, order, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc,
              strided(A, 0, B, 0, C, 0, 1));
}

void gemm_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha, const void* A,
             DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, float beta, float* C, index_t ldc) {
  gemm_ex(h, Order::col_major, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, ldc);
}

void gemm_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha, const void* A,
             DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, int32_t beta, int32_t* C,
             index_t ldc) {
  run_i32_out(h, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc, strided(A, 0, B, 0, C, 0, 1));
}

void gemm_strided_batched_ex(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k,
                             float alpha, const void* A, DType a_type, index_t lda, index_t stride_a, const void* B,
                             DType b_type, index_t ldb, index_t stride_b, float beta, float* C, index_t ldc,
                             index_t stride_c, index_t batch_count) {
  run_f32_out(h, order, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc,
              strided(A, stride_a, B, stride_b, C, stride_c, batch_count));
}

void gemm_strided_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
                             const void* A, DType a_type, index_t lda, index_t stride_a, const void* B, DType b_type,
                             index_t ldb, index_t stride_b, float beta, float* C, index_t ldc, index_t stride_c,
                             index_t batch_count) {
  gemm_strided_batched_ex(h, Order::col_major, transa, transb, m, n, k, alpha, A, a_type, lda, stride_a, B, b_type,
                          ldb, stride_b, beta, C, ldc, stride_c, batch_count);
}

void gemm_strided_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha,
                             const void* A, DType a_type, index_t lda, index_t stride_a, const void* B, DType b_type,
                             index_t ldb, index_t stride_b, int32_t beta, int32_t* C, index_t ldc, index_t stride_c,
                             index_t batch_count) {
  run_i32_out(h, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc,
              strided(A, stride_a, B, stride_b, C, stride_c, batch_count));
}

void gemm_batched_ex(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
                     const void* const A[], DType a_type, index_t lda, const void* const B[], DType b_type,
                     index_t ldb, float beta, float* const C[], index_t ldc, index_t batch_count) {
  run_f32_out(h, order, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc,
              arrays(A, B, C, batch_count));
}

void gemm_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
                     const void* const A[], DType a_type, index_t lda, const void* const B[], DType b_type,
                     index_t ldb, float beta, float* const C[], index_t ldc, index_t batch_count) {
  gemm_batched_ex(h, Order::col_major, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, ldc,
                  batch_count);
}

void gemm_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha,
                     const void* const A[], DType a_type, index_t lda, const void* const B[], DType b_type,
                     index_t ldb, int32_t beta, int32_t* const C[], index_t ldc, index_t batch_count) {
  run_i32_out(h, transa, transb, m, n, k, alpha, a_type, lda, b_type, ldb, beta, ldc, arrays(A, B, C, batch_count));
}

}  // namespace strata::blas
