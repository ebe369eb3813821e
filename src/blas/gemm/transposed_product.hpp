// Few columns against many rows, both operands holding their depth contiguously (op(A) = A^T,
// op(B) = B: the TN product cuBLAS-style callers make for y^T = W x on a small batch): run as
// C^T = op(B)^T op(A)^T, whose few rows are the engine's few-row route -- the many-row operand
// read where it lies, its columns being the original rows -- instead of a transposing pack of
// all of op(A) that each value then pays for over a few columns. C^T is written to a buffer, a
// block of rows at a time, and copied back transposed.
// In-process against the direct route, 1 thread (Zen 4): f32 4096 x 16 x 4096 1.43x, 4096 x 32
// x 4096 1.46x, 4096 x 64 x 4096 1.24x, 8192 x 16 x 256 1.47x, 512 x 16 x 512 1.40x, 64 x 16 x 256
// 1.25x; f64 4096 x 16 x 4096 1.72x, 8192 x 16 x 256 1.72x, 32 x 8 x 128 1.32x; bf16 4096 x 16 x
// 4096 1.59x, 1024 x 16 x 1024 1.40x, 512 x 16 x 512 1.04x. Where it loses, it is not taken: f32
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
#include "strata/tile/epilogue.hpp"
#include "strata/tile/transpose.hpp"
#include "strata/tile/workspace.hpp"

