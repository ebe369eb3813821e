// Few columns against many rows, both operands holding their depth contiguously (op(A) = A^T,
// op(B) = B: the TN product cuBLAS-style callers make for y^T = W x on a small batch): run as
// C^T = op(B)^T op(A)^T, whose few rows are the engine's few-row route -- the many-row operand
// read where it lies, its columns being the original rows -- instead of a transposing pack of
// all of op(A) that each value then pays for over a few columns. C^T is written to a buffer, a
// block of rows at a time, and copied back transposed.
// In-process against the direct route, 1 thread (Zen 4): f32 4096 x 16 x 4096 1.56x, 4096 x 32
// x 4096 1.54x, 4096 x 64 x 4096 1.28x, 8192 x 16 x 256 1.52x, 512 x 16 x 512 1.41x, 64 x 16 x 256
// 1.26x; f64 8192 x 16 x 256 1.71x, 4096 x 12 x 1024 1.45x, 32 x 8 x 128 1.32x; bf16 4096 x 16 x
// 4096 1.59x, 1024 x 16 x 1024 1.38x, 512 x 16 x 512 1.04x. Where it loses, it is not taken: f32
// and bf16 columns that leave part of a half-height tile empty (f32 2048 x 24 x 1024 0.93x, 2048
// x 40 x 1024 0.91x; f64's ragged counts still gain, its transposing pack moving twice the bytes
// a multiply), columns below half a kernel's rows (f32 1024 x 8 x 1024 0.73x: 8 of a 32-row
// tile), bf16 depths under 512 (8192 x 16 x 256 0.90-0.95x).
#pragma once
#include <algorithm>
#include <cstdint>

#include "gemm_kernels.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/dtype.hpp"
#include "strata/tile/transpose.hpp"
#include "strata/tile/workspace.hpp"

