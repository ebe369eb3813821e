// An 8 x 8 block of floats (and a 4 x 4 block of doubles) transposed in registers, written once
// over GCC vector extensions: the same source becomes AVX shuffles in an AVX2 build and SSE
// pairs in the portable one. Used by the packing of operands whose k dimension is contiguous
// (pack.hpp: transpose_streams, the k-contiguous A panels) and by the convolution's NCHW <->
// channels-last copies.
#pragma once
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

// Eight floats as one value; loads and stores through it may be unaligned and alias floats.
typedef float Floats8 __attribute__((vector_size(32), aligned(4), may_alias));

// put(j, v) receives row j of the transposed block, v[i] = r[i][j], for j = 0, 4, 1, 5, 2, 6,
// 3, 7 in that order. Shuffles only: any 32-bit pattern comes through bit for bit (the int8
// GEMM's packed slots go through it too).
template <class Put>
[[gnu::always_inline]] inline void transpose_8x8(const Floats8 (&r)[8], Put&& put) {
  typedef int Ints8 __attribute__((vector_size(32)));
  // Three rounds: interleave pairs of rows, then pairs of pairs, then 128-bit halves.
  Floats8 a[8], b[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    a[i] = __builtin_shuffle(r[i], r[i + 1], Ints8{0, 8, 1, 9, 4, 12, 5, 13});
    a[i + 1] = __builtin_shuffle(r[i], r[i + 1], Ints8{2, 10, 3, 11, 6, 14, 7, 15});
  }
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4)
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) {
      b[i + j] = __builtin_shuffle(a[i + j], a[i + j + 2], Ints8{0, 1, 8, 9, 4, 5, 12, 13});
      b[i + j + 2] = __builtin_shuffle(a[i + j], a[i + j + 2], Ints8{2, 3, 10, 11, 6, 7, 14, 15});
    }
  // b[0..3]: result rows {0,4},{2,6},{1,5},{3,7} for source rows 0-3 (low half: the first row,
  // high: the second); b[4..7] the same for source rows 4-7.
  static constexpr int order[4] = {0, 2, 1, 3};
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    put(q, __builtin_shuffle(b[order[q]], b[order[q] + 4], Ints8{0, 1, 2, 3, 8, 9, 10, 11}));
    put(q + 4, __builtin_shuffle(b[order[q]], b[order[q] + 4], Ints8{4, 5, 6, 7, 12, 13, 14, 15}));
  }
}

// put(j, v) receives row j of the transposed block, v[i] = src[i * ld + j] (order as above).
template <class Put>
[[gnu::always_inline]] inline void transpose_8x8(const float* src, int64_t ld, Put&& put) {
  Floats8 r[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = *reinterpret_cast<const Floats8*>(src + i * ld);
  transpose_8x8(r, put);
}

// Slot-major packing of W rows whose depth runs lie along memory (the int8 and bf16 slot
// operands): for each group of 8 rows, row(i) gives row r0 + i's next 8 slots (called only for
// i < rows; rows past `rows` are zero), and put(slot, r0, col, n) receives slot `slot`'s words
// of rows r0 .. r0 + n - 1 (n = min(8, W - r0)) as one 8-word value.
template <int W, class Row, class Put>
[[gnu::always_inline]] inline void transpose_rows_to_slots(int rows, Row&& row, Put&& put) {
  // Unrolled, so that each group's n is a constant for put (a store of known width).
#pragma GCC unroll 4
  for (int r0 = 0; r0 < W; r0 += 8) {
    Floats8 r[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) r[i] = r0 + i < rows ? row(r0 + i) : Floats8{};
    const int n = W - r0 < 8 ? W - r0 : 8;
    transpose_8x8(r, [&](int j, Floats8 col) { put(j, r0, col, n); });
  }
}

// Four doubles as one value, as Floats8.
typedef double Doubles4 __attribute__((vector_size(32), aligned(8), may_alias));

// put(j, v) receives row j of the transposed 4 x 4 block of doubles, v[i] = r[i][j].
template <class Put>
[[gnu::always_inline]] inline void transpose_4x4(const Doubles4 (&r)[4], Put&& put) {
  typedef long long Longs4 __attribute__((vector_size(32)));
  // Interleave pairs of rows, then take 128-bit halves.
  const Doubles4 t0 = __builtin_shuffle(r[0], r[1], Longs4{0, 4, 2, 6});
  const Doubles4 t1 = __builtin_shuffle(r[0], r[1], Longs4{1, 5, 3, 7});
  const Doubles4 t2 = __builtin_shuffle(r[2], r[3], Longs4{0, 4, 2, 6});
  const Doubles4 t3 = __builtin_shuffle(r[2], r[3], Longs4{1, 5, 3, 7});
  put(0, __builtin_shuffle(t0, t2, Longs4{0, 1, 4, 5}));
  put(1, __builtin_shuffle(t1, t3, Longs4{0, 1, 4, 5}));
  put(2, __builtin_shuffle(t0, t2, Longs4{2, 3, 6, 7}));
  put(3, __builtin_shuffle(t1, t3, Longs4{2, 3, 6, 7}));
}

// dst[j * dld + i] = src[i * ld + j] for i, j < 8.
inline void transpose_8x8(const float* src, int64_t ld, float* dst, int64_t dld) {
  transpose_8x8(src, ld, [&](int j, Floats8 v) { *reinterpret_cast<Floats8*>(dst + j * dld) = v; });
}

STRATA_TILE_NS_END
