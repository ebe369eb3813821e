// Mixed-precision GEMM in the spirit of cublasGemmEx:
//   C (f32) := alpha * op(A) op(B) + beta * C, with A and B both f32, bf16 or f16.
// Narrow inputs are widened exactly to f32 as they are packed and multiplied on the f32
// kernels with f32 accumulation, so results equal the f32 GEMM of the widened inputs --
// except bf16 on a native kernel: AMX tiles (TDPBF16PS) where the CPU and OS allow them, else
// AVX512_BF16's vdpbf16ps where it outruns widening. Those treat subnormal bf16 inputs as zero,
// flush subnormal results, and (AMX; and vdpbf16ps where few rows read B's pairs as stored)
// add each pair's or tile product's products in their own order: results within the f32
// accumulation bound of the exact sum, bitwise alike for any thread count. A TN product of few
// columns (16 to 64 on AVX-512, whole multiples of 16) runs as its transpose, whose few rows
// read op(A)'s pairs as stored (blas's transposed_product.hpp): the same pair order, chosen by
// the shape alone.
//
// Integer GEMM (the int8 row of cublasGemmEx): C (i32) := alpha * op(A) op(B) + beta * C with
// A u8 or i8, B i8, int32 alpha/beta. Exact, with int32 wrap-around on overflow as on the
// hardware. Without int8 dot-product instructions (VNNI) the inputs are widened to int16
// pairs while packing and multiplied with pmaddwd into int32 (exact for any input); when A is
// u8 with every value below 128 (7-bit quantisation), a byte-quad kernel (vpmaddubsw, which
// cannot saturate on such inputs) does twice the work per instruction. With VNNI any u8 A
// takes the byte quads, and with AMX-INT8 the tile kernels take both u8 and s8 A (products of
// 2^17 multiply-adds and more). STRATA_VERBOSE=1 says which ran; STRATA_AMX=0 declines AMX.
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

void gemm_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha, const void* A,
             DType a_type, index_t lda, const void* B, DType b_type, index_t ldb, int32_t beta, int32_t* C,
             index_t ldc);

// Batches of products of one shape and types (cublasGemmStridedBatchedEx, cublasGemmBatchedEx):
// entry i's operands at A + i * stride_a, B + i * stride_b and C + i * stride_c (strides in
// elements of each matrix's stored type; 0 repeats an operand), or at A[i], B[i], C[i]. The
// entries' C must not overlap. Each entry's result is bitwise that of gemm_ex on it; the shape,
// kernel and blocks are chosen once, small entries are divided among the handle's threads (each
// run whole on one), and the AMX kernels configure their tiles once per thread, not per entry.
// batch_count 0 does nothing; every entry's pointers are checked before any C is written.
void gemm_strided_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
                             const void* A, DType a_type, index_t lda, index_t stride_a, const void* B, DType b_type,
                             index_t ldb, index_t stride_b, float beta, float* C, index_t ldc, index_t stride_c,
                             index_t batch_count);
void gemm_strided_batched_ex(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k,
                             float alpha, const void* A, DType a_type, index_t lda, index_t stride_a, const void* B,
                             DType b_type, index_t ldb, index_t stride_b, float beta, float* C, index_t ldc,
                             index_t stride_c, index_t batch_count);
void gemm_strided_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha,
                             const void* A, DType a_type, index_t lda, index_t stride_a, const void* B, DType b_type,
                             index_t ldb, index_t stride_b, int32_t beta, int32_t* C, index_t ldc, index_t stride_c,
                             index_t batch_count);

void gemm_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
                     const void* const A[], DType a_type, index_t lda, const void* const B[], DType b_type,
                     index_t ldb, float beta, float* const C[], index_t ldc, index_t batch_count);
void gemm_batched_ex(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, float alpha,
                     const void* const A[], DType a_type, index_t lda, const void* const B[], DType b_type,
                     index_t ldb, float beta, float* const C[], index_t ldc, index_t batch_count);
void gemm_batched_ex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, int32_t alpha,
                     const void* const A[], DType a_type, index_t lda, const void* const B[], DType b_type,
                     index_t ldb, int32_t beta, int32_t* const C[], index_t ldc, index_t batch_count);

}  // namespace strata::blas
