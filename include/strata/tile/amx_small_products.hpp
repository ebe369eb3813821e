// Small AMX products, single or batched: C (m x n, m and n at most 32) from a depth of at most
// one 64-byte group (bf16 k <= 32, int8 k <= 64), on tiles configured to the product's own
// shape.
//
// The tiled route (the mainloop, or amx_stream_b.hpp) pads every product to whole 32 x 32 tiles
// and whole 64-byte depth groups with the tiles shaped 16 x 64 bytes, packs or stages op(B),
// and sets its blocks up per call: for a 32^3 product that is most of the work, and the integer
// products under 2^17 multiply-adds ran on VNNI instead (tiles at 0.8-1.1x of it). Here, once
// per call (per thread for a batch), LDTILECFG shapes each tile to the product (a
// tile's rows and bytes per row are free below 16 x 64): op(B)'s tiles hold n columns of
// exactly k values, so each column is loaded from B where it lies (op(B) = B, its depth
// adjacent); op(A)'s tiles hold k / slot rows of m rows' slots, packed per entry by
// interleaving A's columns (op(A) = A); C's tiles are m rows by n columns, loaded and stored
// where C lies. Nothing is read or written outside the operands.
//
// Slots as amx_stream_b.hpp has them (B's natural order, the earlier value in the lower half or
// byte): each sum is the one that route gives.
#pragma once
#include <algorithm>
#include <cstdint>

#include "strata/tile/amx_tiles.hpp"
#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

#if defined(__AMX_TILE__) && defined(__AVX512BW__)

// Whether m x n x k products take the shaped tiles: op(A) = A and op(B) = B with unit
// row strides (a_rs, b_rs: the strides between consecutive rows of op(A) and of op(B)), m and n
// up to 32, and the depth one group of whole slots.
template <class Kernel>
bool amx_small_products_serve(int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t b_rs) {
  constexpr int64_t per_slot = 4 / Kernel::value_bytes;
  return a_rs == 1 && b_rs == 1 && m >= 1 && m <= 32 && n >= 1 && n <= 32 && k >= per_slot &&
         k * Kernel::value_bytes <= 64 && k % per_slot == 0;
}

// The tile shapes of an m x n x k entry (tile roles as in amx_tiles.hpp: accumulator I holds
// C's rows 16 (I % 2) on and columns 16 (I / 2) on; 4, 5 op(B)'s two column halves; 6, 7
// op(A)'s two row halves). A tile with nothing to hold stays unconfigured and unused.
inline AmxConfig amx_small_products_config(int64_t m, int64_t n, int64_t depth_bytes) {
  AmxConfig cfg;
  const int64_t rows[2] = {std::min<int64_t>(m, 16), m - std::min<int64_t>(m, 16)};
  const int64_t cols[2] = {std::min<int64_t>(n, 16), n - std::min<int64_t>(n, 16)};
  for (int i = 0; i < 4; ++i)
    if (rows[i % 2] > 0 && cols[i / 2] > 0)
      cfg.rows[i] = uint8_t(cols[i / 2]), cfg.bytes_per_row[i] = uint16_t(4 * rows[i % 2]);
  for (int h = 0; h < 2; ++h) {
    if (cols[h] > 0) cfg.rows[4 + h] = uint8_t(cols[h]), cfg.bytes_per_row[4 + h] = uint16_t(depth_bytes);
    if (rows[h] > 0) cfg.rows[6 + h] = uint8_t(depth_bytes / 4), cfg.bytes_per_row[6 + h] = uint16_t(4 * rows[h]);
  }
  return cfg;
}

