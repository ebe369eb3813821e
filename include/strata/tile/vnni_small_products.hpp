// Small u8 x s8 -> s32 products (m <= 64, n <= 128, k <= 128 a multiple of 4, op(A) = A,
// op(B) = B) on AVX-512 VNNI without the tiled engine: single calls and a batch's entries.
//
// The engine packs both operands into slot panels and walks blocks sized for caches, which
// for a 32^3 product is most of the work: on an Emerald Rapids VM without AMX, a batch of 1000
// such products spent a quarter of its time packing and another quarter in per-call set-up
// and edge tiles (0.49-0.73x of oneDNN). Here each block of 32 rows turns A's columns into
// byte quads in registers (four columns at a time: two rounds of unpacks, stored to a stack
// buffer of at most 4 KB), reads B where it lies (a quad of a column is four contiguous bytes:
// one broadcast per column and depth group), and keeps its C block in registers: 32 rows x 8
// columns (16 accumulators) or, for at most 16 rows, 16 x 16. Rows past m are masked on every
// load and store; columns past n read a zero quad and are not stored. Integer sums are exact,
// so the results are bitwise those of the tiled route.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

// Up to 64 rows (two blocks of 32, each reading all of B) and 128 columns; 128-row products
// lost 0.91-1.0x against the engine, whose packed B serves four row blocks.
inline constexpr int64_t vnni_small_max_m = 64, vnni_small_max_n = 128, vnni_small_max_k = 128;

// Whether these products take this path: shape, and both operands with their depth where the
// quads need it (A's rows contiguous per column, B's depth contiguous per column).
inline bool vnni_small_products_serve(int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t b_rs) {
  return m <= vnni_small_max_m && n <= vnni_small_max_n && k <= vnni_small_max_k && k % 4 == 0 && a_rs == 1 &&
         b_rs == 1;
}

// A's m x k bytes (column j at a + j * lda) as quads: depth group g's 32 rows at q[32 g ..],
// row i holding A(i, 4g .. 4g + 3) in one int32 (rows past m zero).
inline void vnni_quads_of_a(int64_t m, int64_t k, const uint8_t* a, int64_t lda, int32_t* q) {
  const __mmask32 rows = m >= 32 ? ~__mmask32(0) : (__mmask32(1) << m) - 1;
  for (int64_t g = 0; g < k / 4; ++g, q += 32) {
    const uint8_t* col = a + 4 * g * lda;
    const __m256i c0 = _mm256_maskz_loadu_epi8(rows, col), c1 = _mm256_maskz_loadu_epi8(rows, col + lda);
    const __m256i c2 = _mm256_maskz_loadu_epi8(rows, col + 2 * lda), c3 = _mm256_maskz_loadu_epi8(rows, col + 3 * lda);
    // Unpacks stay within 128-bit lanes: lane 0 holds rows 0-15, lane 1 rows 16-31.
    const __m256i p01_lo = _mm256_unpacklo_epi8(c0, c1), p01_hi = _mm256_unpackhi_epi8(c0, c1);  // rows 0-7 | 8-15
    const __m256i p23_lo = _mm256_unpacklo_epi8(c2, c3), p23_hi = _mm256_unpackhi_epi8(c2, c3);
    const __m256i r0 = _mm256_unpacklo_epi16(p01_lo, p23_lo), r4 = _mm256_unpackhi_epi16(p01_lo, p23_lo);
    const __m256i r8 = _mm256_unpacklo_epi16(p01_hi, p23_hi), r12 = _mm256_unpackhi_epi16(p01_hi, p23_hi);
    auto put = [&](int row, __m256i v) {  // lane 0: rows row .. row + 3; lane 1: 16 rows further
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + row), _mm256_castsi256_si128(v));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + row + 16), _mm256_extracti128_si256(v, 1));
    };
    put(0, r0), put(4, r4), put(8, r8), put(12, r12);
  }
}

// C's columns [j0, j0 + NB) (those below n stored) from the quads: R vectors of 16 rows.
template <int R, int NB>
[[gnu::always_inline]] inline void vnni_small_block(int64_t m, int64_t n, int64_t j0, int64_t groups,
                                                    const int32_t* q, const int8_t* b, int64_t ldb, int32_t* c,
                                                    int64_t ldc, int32_t alpha, int32_t beta) {
  alignas(64) static constexpr int8_t zero_column[vnni_small_max_k] = {};
  const int8_t* col[NB];
  for (int j = 0; j < NB; ++j) col[j] = j0 + j < n ? b + (j0 + j) * ldb : zero_column;
  __m512i acc[R][NB];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; ++g) {
    __m512i a[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) a[r] = _mm512_loadu_si512(q + 32 * g + 16 * r);
#pragma GCC unroll 16
    for (int j = 0; j < NB; ++j) {
      int32_t quad;
      std::memcpy(&quad, col[j] + 4 * g, 4);
      const __m512i bq = _mm512_set1_epi32(quad);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], a[r], bq);
    }
  }
  // alpha * acc + beta * C, wrap-around int32 (combine_i32); beta == 0 does not read C. Every
  // index a constant (the accumulators stay in registers), the bounds tested inside.
  const __m512i va = _mm512_set1_epi32(alpha), vb = _mm512_set1_epi32(beta);
  __mmask16 mask[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const int64_t rows = m - 16 * r;
    mask[r] = rows >= 16 ? __mmask16(0xffff) : rows <= 0 ? __mmask16(0) : __mmask16((1u << rows) - 1);
  }
#pragma GCC unroll 16
  for (int j = 0; j < NB; ++j) {
    if (j0 + j >= n) break;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      int32_t* out = c + (j0 + j) * ldc + 16 * r;
      __m512i v = alpha == 1 ? acc[r][j] : _mm512_mullo_epi32(acc[r][j], va);
      if (beta != 0) v = _mm512_add_epi32(v, _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(mask[r], out), vb));
      _mm512_mask_storeu_epi32(out, mask[r], v);
    }
  }
}

// Entries [lo, hi): entry(i, a, b, c) names entry i's operands (A m x k with column stride
// lda, B k x n with column stride ldb, C m x n with column stride ldc).
template <class Entry>
void vnni_small_products(int64_t lo, int64_t hi, int64_t m, int64_t n, int64_t k, int32_t alpha, int32_t beta,
                         int64_t lda, int64_t ldb, int64_t ldc, Entry&& entry) {
  alignas(64) int32_t quads[vnni_small_max_k / 4 * 32];
  const int64_t groups = k / 4;
  for (int64_t i = lo; i < hi; ++i) {
    const uint8_t* a;
    const int8_t* b;
    int32_t* c;
    entry(i, a, b, c);
    for (int64_t i0 = 0; i0 < m; i0 += 32) {  // row blocks of 32
      const int64_t rows = std::min<int64_t>(32, m - i0);
      vnni_quads_of_a(rows, k, a + i0, lda, quads);
      if (rows <= 16) {
        for (int64_t j0 = 0; j0 < n; j0 += 16)
          vnni_small_block<1, 16>(rows, n, j0, groups, quads, b, ldb, c + i0, ldc, alpha, beta);
      } else {
        for (int64_t j0 = 0; j0 < n; j0 += 8)
          vnni_small_block<2, 8>(rows, n, j0, groups, quads, b, ldb, c + i0, ldc, alpha, beta);
      }
    }
  }
}

STRATA_TILE_NS_END