namespace strata::blas::detail {

// Compiled in every kernels_<isa>.cpp (through kernel_instance.hpp): the ISA's inline namespace
// keeps each build's copy its own.
inline namespace STRATA_KERNEL_ISA {

// Whether c runs better as its transpose on a kernel of `kernel_rows` rows (see above): one
// product, no epilogue (its rows and columns would swap roles), no triangle, automatic
// packing, one stored type (u8 x s8 does not commute), op(A)'s rows and op(B)'s columns
// contiguous, kernel_rows / 2 to 2 x kernel_rows columns (the few-row route's reach) in whole
// half-height tiles (but f64), at least four times as many rows, and a depth of 1 KB or more
// (the copy back, m x n values, then stays within a few percent of the product: 4-7% at f32
// 8192 x 16 x 256, where the direct route is 1.5x slower).
// value_bytes: the size of the values the kernel multiplies (f32 for bf16 and f16 widened while
// packing, so that those products take the f32 GEMM's route and bits).
template <class T>
bool transposed_product_pays(const GemmCall<T>& c, int kernel_rows, int64_t value_bytes) {
  if (c.batch != 1 || c.c_array || c.epilogue_count != 0) return false;
  if (c.triangle != tile::Triangle::none || c.a_triangle != tile::Triangle::none ||
      c.b_triangle != tile::Triangle::none || c.packing != GemmCall<T>::Packing::automatic)
    return false;
  if (c.a_type != c.b_type || c.a_cs != 1 || c.b_rs != 1 || c.a_rs == 1 || c.alpha == T(0)) return false;
  if (c.n < kernel_rows / 2 || c.n > 2 * kernel_rows || c.m < 4 * c.n) return false;
  if (c.n % (kernel_rows / 2) != 0 && value_bytes < 8) return false;
  return c.k * value_bytes >= 1024;
}

// C(i, j) = block(j, i) for i < w, j < n (block: n x w, leading dimension n), plus beta C(i, j)
// unless beta is 0 (C not read). 8 x 8 floats (4 x 4 doubles) at a time transposed in
// registers, the ragged edges value by value: value by value throughout, the copy had cost 10%
// of an f32 8192 x 16 x 256 product.
template <class T>
struct TransposedRow;  // one register row of the in-register transposes (members, not
template <>            // template arguments: those would drop the types' unaligned attribute)
struct TransposedRow<float> {
  using type = tile::Floats8;
};
template <>
struct TransposedRow<double> {
  using type = tile::Doubles4;
};

template <class T>
void copy_transposed(const T* block, int64_t n, int64_t w, T* c, int64_t ldc, T beta) {
  using Row = typename TransposedRow<T>::type;
  constexpr int64_t s = sizeof(Row) / sizeof(T);
  auto put_rows = [&](int64_t i, int64_t j) {
    Row r[s];
    for (int64_t q = 0; q < s; ++q) r[q] = *reinterpret_cast<const Row*>(block + j + (i + q) * n);
    auto put = [&](int jj, Row v) {
      Row* out = reinterpret_cast<Row*>(c + i + (j + jj) * ldc);
      *out = beta == T(0) ? v : v + beta * *out;
    };
    if constexpr (s == 8) tile::transpose_8x8(r, put);
    else tile::transpose_4x4(r, put);
  };
  auto put_one = [&](int64_t i, int64_t j) {
    T& out = c[i + j * ldc];
    out = beta == T(0) ? block[j + i * n] : block[j + i * n] + beta * out;
  };
  // Down s columns of C at a time: s store streams, where across all n columns (a page apart
  // for a 1024-row C) each tile's lines shared one L1 set.
  const int64_t wi = w / s * s, nj = n / s * s;
  for (int64_t j = 0; j < nj; j += s) {
    for (int64_t i = 0; i < wi; i += s) put_rows(i, j);
    for (int64_t q = 0; q < s; ++q)
      for (int64_t i = wi; i < w; ++i) put_one(i, j + q);
  }
  for (int64_t j = nj; j < n; ++j)
    for (int64_t i = 0; i < w; ++i) put_one(i, j);
}

// Runs c as C^T = op(B)^T op(A)^T through run (a GemmKernel's run on the same kernel), `rows`
// of C at a time: each block's C^T (n x rows, half of L2 at most) into this thread's buffer 6,
// then C's rows from it (C = block^T, or block^T + beta C). Every value of C is the same sum
// whichever block holds it: block sizes come from the shape only, so the result does not
// depend on the thread count. Where c.route is given it learns the first block's route.
template <class T, class Run>
void run_transposed_product(const GemmCall<T>& c, Run&& run) {
  const int64_t n = c.n;
  const std::size_t a_size = dtype_info(c.a_type).size;
  const int64_t half_l2 = int64_t(cpu_features().l2_bytes / 2);
  const int64_t rows = std::min(c.m, std::max<int64_t>(256, half_l2 / (n * int64_t(sizeof(T))) / 64 * 64));
  T* block = static_cast<T*>(tile::thread_pack_buffer(6).get(sizeof(T) * std::size_t(n * rows)));
  for (int64_t i0 = 0; i0 < c.m; i0 += rows) {
    const int64_t w = std::min(rows, c.m - i0);
    GemmCall<T> t = c;
    t.m = n, t.n = w;
    t.a = c.b, t.a_rs = c.b_cs, t.a_cs = c.b_rs, t.a_type = c.b_type;  // op(A')(j, p) = op(B)(p, j)
    t.b = static_cast<const unsigned char*>(c.a) + std::size_t(i0 * c.a_rs) * a_size;
    t.b_rs = c.a_cs, t.b_cs = c.a_rs, t.b_type = c.a_type;  // op(B')(p, i) = op(A)(i0 + i, p)
    t.beta = T(0), t.c = block, t.ldc = n;
    t.route = i0 == 0 ? c.route : nullptr;
    t.quiet = c.quiet || i0 > 0;
    run(t);
    copy_transposed(block, n, w, c.c + i0, c.ldc, c.beta);
  }
  if (c.route) c.route->transposed = true;
}

}  // namespace STRATA_KERNEL_ISA
}  // namespace strata::blas::detail
