// gemm_ex: argument checks, then the f32 kernels with operands widened while packing, or the
// integer kernels (int16 pairs / byte quads, tile/int8_gemm.hpp) for u8/s8 x s8 -> s32.
#include "strata/blas/gemm_ex.hpp"

#include <algorithm>
#include <cstdint>

#include "gemm_dispatch.hpp"
#include "gemm_kernels.hpp"
#include "strata/core/log.hpp"
#include "strata/core/status.hpp"

namespace strata::blas {

namespace {

// The engine call for column-major C = alpha op(A) op(B) + beta C with stored types a/b_type.
template <class T>
detail::GemmCall<T> make_call(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                              const void* A, DType a_type, index_t lda, const void* B, DType b_type, index_t ldb,
                              T beta, T* C, index_t ldc) {
  detail::GemmCall<T> call =
      detail::make_gemm_call<T>(m, n, k, alpha, A, 1, lda, B, 1, ldb, beta, C, ldc, h.num_threads());
  if (transa != Op::N) call.a_rs = lda, call.a_cs = 1;
  if (transb != Op::N) call.b_rs = ldb, call.b_cs = 1;
  call.a_type = a_type, call.b_type = b_type;
  return call;
}

}  // namespace

void gemm_ex(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
             const void* A, DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, float beta, float* C,
             index_t ldc) {
  detail::check_gemm_shape(order, transa, transb, m, n, k, lda, ldb, ldc);
  if (dtype_info(a_type).is_integer || dtype_info(b_type).is_integer)
    throw_error(Status::invalid_argument, "a_type",
                "integer inputs need the int32 form of gemm_ex (int32 alpha, beta and C)");
  auto supported = [](DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; };
  check_arg(supported(a_type), "a_type", "must be f32, bf16 or f16");
  check_arg(b_type == a_type, "b_type", "must equal a_type");
  const bool col = order == Order::col_major;
  if (m == 0 || n == 0) return;
  check_arg(C != nullptr, "C", "must not be null");
  if (k > 0 && alpha != 0.0f) {
    check_arg(A != nullptr, "A", "must not be null");
    check_arg(B != nullptr, "B", "must not be null");
  }
  // Row-major: C^T = op(B)^T op(A)^T in column-major terms.
  if (!col) {
    std::swap(transa, transb), std::swap(m, n), std::swap(A, B), std::swap(lda, ldb);
  }
  const auto call = make_call(h, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, ldc);
  if (a_type == DType::bf16 && k > 0) {
    if (const auto native = detail::gemm_kernels_bf16().select(h.isa())) {
      if (verbose(1))
        verbose_write("blas", cat("gemm_ex bf16xbf16->f32 ", char(transa), char(transb), " m=", m, " n=", n, " k=", k,
                                  " kernel='", native.info().name,
                                  "' (native kernel: subnormal bf16 inputs and f32 results flush to zero)"));
      return native.run(call);
    }
  }
  const auto kernel = detail::gemm_kernels<float>().select(h.isa());
  if (verbose(1))
    verbose_write("blas", cat("gemm_ex ", dtype_name(a_type), "x", dtype_name(b_type), "->f32 ", char(transa),
                              char(transb), " m=", m, " n=", n, " k=", k, " kernel='", kernel.info().name,
                              "' (inputs widened to f32 while packing: no native ", dtype_name(a_type),
                              " dot-product kernel registered for isa=", isa_name(h.isa()), ")"));
  kernel.run(call);
}

void gemm_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha, const void* A,
             DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, float beta, float* C, index_t ldc) {
  gemm_ex(h, Order::col_major, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, ldc);
}

void gemm_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha, const void* A,
             DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, int32_t beta, int32_t* C,
             index_t ldc) {
  detail::check_gemm_shape(Order::col_major, transa, transb, m, n, k, lda, ldb, ldc);
  check_arg(a_type == DType::u8 || a_type == DType::i8, "a_type", "must be u8 or i8 for the integer GEMM");
  check_arg(b_type == DType::i8, "b_type", "must be i8 for the integer GEMM");
  if (m == 0 || n == 0) return;
  check_arg(C != nullptr, "C", "must not be null");
  const bool product = k > 0 && alpha != 0;
  if (product) {
    check_arg(A != nullptr, "A", "must not be null");
    check_arg(B != nullptr, "B", "must not be null");
  }
  if (!product) {
    // C := beta * C with wrap-around (signed overflow is undefined in C++); beta == 0 writes zeros.
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) {
        int32_t& c = C[i + j * ldc];
        c = beta == 0 ? 0 : int32_t(uint32_t(c) * uint32_t(beta));
      }
    return;
  }
  const auto call = make_call(h, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, ldc);
  const auto kernel = detail::gemm_kernels<int32_t>().select(h.isa());
  if (verbose(1))
    verbose_write("blas", cat("gemm_ex ", dtype_name(a_type), "x", dtype_name(b_type), "->i32 ", char(transa),
                              char(transb), " m=", m, " n=", n, " k=", k, " kernel='", kernel.info().name,
                              "' (exact integer kernels: AMX tiles, int16 pairs, or byte quads for u8 A: with VNNI "
                              "any, without it below 128)"));
  kernel.run(call);
}

}  // namespace strata::blas
