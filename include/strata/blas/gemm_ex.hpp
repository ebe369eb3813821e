// Mixed-precision GEMM in the spirit of cublasGemmEx:
//   C (f32) := alpha * op(A) op(B) + beta * C, with A and B both f32, bf16 or f16.
// Narrow inputs are widened exactly to f32 as they are packed and multiplied on the f32
// kernels with f32 accumulation, so results equal the f32 GEMM of the widened inputs.
// Integer inputs (u8/s8 → s32) are not provided yet and are rejected with not_supported.
#pragma once
#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"
#include "strata/core/dtype.hpp"

namespace strata::blas {

void gemm_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha, const void* A,
             DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, float beta, float* C, index_t ldc);

// The same with an explicit storage order for all three matrices.
void gemm_ex(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
             const void* A, DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, float beta, float* C,
             index_t ldc);

}  // namespace strata::blas
