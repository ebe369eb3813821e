// Internal entry into the GEMM engine: arguments already checked, column-major, no quick-return
// cases left except alpha == 0 / k == 0 (which scale C by beta).
#pragma once
#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"

namespace strata::blas::detail {

// The GEMM-family argument checks shared by gemm and gemm_ex (op values, sizes, leading
// dimensions for the given storage order); throws strata::Error naming the argument.
void check_gemm_shape(Order order, Op transa, Op transb, index_t m, index_t n, index_t k, index_t lda, index_t ldb,
                      index_t ldc);

template <class T>
void gemm_dispatch(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                   const T* A, index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc);

// A batch of products of one shape (gemm_batched, gemm_strided_batched; gemm_ex's forms with
// In = void, the stored types named apart): entry i's operands at a + i * stride_a, ... (in
// elements of their stored types) or, where the arrays are given, at a_array[i], ... `split`:
// the entries are divided among the handle's threads, each product on one.
template <class In, class Out = In>
struct BatchOperands {
  index_t count = 0;
  const In* a = nullptr;
  const In* b = nullptr;
  Out* c = nullptr;
  index_t stride_a = 0, stride_b = 0, stride_c = 0;
  const In* const* a_array = nullptr;
  const In* const* b_array = nullptr;
  Out* const* c_array = nullptr;
  bool split = false;
};
template <class T>
using GemmBatch = BatchOperands<T>;

// The batch in one engine call: the kernel, block sizes and operand policy are chosen once, and
// the next entry's operands are fetched while one computes. Arguments checked, column-major.
template <class T>
void gemm_batch_dispatch(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                         index_t lda, index_t ldb, T beta, index_t ldc, const GemmBatch<T>& batch);

// C := alpha*op(A)*op(B) + beta*C on the `upper`/lower triangle of the n x n C only, the
// other entries neither read nor written (real types: the tile engine skips the micro-tiles
// outside the triangle and merges the ones the diagonal crosses).
template <class T>
void gemm_triangle_dispatch(const Handle& h, bool upper, Op transa, Op transb, index_t n, index_t k, T alpha,
                            const T* A, index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc);

// C := alpha*op(A)*op(B) + beta*C for a real T where op(A) (left: m == k) or op(B) (right:
// k == n) is an upper or lower triangle whose other entries are zeros that are never
// multiplied (each micro-tile's depth stops where they begin): a triangular matrix product
// in one call, as trsm's and trmm's diagonal blocks need.
template <class T>
void gemm_triangular_operand_dispatch(const Handle& h, bool left, bool upper, Op transa, Op transb, index_t m,
                                      index_t n, index_t k, T alpha, const T* A, index_t lda, const T* B, index_t ldb,
                                      T beta, T* C, index_t ldc);

// The micro-tile (MR x NR) of the GEMM kernel serving T on this handle's ISA (for complex T its
// real type's, on which its products run): for callers that cut a product into pieces, so the
// pieces are whole tiles.
struct TileShape {
  int mr, nr;
};
template <class T>
TileShape gemm_tile_shape(const Handle& h);

}  // namespace strata::blas::detail