// op(A) (m rows, k values, columns lda elements apart) as the slot rows of its two tiles: slot
// row q at panel + 128 q, rows 0-15 in its first 64 bytes and 16-31 in the next. Rows past m
// read as zero (masked loads: nothing past A's columns is touched).
template <int ValueBytes>
[[gnu::always_inline]] inline void amx_small_pack_a(const void* a, int64_t lda, int64_t m, int64_t k, char* panel) {
  static_assert(ValueBytes == 1 || ValueBytes == 2, "bytes or bf16 pairs");
  const char* base = static_cast<const char*>(a);
  const int64_t col_bytes = lda * ValueBytes;
  if constexpr (ValueBytes == 1) {
    // Quad row q: row i's bytes of columns 4q..4q+3. Bytes, then byte pairs interleaved within
    // each 16-byte lane give four rows a lane (rows 0-3 and 16-19 in the first vector, ...);
    // lane swaps put rows 0-15 in the row's first 64 bytes and 16-31 in its next.
    const __mmask32 present = m >= 32 ? ~__mmask32(0) : (__mmask32(1) << m) - 1;
    auto column = [&](int64_t p) { return _mm256_maskz_loadu_epi8(present, base + p * col_bytes); };
    for (int64_t q = 0; q < k / 4; ++q) {
      const __m256i c0 = column(4 * q), c1 = column(4 * q + 1), c2 = column(4 * q + 2), c3 = column(4 * q + 3);
      const __m256i lo01 = _mm256_unpacklo_epi8(c0, c1), hi01 = _mm256_unpackhi_epi8(c0, c1);
      const __m256i lo23 = _mm256_unpacklo_epi8(c2, c3), hi23 = _mm256_unpackhi_epi8(c2, c3);
      const __m256i r0 = _mm256_unpacklo_epi16(lo01, lo23), r4 = _mm256_unpackhi_epi16(lo01, lo23);
      const __m256i r8 = _mm256_unpacklo_epi16(hi01, hi23), r12 = _mm256_unpackhi_epi16(hi01, hi23);
      char* row = panel + 128 * q;
      _mm256_store_si256(reinterpret_cast<__m256i*>(row), _mm256_permute2x128_si256(r0, r4, 0x20));
      _mm256_store_si256(reinterpret_cast<__m256i*>(row + 32), _mm256_permute2x128_si256(r8, r12, 0x20));
      _mm256_store_si256(reinterpret_cast<__m256i*>(row + 64), _mm256_permute2x128_si256(r0, r4, 0x31));
      _mm256_store_si256(reinterpret_cast<__m256i*>(row + 96), _mm256_permute2x128_si256(r8, r12, 0x31));
    }
  } else {
    // Pair row q: row i's values of columns 2q (low half) and 2q + 1, 32 values a column.
    alignas(64) static constexpr auto index = [] {
      struct Table { uint16_t lo[32], hi[32]; } t{};
      for (int i = 0; i < 16; ++i)
        for (int h = 0; h < 2; ++h) t.lo[2 * i + h] = uint16_t(32 * h + i), t.hi[2 * i + h] = uint16_t(32 * h + 16 + i);
      return t;
    }();
    const __m512i lo = _mm512_load_si512(index.lo), hi = _mm512_load_si512(index.hi);
    const __mmask32 present = m >= 32 ? ~__mmask32(0) : (__mmask32(1) << m) - 1;
    for (int64_t q = 0; q < k / 2; ++q) {
      const __m512i x = _mm512_maskz_loadu_epi16(present, base + 2 * q * col_bytes);
      const __m512i y = _mm512_maskz_loadu_epi16(present, base + (2 * q + 1) * col_bytes);
      _mm512_store_si512(panel + 128 * q, _mm512_permutex2var_epi16(x, lo, y));
      _mm512_store_si512(panel + 128 * q + 64, _mm512_permutex2var_epi16(x, hi, y));
    }
  }
}

// Accumulator I's tile operations with literal tile numbers (the intrinsics paste the number
// into the instruction's text).
template <int I>
struct AmxAccumulator {
  static_assert(I >= 0 && I < 4, "accumulators are tiles 0-3");
  [[gnu::always_inline]] static void load(const void* p, int64_t stride) {
    if constexpr (I == 0) _tile_loadd(0, p, stride);
    else if constexpr (I == 1) _tile_loadd(1, p, stride);
    else if constexpr (I == 2) _tile_loadd(2, p, stride);
    else _tile_loadd(3, p, stride);
  }
  [[gnu::always_inline]] static void store(void* p, int64_t stride) {
    if constexpr (I == 0) _tile_stored(0, p, stride);
    else if constexpr (I == 1) _tile_stored(1, p, stride);
    else if constexpr (I == 2) _tile_stored(2, p, stride);
    else _tile_stored(3, p, stride);
  }
  [[gnu::always_inline]] static void zero() {
    if constexpr (I == 0) _tile_zero(0);
    else if constexpr (I == 1) _tile_zero(1);
    else if constexpr (I == 2) _tile_zero(2);
    else _tile_zero(3);
  }
};