namespace strata::blas::detail {

// Compiled in every kernels_<isa>.cpp (through kernel_instance.hpp): the ISA's inline namespace
// keeps each build's copy its own.
inline namespace STRATA_KERNEL_ISA {

// Whether c runs better as its transpose on a kernel of `kernel_rows` rows (see above): one
// product, an epilogue of at most 8 steps of bias, activation and scale (transpose_epilogue,
// below), no triangle, automatic packing, one stored type (u8 x s8 does not commute), op(A)'s
// rows and op(B)'s columns contiguous, kernel_rows / 2 to 2 x kernel_rows columns (the few-row
// route's reach) in whole half-height tiles (but f64), at least four times as many rows, and a
// depth of 1 KB or more (the copy back, m x n values, then stays within a few percent of the
// product: 4-7% at f32 8192 x 16 x 256, where the direct route is 1.5x slower).
// value_bytes: the size of the values the kernel multiplies (f32 for bf16 and f16 widened while
// packing, so that those products take the f32 GEMM's route and bits).
constexpr std::size_t max_transposed_epilogue = 8;
template <class T>
bool transposed_product_pays(const GemmCall<T>& c, int kernel_rows, int64_t value_bytes) {
  if (c.batch != 1 || c.c_array || c.epilogue_count > max_transposed_epilogue) return false;
  for (std::size_t q = 0; q < c.epilogue_count; ++q) {
    const tile::EpilogueKind kind = c.epilogue[q].kind;
    if (kind == tile::EpilogueKind::residual_add || kind == tile::EpilogueKind::aux_store ||
        kind == tile::EpilogueKind::quantize_store)
      return false;
  }
  if (c.triangle != tile::Triangle::none || c.a_triangle != tile::Triangle::none ||
      c.b_triangle != tile::Triangle::none || c.packing != GemmCall<T>::Packing::automatic)
    return false;
  if (c.a_type != c.b_type || c.a_cs != 1 || c.b_rs != 1 || c.a_rs == 1 || c.alpha == T(0)) return false;
  return few_columns_transpose(c.m, c.n, c.k, kernel_rows, value_bytes);
}

// Whether a batch's entries (c.batch of them) are large enough to run transposed one call at
// a time: at least 2^18 multiply-adds each. Smaller ones keep the batch path, whose entries
// fetch the next one's operands as they compute (f64 64 x 16 x 128 x 1000: 0.89x transposed;
// f32 64 x 16 x 256 x 1000 1.11x, 128 x 16 x 256 1.22x, 4096 x 16 x 1024 x 8 1.77x).
template <class T>
bool batch_entries_transpose(const GemmCall<T>& c) {
  return (c.batch == 1 && !c.c_array) || c.m * c.n * c.k >= (int64_t(1) << 18);
}

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

// dst(j, i) = src(i, j) for i < rows, j < cols (column-major, leading dimensions lds and ldd):
// 8 x 8 floats (4 x 4 doubles) at a time transposed in registers, the ragged edges value by
// value (value by value throughout, C's copy back had cost 10% of an f32 8192 x 16 x 256
// product), down s columns of dst at a time: s store streams, where across all of a row (a
// page apart for a 1024-row C) each tile's lines had shared one L1 set.
template <class T>
void transpose_copy(const T* src, int64_t lds, int64_t rows, int64_t cols, T* dst, int64_t ldd) {
  using Row = typename TransposedRow<T>::type;
  constexpr int64_t s = sizeof(Row) / sizeof(T);
  auto tile_at = [&](int64_t i, int64_t j) {  // src rows i.., columns j..
    Row r[s];
    for (int64_t q = 0; q < s; ++q) r[q] = *reinterpret_cast<const Row*>(src + i + (j + q) * lds);
    auto put = [&](int ii, Row v) { *reinterpret_cast<Row*>(dst + j + (i + ii) * ldd) = v; };
    if constexpr (s == 8) tile::transpose_8x8(r, put);
    else tile::transpose_4x4(r, put);
  };
  const int64_t ri = rows / s * s, cj = cols / s * s;
  for (int64_t i = 0; i < ri; i += s) {
    for (int64_t j = 0; j < cj; j += s) tile_at(i, j);
    for (int64_t q = 0; q < s; ++q)
      for (int64_t j = cj; j < cols; ++j) dst[j + (i + q) * ldd] = src[i + q + j * lds];
  }
  for (int64_t i = ri; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j + i * ldd] = src[i + j * lds];
}

// The epilogue of C^T for c's epilogue on C, for C's rows from i0 on: per-row vectors become
// per-column ones (offset to the block's first row) and per-column ones per-row; the rest act
// on each value alone. Steps that address a matrix (residual, aux, quantised output) have no
// transposed form here: transposed_product_pays leaves their products alone.
template <class T>
void transpose_epilogue(const GemmCall<T>& c, int64_t i0, tile::EpilogueStep<T>* out) {
  using K = tile::EpilogueKind;
  using B = tile::Broadcast;
  for (std::size_t q = 0; q < c.epilogue_count; ++q) {
    tile::EpilogueStep<T> e = c.epilogue[q];
    if (e.kind == K::bias_row) e.kind = K::bias_col, e.vec += i0;
    else if (e.kind == K::bias_col) e.kind = K::bias_row;
    else if (e.kind == K::scale && e.broadcast == B::row) e.broadcast = B::col, e.vec += i0;
    else if (e.kind == K::scale && e.broadcast == B::col) e.broadcast = B::row;
    out[q] = e;
  }
}

// Runs c as C^T = op(B)^T op(A)^T through run (a GemmKernel's run on the same kernel), `rows`
// of C at a time: each block's C^T (n x rows, half of L2 at most) in this thread's buffer 6 --
// C's rows copied in transposed where beta reads them, so that alpha, beta and the epilogue
// act as on the direct route -- then copied back. Every value of C is the same sum whichever
// block holds it: block sizes come from the shape only, so the result does not depend on the
// thread count. Where c.route is given it learns the first block's route.
template <class T, class Run>
void run_transposed_product(const GemmCall<T>& c, Run&& run) {
  const int64_t n = c.n;
  const std::size_t a_size = dtype_info(c.a_type).size;
  const int64_t half_l2 = int64_t(cpu_features().l2_bytes / 2);
  const int64_t rows = std::min(c.m, std::max<int64_t>(256, half_l2 / (n * int64_t(sizeof(T))) / 64 * 64));
  T* block = static_cast<T*>(tile::thread_pack_buffer(6).get(sizeof(T) * std::size_t(n * rows)));
  tile::EpilogueStep<T> steps[max_transposed_epilogue];
  for (int64_t i0 = 0; i0 < c.m; i0 += rows) {
    const int64_t w = std::min(rows, c.m - i0);
    GemmCall<T> t = c;
    t.m = n, t.n = w;
    t.a = c.b, t.a_rs = c.b_cs, t.a_cs = c.b_rs, t.a_type = c.b_type;  // op(A')(j, p) = op(B)(p, j)
    t.b = static_cast<const unsigned char*>(c.a) + std::size_t(i0 * c.a_rs) * a_size;
    t.b_rs = c.a_cs, t.b_cs = c.a_rs, t.b_type = c.a_type;  // op(B')(p, i) = op(A)(i0 + i, p)
    t.c = block, t.ldc = n;
    if (c.beta != T(0)) transpose_copy(c.c + i0, c.ldc, w, n, block, n);
    if (c.epilogue_count) transpose_epilogue(c, i0, steps), t.epilogue = steps;
    t.route = i0 == 0 ? c.route : nullptr;
    t.quiet = c.quiet || i0 > 0;
    run(t);
    transpose_copy(block, n, n, w, c.c + i0, c.ldc);
  }
  if (c.route) c.route->transposed = true;
}

}  // namespace STRATA_KERNEL_ISA
}  // namespace strata::blas::detail
