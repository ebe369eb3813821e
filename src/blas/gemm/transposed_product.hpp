// Few columns against many rows, both operands holding their depth contiguously (op(A) = A^T,
// op(B) = B: the TN product cuBLAS-style callers make for y^T = W x on a small batch): run as
// C^T = op(B)^T op(A)^T, whose few rows are the engine's few-row route -- the many-row operand
// read where it lies, its columns being the original rows -- instead of a transposing pack of
// all of op(A) that each value then pays for over a few columns. C^T is written to a buffer, a
// block of rows at a time, and copied back transposed.
// In-process, 1 thread (Zen 4), as the same product's two forms: f32 4096 x 16 x 4096 1.37x,
// 4096 x 32 x 4096 1.38x, 4096 x 64 x 4096 1.19x, 1024 x 16 x 1024 1.09x; f64 4096 x 16 x 4096
// 1.55x, 2048 x 16 x 2048 1.56x; bf16 4096 x 16 x 4096 1.61x, 1024 x 16 x 1024 1.44x. An op(A)
// within L2 loses (f32 512 x 24 x 512 0.93x: its pack is cheap there), as do columns below half
// a kernel's rows (f32 1024 x 8 x 1024 0.73x: 8 of a 32-row tile's rows), so neither is taken.
#pragma once
#include <algorithm>
#include <cstdint>

#include "gemm_kernels.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/dtype.hpp"
#include "strata/tile/workspace.hpp"

namespace strata::blas::detail {

// Whether c runs better as its transpose on a kernel of `kernel_rows` rows (see above): one
// product, no epilogue (its rows and columns would swap roles), no triangle, automatic
// packing, one stored type (u8 x s8 does not commute), op(A)'s rows and op(B)'s columns
// contiguous, kernel_rows / 2 to 2 x kernel_rows columns (the few-row route's reach) against at
// least four times as many rows, an op(A) beyond L2, and a depth of 256 or more (the copy back,
// m x n values, then stays within a fraction of the m x n x k product).
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
  return c.k * value_bytes >= 1024 && c.m * c.k * value_bytes > int64_t(cpu_features().l2_bytes);
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
    // C(i0 + i, j) from block(j, i): 16 rows at a time, each row's n values one short read.
    for (int64_t ib = 0; ib < w; ib += 16) {
      const int64_t h = std::min<int64_t>(16, w - ib);
      for (int64_t j = 0; j < n; ++j) {
        T* __restrict out = c.c + (i0 + ib) + j * c.ldc;
        const T* __restrict in = block + j + ib * n;
        if (c.beta == T(0))
          for (int64_t i = 0; i < h; ++i) out[i] = in[i * n];
        else
          for (int64_t i = 0; i < h; ++i) out[i] = in[i * n] + c.beta * out[i];
      }
    }
  }
  if (c.route) c.route->transposed = true;
}

}  // namespace strata::blas::detail