// The entries [lo, hi) of a batch (a single product: 0, 1): entry(i, a, b, c) sets entry i's
// operands (op(A) = A with columns lda elements apart, op(B) = B with columns ldb apart, C with
// ldc), each C = alpha * op(A) op(B) + beta * C (beta 0 never reads C). Requires
// amx_small_products_serve; configures the calling thread's tiles for the range (AmxTiles,
// shaped) and releases them after it.
template <class Kernel, class Entry>
void amx_small_products(int64_t lo, int64_t hi, int64_t m, int64_t n, int64_t k, typename Kernel::T alpha,
                        typename Kernel::T beta, int64_t lda, int64_t ldb, int64_t ldc, Entry&& entry) {
  using T = typename Kernel::T;
  constexpr int vb = Kernel::value_bytes;
  const int64_t depth_bytes = k * vb;
  const AmxConfig cfg = amx_small_products_config(m, n, depth_bytes);
  AmxTiles tiles(cfg);
  const bool rows2 = m > 16, cols2 = n > 16, direct = amx_c_direct(alpha, beta);
  const int64_t c_stride = direct ? ldc * int64_t(sizeof(T)) : 128;
  alignas(64) char panel[16 * 128];  // op(A): up to 16 slot rows of 32 rows
  alignas(64) T buffer[32 * 32];     // the sums, where C is not combined in the tiles
  // op<I>() for each accumulator I in use.
  auto each = [&](auto&& op) {
    op.template operator()<0>();
    if (rows2) op.template operator()<1>();
    if (cols2) {
      op.template operator()<2>();
      if (rows2) op.template operator()<3>();
    }
  };
  for (int64_t i = lo; i < hi; ++i) {
    const void *a, *b;
    T* c;
    entry(i, a, b, c);
    // The next entry's C, fetched for writing while this one computes: the batch streams from L3
    // and a tile store waits for its lines (u8s8s32 batches of 1000 32^3 products 1.2x; fetching
    // two entries ahead, or A's and B's lines too, did no better).
    if (i + 1 < hi) {
      const void *next_a, *next_b;
      T* next_c;
      entry(i + 1, next_a, next_b, next_c);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < m; r += 64 / int64_t(sizeof(T))) __builtin_prefetch(next_c + r + j * ldc, 1);
    }
    amx_small_pack_a<vb>(a, lda, m, k, panel);
    const char* bb = static_cast<const char*>(b);
    const int64_t b_stride = ldb * vb;
    T* out = direct ? c : buffer;
    const int64_t ld = direct ? ldc : 32;
    auto part = [&]<int I>() { return out + 16 * (I % 2) + 16 * (I / 2) * ld; };
    each([&]<int I>() {
      if (direct && beta == T(1)) AmxAccumulator<I>::load(part.template operator()<I>(), c_stride);
      else AmxAccumulator<I>::zero();
    });
    _tile_loadd(4, bb, b_stride);
    if (cols2) _tile_loadd(5, bb + 16 * b_stride, b_stride);
    _tile_loadd(6, panel, 128);
    if (rows2) _tile_loadd(7, panel + 64, 128);
    each([&]<int I>() { Kernel::template product<I>(); });
    each([&]<int I>() { AmxAccumulator<I>::store(part.template operator()<I>(), c_stride); });
    if (!direct)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < m; ++r) {
          T& o = c[r + j * ldc];
          o = beta == T(0) ? Kernel::combine(alpha, T(0), buffer[r + 32 * j], T(0))
                           : Kernel::combine(alpha, beta, buffer[r + 32 * j], o);
        }
  }
}

#endif

STRATA_TILE_NS_END
