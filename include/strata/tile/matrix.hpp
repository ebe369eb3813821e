// Layouts: a matrix operand as (pointer, row stride, column stride), BLIS style. Column-major
// has rs = 1, row-major cs = 1, and a transpose is a stride swap — so every op/order
// combination reaches the kernels as one shape.
#pragma once
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

namespace strata::tile {

// Which part of C a call computes: all of it, or only the entries on and above (upper) or on
// and below (lower) the diagonal of the whole C — the triangular-output products (BLAS syrk,
// syr2k, gemmt). Micro-tiles wholly outside are skipped, those the diagonal crosses are
// computed into a buffer and only their triangle is merged; the other entries of C are
// neither read nor written. Plain data, outside the ISA namespace: the BLAS layer passes it
// to every ISA's instantiation.
enum class Triangle : uint8_t { none, upper, lower };

// The triangles a product may exploit: `c` as above; `a` / `b`, op(A) (m x k, m == k) or op(B)
// (k x n, k == n) is triangular, its entries outside the triangle zeros that are never
// multiplied: each micro-tile's depth is cut to the range where its MR rows of op(A) and its
// NR columns of op(B) are nonzero (trsm's and trmm's diagonal blocks, as one product instead
// of a product per panel). Every entry's sum is then the one over that range, in order.
struct Triangles {
  Triangle c = Triangle::none, a = Triangle::none, b = Triangle::none;
};

// The largest product the one-block path (tiny_gemm.hpp) takes, in register tiles: op(A)
// within L2 at one k block, each B panel read once.
inline constexpr int one_block_row_tiles = 8, one_block_col_tiles = 24;

// Which way the engine ran a product, for traces: C only scaled (alpha or k zero), the
// one-block path (tiny_gemm.hpp), the tiled path in `parts` parts, of which those that fit
// one block ran on the one-block path (`one_block_parts`), or the depth in `parts` pieces
// (depth_split.hpp, MathMode::fast).
struct GemmRoute {
  enum class Path : uint8_t { scale, small, one_block, tiled, dot, depth_split } path = Path::tiled;
  int parts = 1;  // depth_split: the depth's pieces
  bool one_block_parts = false;
  int64_t mc = 0, kc = 0, nc = 0;  // the tiled path's blocks for this call (0: not tiled)
  int tall_mr = 0, tall_nr = 0;    // the one-block path's tiles on the kernel's tall partner (tiny_gemm_tall)
  // Strips sized by the threads' speeds (gemm_operands): along columns or rows, part 1's first.
  bool split_n = true;
  int64_t second_part_at = 0;  // 0: equal parts, or one
  bool b_in_place = false;      // the tiled path read op(B) in place (else packed, or prepacked)
  bool b_copied = false;        // ... through a copy of each column panel (PackPolicy::copy_b_panels)
  bool transposed = false;      // run as C^T = op(B)^T op(A)^T (blas's few-column TN products)
  bool a_fetched = false;       // A's next block fetched into L2 as each block computes (fetch_next_a)
};

// Rows [lo, hi) of column j of an m-row C that `t` leaves (all of them for none; m == n otherwise).
inline void triangle_rows(Triangle t, int64_t m, int64_t j, int64_t& lo, int64_t& hi) {
  lo = t == Triangle::lower ? (j < m ? j : m) : 0;
  hi = t == Triangle::upper ? (j + 1 < m ? j + 1 : m) : m;
}

}  // namespace strata::tile

STRATA_TILE_NS_BEGIN

template <class T>
struct MatrixView {
  const T* data = nullptr;
  int64_t rs = 1, cs = 1;
  const T& operator()(int64_t i, int64_t j) const { return data[i * rs + j * cs]; }
  MatrixView block(int64_t i, int64_t j) const { return {data + i * rs + j * cs, rs, cs}; }
  MatrixView transposed() const { return {data, cs, rs}; }
};

template <class T>
MatrixView<T> col_major(const T* p, int64_t ld) { return {p, 1, ld}; }

STRATA_TILE_NS_END
