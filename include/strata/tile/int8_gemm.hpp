// Integer GEMM pieces: C (int32) = alpha * op(A) op(B) + beta * C with A u8 or s8 and B s8.
//
// Without int8 dot-product instructions (VNNI) the fastest exact route on x86 is pmaddwd:
// it multiplies 16-bit pairs and adds each pair into an int32 lane, exactly (|a|, |b| <= 255
// keep every pair sum far from the int32 limit). So operands are widened to int16 while
// packing and stored as (p, p+1) pairs in int32 slots:
//
//   packed panel of W rows, pair q:  slot[q * W + i] = a(i, 2q) | a(i, 2q + 1) << 16
//
// A panel of kc depth holds ceil(kc / 2) pairs per row; the mainloop still spaces panels
// W * kc slots apart, so the second half of each panel's slots stays unused (never touched,
// so it costs address space, not cache). pmaddbw-style u8 x s8 products (vpmaddubsw) would be
// twice as dense but saturate at int16; this path never does.
//
// When every A value is below 128 (7-bit u8, the usual quantisation for CPUs without VNNI) a
// denser route is exact too: operands packed as 4 consecutive bytes per int32 slot, and
// vpmaddubsw (u8 x s8 pairs -> int16, |sum| <= 2 * 127 * 128 < 2^15: never saturates) followed
// by vpmaddwd with ones (-> int32). The caller checks A's range; QuadOperand/MicroKernelU7Avx2.
//
// With VNNI (AVX512_VNNI) vpdpbusd adds the four u8 x s8 products of a byte-quad slot into an
// int32 lane exactly, for any u8 A: the quad packing then serves every u8 A, at twice the
// density of the pairs (VnniQuadProducts, 32 x 12 tiles of zmm).
//
// int32 arithmetic wraps around on overflow, as the hardware does (computed in uint32).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/operand.hpp"
#include "strata/tile/transpose.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

STRATA_TILE_NS_BEGIN

// An int8 operand (u8 or s8) packed into int32 slots of Depth consecutive depth values:
// Depth 2 = int16 pairs (sign- or zero-extended), Depth 4 = the raw bytes. Rows x depth are
// seen through `v`. Slot q of panel row i holds depth 2q, 2q+1 (or 4q..4q+3), zero-padded.
// SlotGroup > 0: each panel's slots rounded up to a multiple of it, the rest zero, and panels W
// x that many slots apart (AMX reads 16 slots a tile: amx_int8_gemm.hpp); 0: W x kc apart.
template <class S, int Depth, int SlotGroup = 0>
struct SlotOperand {
  static_assert(std::is_same_v<S, uint8_t> || std::is_same_v<S, int8_t>, "slot operands pack u8 or s8 data");
  static_assert(Depth == 2 || Depth == 4, "a slot holds two int16 or four bytes");
  using value_type = int32_t;
  static constexpr bool has_view = false;  // always packed: the kernels read slots only
  MatrixView<S> v;

  SlotOperand shifted(int64_t i0) const { return {v.block(i0, 0)}; }

  template <int W, class T>
  void pack(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    static_assert(std::is_same_v<T, int32_t>, "slots are int32");
    const int64_t slots = (kc + Depth - 1) / Depth;
    const int64_t stored = SlotGroup ? (slots + SlotGroup - 1) / SlotGroup * SlotGroup : slots;
    const int64_t panel = W * (SlotGroup ? stored : kc);
    [[maybe_unused]] int already = 0;  // panels whose whole slots an earlier group packed
    [[maybe_unused]] const int64_t swept = sweep_quads_of_32_rows<W>(i0, len, p0, kc, dst, panel);
    for (int64_t r0 = 0; r0 < len; r0 += W, dst += panel) {
      const int rows = int(std::min<int64_t>(W, len - r0));
      int64_t q = 0;
#if defined(__AVX2__)
      if (v.cs == 1) q = pack_depth_runs<W>(v.block(i0 + r0, p0), rows, kc / (8 * Depth), dst);
#endif
#if defined(__AVX512BW__)
      if constexpr (Depth == 4 && W == 32)
        if (v.rs == 1 && rows == 32)
          q = r0 < swept * W ? kc / 4 : pack_quads_of_32_rows(v.block(i0 + r0, p0), kc / 4, dst);
      if constexpr (Depth == 4 && W == 12 && SlotGroup == 0)
        if (v.rs == 1) {
          if (already > 0) {
            q = kc / 4, --already;
          } else {
            const int cols = int(std::min<int64_t>(48, len - r0));
            q = pack_quads_of_12_column_panels(v.block(i0 + r0, p0), cols, kc / 4, dst, panel);
            already = (cols + 11) / 12 - 1;
          }
        }
#endif
      for (; q < slots; ++q) {
        const MatrixView<S> at = v.block(i0 + r0, p0 + Depth * q);
        const int depth = int(std::min<int64_t>(Depth, kc - Depth * q));
        int32_t* __restrict d = dst + q * W;
        if (!(depth == Depth && pack_slot_fast<W>(at, rows, int(len - r0), d)))
          for (int i = 0; i < rows; ++i) d[i] = word(at, i, depth);
        for (int i = rows; i < W; ++i) d[i] = 0;
      }
      std::memset(dst + slots * W, 0, sizeof(int32_t) * std::size_t((stored - slots) * W));
    }
  }

  // The whole quads of every full 32-row panel of rows [i0, i0 + len) (A not transposed: rows
  // adjacent), in passes of four quads (16 depth columns) across all the panels, panels `panel`
  // slots apart from dst; returns how many panels it packed (0: fewer than two, or not this
  // layout). Panel by panel, each pass read 32 bytes of each of the block's kc columns (a
  // column's 64-byte line shared with the next panel, gone from L1 when that panel came to it,
  // and kc / 4 pages a panel through the TLB); across the panels, each column's lines are read
  // one after the other while its 16 columns' pages stay in the TLB. Stand-alone, from L3:
  // 1024 x 976 blocks 1.3-1.6x faster (lda 1024-4096), 512 x 512 1.25-1.35x.
  template <int W>
  int64_t sweep_quads_of_32_rows([[maybe_unused]] int64_t i0, [[maybe_unused]] int64_t len,
                                 [[maybe_unused]] int64_t p0, [[maybe_unused]] int64_t kc,
                                 [[maybe_unused]] int32_t* __restrict dst, [[maybe_unused]] int64_t panel) const {
#if defined(__AVX512BW__)
    if constexpr (Depth == 4 && W == 32) {
      const int64_t full = len / W, quads = kc / 4;
      if (v.rs != 1 || full < 2) return 0;
      constexpr int64_t pass = 4;
      for (int64_t q0 = 0; q0 < quads; q0 += pass)
        for (int64_t r = 0; r < full; ++r)
          pack_quads_of_32_rows(v.block(i0 + r * W, p0 + 4 * q0), std::min(pass, quads - q0), dst + r * panel + q0 * W);
      return full;
    }
#endif
    return 0;
  }

 private:
#if defined(__AVX2__)
  // 16 (or 8) bytes widened to int16, zero- or sign-extended as S is unsigned or signed.
  static __m256i widen(__m128i x) {
    if constexpr (std::is_same_v<S, uint8_t>) return _mm256_cvtepu8_epi16(x);
    else return _mm256_cvtepi8_epi16(x);
  }
  static __m128i widen_low(__m128i x) {
    if constexpr (std::is_same_v<S, uint8_t>) return _mm_cvtepu8_epi16(x);
    else return _mm_cvtepi8_epi16(x);
  }

  // The first n of eight slots (n <= 8).
  static void store_words(int32_t* d, __m256i x, int n) {
    if (n == 8) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), x);
    store_short(d, _mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1), n);
  }

  // Depth adjacent (cs == 1: B not transposed, A transposed): `groups` runs of 8 slots per
  // row, each one load (a quad run is 32 raw bytes; a pair run 16 bytes widened to 16 int16,
  // which is already eight pair slots), turned slot-major by 8 x 8 transposes of 32-bit words.
  // Rows past `rows` are zero. Returns the slots written. (Slot by slot this was W 4-byte
  // copies per slot: ~8% of a 7-bit 128^3 call, and the pair path's bytewise loop three
  // quarters of a 64^3 one.)
  template <int W>
  static int64_t pack_depth_runs(const MatrixView<S>& at, int rows, int64_t groups, int32_t* __restrict d) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t q0 = 8 * g;
      transpose_rows_to_slots<W>(
          rows,
          [&](int i) {
            const S* src = &at(i, Depth * q0);
            __m256i x;
            if constexpr (Depth == 4) x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
            else x = widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
            return reinterpret_cast<Floats8>(x);
          },
          [&](int j, int r0, Floats8 col, int n) { store_words(d + (q0 + j) * W + r0, reinterpret_cast<__m256i>(col), n); });
    }
    return 8 * groups;
  }
#endif

#if defined(__AVX512BW__)
  // The word permute that takes the byte unpacks of two registers holding depth columns 0|2
  // and 1|3 (rows 0-7 | 16-23 of each pair in `lo`, 8-15 | 24-31 in `hi`) to the quads of rows
  // 0-15 (half 0) or 16-31 (half 1): per row its pair of columns 0,1 then its pair 2,3.
  // (A constant table: built in registers, it had been rebuilt on every panel's call.)
  struct QuadRowsOrder {
    alignas(64) int16_t words[2][32];
  };
  static constexpr QuadRowsOrder quad_rows_table = [] {
    QuadRowsOrder t{};
    for (int half = 0; half < 2; ++half)
      for (int r = 0; r < 16; ++r) {
        const int from = (r < 8 ? 0 : 32) + 8 * half + r % 8;  // lo's words, then hi's (32 on)
        t.words[half][2 * r] = int16_t(from), t.words[half][2 * r + 1] = int16_t(from + 16);
      }
    return t;
  }();
  static __m512i quad_rows_order(int half) { return _mm512_load_si512(quad_rows_table.words[half]); }

  // 32 adjacent rows (A not transposed, the AVX-512 quad tile's panel) into `count` whole quad
  // slots, two 512-bit stores each: depth columns 0|2 and 1|3 of the 32 rows as two registers,
  // a byte interleave per 128-bit lane (column pairs 0,1 and 2,3 of rows 0-7 | 16-23, and
  // 8-15 | 24-31) and a word permute across lanes into rows 0-15 and 16-31. Six shuffles per
  // slot where the 16-row path below takes sixteen (and its per-slot calls): at u8s8s32 128^3
  // A's packing had been a seventh of the call.
  static int64_t pack_quads_of_32_rows(const MatrixView<S>& at, int64_t count, int32_t* __restrict d) {
    const __m512i rows_lo = quad_rows_order(0), rows_hi = quad_rows_order(1);
    const __mmask8 all = 0xff;  // masked forms: GCC 12's plain ones read an undefined vector (-Wmaybe-uninitialized)
    auto column = [&](int64_t p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&at(0, p))); };
    auto low_half = [&](int64_t p) { return _mm512_maskz_loadu_epi64(0x0f, &at(0, p)); };  // 32 bytes, zero above
    for (int64_t q = 0; q < count; ++q, d += 32) {
      const int64_t p = 4 * q;
      const __m512i x = _mm512_maskz_inserti64x4(all, low_half(p), column(p + 2), 1);
      const __m512i y = _mm512_maskz_inserti64x4(all, low_half(p + 1), column(p + 3), 1);
      const __m512i lo = _mm512_unpacklo_epi8(x, y), hi = _mm512_unpackhi_epi8(x, y);
      _mm512_storeu_si512(d, _mm512_permutex2var_epi16(lo, rows_lo, hi));
      _mm512_storeu_si512(d + 16, _mm512_permutex2var_epi16(lo, rows_hi, hi));
    }
    return count;
  }

  // Up to four 12-wide panels of a transposed B (NT, TT: its columns adjacent), from `cols`
  // (1-48) columns, into `count` whole quad slots each, `panel` slots apart: per slot the four
  // depth rows' bytes (one masked load each: nothing past the columns is read, and the missing
  // columns of a last panel come in as its zero padding), interleaved as pack_quads_of_32_rows
  // does into columns 0-15, 16-31 and 32-47, and cut into the panels' twelve by two two-source
  // dword permutes and a rotate, stored masked. Through the 16-row path below, one panel and
  // one slot per call, B's packing had taken 15% of NT 256^3; the last panels of a B whose
  // width is not a multiple of 48 cost as much again as the 48-column groups before them.
  static int64_t pack_quads_of_12_column_panels(const MatrixView<S>& at, int cols, int64_t count,
                                                int32_t* __restrict d, int64_t panel) {
    const int panels = (cols + 11) / 12;
    const __m512i rows_lo = quad_rows_order(0), rows_hi = quad_rows_order(1);
    const __m512i cut1 = _mm512_set_epi32(0, 0, 0, 0, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12);
    const __m512i cut2 = _mm512_set_epi32(0, 0, 0, 0, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8);
    const __mmask64 present = (__mmask64(1) << cols) - 1;
    const __mmask16 twelve = 0x0fff;
    const __mmask8 all = 0xff;  // masked forms: GCC 12's plain ones read an undefined vector (-Wmaybe-uninitialized)
    auto row = [&](int64_t p) { return _mm512_maskz_loadu_epi8(present, &at(0, p)); };
    for (int64_t q = 0; q < count; ++q, d += 12) {
      const int64_t p = 4 * q;
      const __m512i c0 = row(p), c1 = row(p + 1), c2 = row(p + 2), c3 = row(p + 3);
      const __m512i x = _mm512_maskz_shuffle_i64x2(all, c0, c2, 0x44);
      const __m512i y = _mm512_maskz_shuffle_i64x2(all, c1, c3, 0x44);
      const __m512i lo = _mm512_unpacklo_epi8(x, y), hi = _mm512_unpackhi_epi8(x, y);
      const __m512i xs = _mm512_maskz_shuffle_i64x2(all, c0, c2, 0xee);
      const __m512i ys = _mm512_maskz_shuffle_i64x2(all, c1, c3, 0xee);
      const __m512i los = _mm512_unpacklo_epi8(xs, ys), his = _mm512_unpackhi_epi8(xs, ys);
      const __m512i out0 = _mm512_permutex2var_epi16(lo, rows_lo, hi);
      const __m512i out1 = _mm512_permutex2var_epi16(lo, rows_hi, hi);
      const __m512i out2 = _mm512_permutex2var_epi16(los, rows_lo, his);  // columns 32-47
      _mm512_mask_storeu_epi32(d, twelve, out0);
      if (panels > 1) _mm512_mask_storeu_epi32(d + panel, twelve, _mm512_permutex2var_epi32(out0, cut1, out1));
      if (panels > 2) _mm512_mask_storeu_epi32(d + 2 * panel, twelve, _mm512_permutex2var_epi32(out1, cut2, out2));
      if (panels > 3) _mm512_mask_storeu_epi32(d + 3 * panel, twelve, _mm512_maskz_alignr_epi32(0xffff, out2, out2, 4));
    }
    return count;
  }
#endif

  // One full slot of `rows` rows without the element-by-element loop, when the layout allows.
  template <int W>
  static bool pack_slot_fast(const MatrixView<S>& at, int rows, int64_t avail, int32_t* __restrict d) {
    if constexpr (Depth == 4) {
      return pack_quads_fast(at, rows, avail, d);
    } else {
#if defined(__AVX2__)
      if (at.rs == 1 && rows == 16) {
        // Rows adjacent (A not transposed): the two depth columns' 16 bytes widened and
        // interleaved into pairs (the 256-bit unpacks work per 128-bit half: rows 0-3 | 8-11
        // and 4-7 | 12-15, put in order by the two permutes).
        const __m256i c0 = widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&at(0, 0))));
        const __m256i c1 = widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&at(0, 1))));
        const __m256i lo = _mm256_unpacklo_epi16(c0, c1), hi = _mm256_unpackhi_epi16(c0, c1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
        return true;
      }
      if (at.rs == 1 && rows <= 8) {
        // Rows adjacent, a short panel (B's 6-column panels when B is transposed): each depth
        // column's rows as one 8-byte word (built in registers: nothing past the matrix is
        // read), widened and interleaved.
        __m128i c[2];
        for (int b = 0; b < 2; ++b) c[b] = widen_low(short_column(at, b, rows, avail));
        store_short(d, _mm_unpacklo_epi16(c[0], c[1]), _mm_unpackhi_epi16(c[0], c[1]), rows);
        return true;
      }
#endif
      return false;
    }
  }

  // The slot of row i from its first `depth` values (the rest zero).
  static int32_t word(const MatrixView<S>& at, int i, int depth) {
    uint32_t w = 0;
    for (int b = 0; b < depth; ++b) {
      const uint32_t part = Depth == 2 ? uint32_t(uint16_t(int16_t(at(i, b)))) : uint32_t(uint8_t(at(i, b)));
      w |= part << (32 / Depth * b);
    }
    return int32_t(w);
  }

#if defined(__SSE2__)
  // The first n (<= 8) of eight slots, given as two halves, in fixed-size moves for every n: a
  // variable-length copy (GCC's overlapping moves) had been an eighth of a transposed-B call on
  // B's panels of 6, and as `rep movsq`, with its start-up cost per slot, A's last panel of 4
  // rows a third of A's packing at u8s8s32 100^3.
  static void store_short(int32_t* d, __m128i lo, __m128i hi, int n) {
    if (n >= 6) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), lo);
      if (n == 8) return _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 4), hi);
      if (n == 6) return _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 4), hi);
    }
    if (n >= 4) {  // 4, 5 or 7
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), lo);
      return store_few(d + 4, hi, n - 4);
    }
    store_few(d, lo, n);
  }

  // The first n (< 4) words of x.
  static void store_few(int32_t* d, __m128i x, int n) {
    if (n >= 2) _mm_storel_epi64(reinterpret_cast<__m128i*>(d), x);
    if (n == 3) d[2] = _mm_cvtsi128_si32(_mm_srli_si128(x, 8));
    if (n == 1) d[0] = _mm_cvtsi128_si32(x);
  }

  // The bytes of depth column b of `rows` <= 8 adjacent rows in the low 8 bytes. `avail`: rows
  // that exist from the first on (the operand's block); with 8 of them one load serves,
  // otherwise the word is built in registers so nothing past the matrix is read (a 6-byte copy
  // into a zeroed word stalled on store forwarding). Bytes past `rows` are unspecified.
  static __m128i short_column(const MatrixView<S>& at, int b, int rows, int64_t avail) {
    if (avail >= 8) return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&at(0, b)));
    uint64_t w = 0;
    int i = 0;
    if (rows >= 6) {
      uint32_t lo;
      uint16_t hi;
      std::memcpy(&lo, &at(0, b), 4);
      std::memcpy(&hi, &at(4, b), 2);
      w = uint64_t(lo) | uint64_t(hi) << 32;
      i = 6;
    }
    for (; i < rows; ++i) w |= uint64_t(uint8_t(at(i, b))) << (8 * i);
    return _mm_cvtsi64_si128(int64_t(w));
  }
#endif

  // Full quads of `rows` rows without the byte-by-byte loop, when the layout allows.
  static bool pack_quads_fast(const MatrixView<S>& at, int rows, int64_t avail, int32_t* __restrict d) {
    if (at.cs == 1) {
      // The 4 depth values of a row are adjacent bytes (e.g. B not transposed): one word.
      for (int i = 0; i < rows; ++i) std::memcpy(d + i, &at(i, 0), 4);
      return true;
    }
#if defined(__SSE2__)
    if (at.rs == 1 && rows <= 8) {
      // Rows adjacent, a short panel (B's 6-column panels when B is transposed, NT/TT): each
      // depth column's rows as one 8-byte word, then the byte interleave below. (Through the
      // 16-row path this took ~6 small copies per slot: NT ran 15% slower than NN.)
      __m128i c[4];
      for (int b = 0; b < 4; ++b) c[b] = short_column(at, b, rows, avail);
      const __m128i t0 = _mm_unpacklo_epi8(c[0], c[1]), t2 = _mm_unpacklo_epi8(c[2], c[3]);
      store_short(d, _mm_unpacklo_epi16(t0, t2), _mm_unpackhi_epi16(t0, t2), rows);
      return true;
    }
    if (at.rs == 1) {
      // Rows adjacent (e.g. A not transposed in 16-row panels; a transposed B's 12-column panels
      // take pack_quads_of_12_column_panels where AVX-512 BW builds them): interleave
      // 4 columns of up to 16 bytes into words. Whole groups load and store in place. A short
      // group whose 16 rows still lie in the operand (`avail`) loads whole and stores its words
      // (through the copy below, the 12-wide panels of a transposed B cost NT 1024^3 u8s8s32 a
      // fifth of its time with VNNI); other short groups go through a local copy, so nothing
      // past the matrix is read. (The whole-group path kept apart: merged with the short one,
      // NN 64^3 lost 6-30%.)
      auto interleave = [](__m128i c0, __m128i c1, __m128i c2, __m128i c3, __m128i* o) {
        const __m128i t0 = _mm_unpacklo_epi8(c0, c1), t1 = _mm_unpackhi_epi8(c0, c1);
        const __m128i t2 = _mm_unpacklo_epi8(c2, c3), t3 = _mm_unpackhi_epi8(c2, c3);
        _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(t0, t2));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(t0, t2));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(t1, t3));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(t1, t3));
      };
      auto load = [&](int i, int b) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(&at(i, b))); };
      for (int i = 0; i < rows; i += 16) {
        const int n = std::min(16, rows - i);
        if (n == 16) {
          interleave(load(i, 0), load(i, 1), load(i, 2), load(i, 3), reinterpret_cast<__m128i*>(d + i));
          continue;
        }
        alignas(16) int32_t words[16];
        if (avail - i >= 16) {
          interleave(load(i, 0), load(i, 1), load(i, 2), load(i, 3), reinterpret_cast<__m128i*>(words));
        } else {
          alignas(16) uint8_t part[4][16] = {};
          for (int b = 0; b < 4; ++b) std::memcpy(part[b], &at(i, b), std::size_t(n));
          auto col = [&](int b) { return _mm_load_si128(reinterpret_cast<const __m128i*>(part[b])); };
          interleave(col(0), col(1), col(2), col(3), reinterpret_cast<__m128i*>(words));
        }
        if (n == 12) {  // 12 rows: three whole moves (a 48-byte memcpy had cost B's panels NT 128^3 0.88x)
          for (int g = 0; g < 3; ++g) {
            const __m128i w = _mm_load_si128(reinterpret_cast<const __m128i*>(words + 4 * g));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 4 * g), w);
          }
        } else {
          std::memcpy(d + i, words, sizeof(int32_t) * std::size_t(n));
        }
      }
      return true;
    }
#endif
    return false;
  }
};

template <class S> using PairOperand = SlotOperand<S, 2>;  // int16 pairs (pmaddwd)
template <class S> using QuadOperand = SlotOperand<S, 4>;  // byte quads (vpmaddubsw)

// An s8 A packed as byte quads of a + 128 (as u8: each byte's top bit flipped), for VNNI's
// u8 x s8 products: C then holds 128 x (the column sums of op(B)) more, which the caller
// subtracts (exact in wrap-around int32). The flip runs over the packed panels after packing,
// padding included: padded rows are never stored and padded depths meet B's zero padding.
struct ShiftedQuadOperand {
  using value_type = int32_t;
  static constexpr bool has_view = false;
  QuadOperand<int8_t> bytes;

  ShiftedQuadOperand shifted(int64_t i0) const { return {bytes.shifted(i0)}; }

  template <int W, class T>
  void pack(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    bytes.template pack<W>(i0, len, p0, kc, dst);
    const int64_t words = (kc + 3) / 4 * W;
    for (int64_t r0 = 0; r0 < len; r0 += W, dst += W * kc)
      for (int64_t i = 0; i < words; ++i) dst[i] = int32_t(uint32_t(dst[i]) ^ 0x80808080u);
  }
};

// An op(B) whose columns hold their depth contiguously in whole quads (NN: k a multiple of 4,
// the column stride too, 4-byte aligned): each column's quads already are the slots the quad
// kernels broadcast, so where the policy does not pack B the mainloop reads them in place
// (SlotColumnsOperand, operand.hpp); blocks and edge panels it packs go through the byte view.
// For few rows B's packing (a transpose of 32-bit quads) had taken more time than the products
// (u8s8s32 16 x 4096 x 4096); the caller (kernel_instance.hpp) says where it pays.
using QuadColumnsOperand = SlotColumnsOperand<int32_t, int8_t, QuadOperand<int8_t>>;

// The low and high int16 of a packed pair.
inline int32_t pair_lo(int32_t x) { return int16_t(uint16_t(uint32_t(x))); }
inline int32_t pair_hi(int32_t x) { return int16_t(uint16_t(uint32_t(x) >> 16)); }

// alpha * acc + beta * c in wrap-around int32; beta == 0 does not read c.
inline int32_t combine_i32(uint32_t acc, int32_t alpha, int32_t beta, const int32_t* c) {
  uint32_t r = acc * uint32_t(alpha);
  if (beta != 0) r += uint32_t(*c) * uint32_t(beta);
  return int32_t(r);
}

// Generic C++ kernel: MR x NR, any CPU.
template <int MR, int NR>
struct MicroKernelI8Portable {
  using T = int32_t;
  static constexpr int mr = MR, nr = NR;

  // a, b: packed pair panels (a_ps, b_ps, b_js are the packed strides MR, NR, 1).
  static void run(int64_t kc, const int32_t* __restrict a, int64_t, const int32_t* __restrict b, int64_t, int64_t,
                  int32_t* __restrict c, int64_t ldc, int32_t alpha, int32_t beta) {
    uint32_t acc[NR][MR] = {};
    for (int64_t q = 0, pairs = (kc + 1) / 2; q < pairs; ++q, a += MR, b += NR)
      for (int j = 0; j < NR; ++j) {
        const int32_t bl = pair_lo(b[j]), bh = pair_hi(b[j]);
        for (int i = 0; i < MR; ++i) acc[j][i] += uint32_t(pair_lo(a[i]) * bl + pair_hi(a[i]) * bh);
      }
    for (int j = 0; j < NR; ++j)
      for (int i = 0; i < MR; ++i) c[i + j * ldc] = combine_i32(acc[j][i], alpha, beta, c + i + j * ldc);
  }
};

#if defined(__AVX2__)
// int32 vectors for the slot kernels: 8 lanes (AVX2) or 16 (AVX-512).
struct I32x8 {
  using V = __m256i;
  static constexpr int lanes = 8;
  static V zero() { return _mm256_setzero_si256(); }
  static V load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(int32_t* p, V x) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), x); }
  static V set1(int32_t x) { return _mm256_set1_epi32(x); }
  static V add(V a, V b) { return _mm256_add_epi32(a, b); }
  static V mullo(V a, V b) { return _mm256_mullo_epi32(a, b); }
  static V madd16(V a, V b) { return _mm256_madd_epi16(a, b); }
  static V maddubs(V a, V b) { return _mm256_maddubs_epi16(a, b); }
  static V ones16() { return _mm256_set1_epi16(1); }
#if defined(__AVXVNNI__)
  static V dpbusd(V acc, V a, V b) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
#endif
};
#if defined(__AVX512BW__)
struct I32x16 {
  using V = __m512i;
  static constexpr int lanes = 16;
  static V zero() { return _mm512_setzero_si512(); }
  static V load(const int32_t* p) { return _mm512_loadu_si512(p); }
  static void store(int32_t* p, V x) { _mm512_storeu_si512(p, x); }
  static V set1(int32_t x) { return _mm512_set1_epi32(x); }
  static V add(V a, V b) { return _mm512_add_epi32(a, b); }
  static V mullo(V a, V b) { return _mm512_mullo_epi32(a, b); }
  static V madd16(V a, V b) { return _mm512_madd_epi16(a, b); }
  static V maddubs(V a, V b) { return _mm512_maddubs_epi16(a, b); }
  static V ones16() { return _mm512_set1_epi16(1); }
#if defined(__AVX512VNNI__)
  static V dpbusd(V acc, V a, V b) { return _mm512_dpbusd_epi32(acc, a, b); }
#endif
};
#endif

// How one slot of A (a vector of W rows) and one broadcast slot of B add into the int32
// accumulators. any_u8: exact for every u8 A (else only for A below 128).
// int16 pairs: one vpmaddwd, 16 multiply-adds per 256 bits.
struct PairProducts {
  static constexpr int depth = 2;
  static constexpr bool any_u8 = true;
  template <class Vec> static typename Vec::V add(typename Vec::V acc, typename Vec::V a, typename Vec::V b) {
    return Vec::add(acc, Vec::madd16(a, b));
  }
};
// Byte quads, A below 128: vpmaddubsw (never saturates then) and vpmaddwd with ones.
struct QuadProducts {
  static constexpr int depth = 4;
  static constexpr bool any_u8 = false;
  template <class Vec> static typename Vec::V add(typename Vec::V acc, typename Vec::V a, typename Vec::V b) {
    return Vec::add(acc, Vec::madd16(Vec::maddubs(a, b), Vec::ones16()));
  }
};
// Byte quads with VNNI: vpdpbusd adds the four u8 x s8 products of each slot into the int32
// lane exactly (no int16 step, no saturation), 64 multiply-adds per 512 bits.
struct VnniQuadProducts {
  static constexpr int depth = 4;
  static constexpr bool any_u8 = true;
  // vpdpbusd adds into its accumulator (5 cycles, 2 a cycle): 10 independent ones keep it busy.
  static constexpr int accumulators_in_flight = 10;
  template <class Vec> static typename Vec::V add(typename Vec::V acc, typename Vec::V a, typename Vec::V b) {
    return Vec::dpbusd(acc, a, b);
  }
};

// (lanes NV) x NR, NV x NR vector accumulators of int32 lanes, B slots broadcast from the
// packed panel; Products says how a slot's products are added. The full tile is 16 x 6 on
// AVX2 (twelve ymm accumulators) and 32 x 12 on AVX-512 (24 zmm); the half-height and
// narrower ones cover ragged edges through cover_narrowest, reading the full tile's panels
// (a_ps, b_ps: slot strides). With only the full tile, the last column panel of 128 (21 x 6 +
// 2) ran a whole 16 x 6 tile for two columns. The full tile's 12 or 24 accumulators hide the
// adds' latency; the narrow edges rotate sets (`sets`).
//
// Edge widths step down 12, 8, 6, 4, 3, 2, 1 (narrower_slot_width). Halving (12, 6, 3, 1) had
// covered 8 columns as 6 + 3 and 4 as 3 + 1, and 11 with a whole 12-wide tile on a copy; powers
// of two alone (8, 4, 2, 1) covered 3 as 2 + 1 and 7 as 4 + 2 + 1 (128 x 99 x 128 0.95-0.97x).
// Both steps: in-process, u8s8s32 128^3 1.07-1.09x, 128 x 95 x 128 1.07x, 200^3 1.03x, 70 x 33 x
// 260 1.04x, NT 100^3-128^3 1.04-1.05x, every other remainder 0.99-1.01x.
constexpr int narrower_slot_width(int width) {
  constexpr int widths[] = {12, 8, 6, 4, 3, 2, 1};
  for (int w : widths)
    if (w < width) return w;
  return 1;
}

template <class Vec, class Products, int NV, int NR, bool Full = true>
struct MicroKernelSlots {
  using T = int32_t;
  static constexpr int mr = Vec::lanes * NV, nr = NR, depth = Products::depth;
  static constexpr bool any_u8 = Products::any_u8;
  using HalfRows = MicroKernelSlots<Vec, Products, (NV > 1 ? NV / 2 : 1), NR, false>;
  using NarrowCols = MicroKernelSlots<Vec, Products, NV, narrower_slot_width(NR), false>;
  // A transposed B's byte quads are packed four 12-column panels a pass
  // (SlotOperand::pack_quads_of_12_column_panels); the mainloop packs them a group at a time.
  static constexpr int b_panels_per_pack = Products::depth == 4 && NR == 12 ? 4 : 1;

  // The full tile stays inlined in the mainloop (out of line, the call cost 5-7% of a 64^3
  // call: a 16-slot tile is ~200 cycles); the edge kernels are calls of their own.
  // B's slots: packed (b_ps NR, b_js 1) or read in place from depth-contiguous columns (b_ps 1,
  // b_js the column stride in slots: QuadColumnsOperand).
  [[gnu::always_inline]] static void run(int64_t kc, const int32_t* a, int64_t a_ps, const int32_t* b, int64_t b_ps,
                                         int64_t b_js, int32_t* c, int64_t ldc, int32_t alpha, int32_t beta) {
    if constexpr (Full) {
      if (b_ps == NR && b_js == 1) compute<mr, NR, 1>(kc, a, a_ps, b, b_ps, 1, c, ldc, alpha, beta);
      else compute<mr, 1, 0>(kc, a, a_ps, b, b_ps, b_js, c, ldc, alpha, beta);
    } else {
      edge(kc, a, a_ps, b, b_ps, b_js, c, ldc, alpha, beta);
    }
  }

 private:
  using V = typename Vec::V;

  // Accumulator sets an edge kernel's steps rotate through: vpdpbusd's accumulator is an
  // operand of its own latency chain, so a narrow edge (32 x 1: two accumulators) ran at a fifth
  // of its rate; its steps now alternate between up to four sets, added at the end (exact in
  // int32, so no order matters). The int16 routes add with a 1-cycle vpaddd: one set.
  static constexpr int sets = [] {
    int in_flight = 1;
    if constexpr (requires { Products::accumulators_in_flight; }) in_flight = Products::accumulators_in_flight;
    const int per_set = NR * NV, registers = Vec::lanes == 16 ? 32 : 16;
    int n = (in_flight + per_set - 1) / per_set;
    n = n < 4 ? n : 4;
    while (n > 1 && n * per_set + NV + 1 > registers) --n;
    return n;
  }();

  [[gnu::noinline]] static void edge(int64_t kc, const int32_t* a, int64_t a_ps, const int32_t* b, int64_t b_ps,
                                     int64_t b_js, int32_t* c, int64_t ldc, int32_t alpha, int32_t beta) {
    if constexpr (sets == 1) {
      compute<0, 0, 0>(kc, a, a_ps, b, b_ps, b_js, c, ldc, alpha, beta);
    } else {
      V acc[sets][NR][NV];
      for (int s = 0; s < sets; ++s)
        for (int j = 0; j < NR; ++j)
          for (int v = 0; v < NV; ++v) acc[s][j][v] = Vec::zero();
      const int64_t slots = (kc + depth - 1) / depth, whole = slots / sets * sets;
      for (int64_t q = 0; q < whole; q += sets)
#pragma GCC unroll 4
        for (int s = 0; s < sets; ++s) step(a + (q + s) * a_ps, b + (q + s) * b_ps, b_js, acc[s]);
      for (int64_t q = whole; q < slots; ++q) step(a + q * a_ps, b + q * b_ps, b_js, acc[0]);
      for (int s = 1; s < sets; ++s)
        for (int j = 0; j < NR; ++j)
          for (int v = 0; v < NV; ++v) acc[0][j][v] = Vec::add(acc[0][j][v], acc[s][j][v]);
      store(acc[0], c, ldc, alpha, beta);
    }
  }

  // One slot's products of A's rows and B's NR columns (b_js apart) into acc.
  [[gnu::always_inline]] static void step(const int32_t* __restrict a, const int32_t* __restrict b, int64_t b_js,
                                          V (&acc)[NR][NV]) {
    V av[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) av[v] = Vec::load(a + Vec::lanes * v);
#pragma GCC unroll 12
    for (int j = 0; j < NR; ++j) {
      const V bj = Vec::set1(b[j * b_js]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[j][v] = Products::template add<Vec>(acc[j][v], av[v], bj);
    }
  }

  // APS, BPS, BJS: the slot strides as constants (the full tile on its own packed panels, or on
  // B in place: BPS 1), or 0 for the run-time ones (the edge kernels read the full tile's panels).
  template <int APS, int BPS, int BJS>
  [[gnu::always_inline]] static void compute(int64_t kc, const int32_t* __restrict a, int64_t a_ps,
                                             const int32_t* __restrict b, int64_t b_ps, int64_t b_js,
                                             int32_t* __restrict c, int64_t ldc, int32_t alpha, int32_t beta) {
    V acc[NR][NV];
#pragma GCC unroll 12
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[j][v] = Vec::zero();
    accumulate<APS, BPS, BJS>((kc + depth - 1) / depth, a, a_ps, b, b_ps, b_js, acc);
    store(acc, c, ldc, alpha, beta);
  }

  template <int APS, int BPS, int BJS>
  [[gnu::always_inline]] static void accumulate(int64_t slots, const int32_t* __restrict a, int64_t a_ps,
                                                const int32_t* __restrict b, int64_t b_ps, int64_t b_js,
                                                V (&acc)[NR][NV]) {
    if constexpr (APS != 0) a_ps = APS;
    if constexpr (BPS == 1 && BJS == 0) return accumulate_in_place(slots, a, a_ps, b, b_js, acc);
    if constexpr (BPS != 0) b_ps = BPS;
    if constexpr (BJS != 0) b_js = BJS;
#pragma GCC unroll 2
    for (int64_t q = 0; q < slots; ++q, a += a_ps, b += b_ps) step(a, b, b_js, acc);
  }

  // B's columns in place, b_js slots apart: addressed as one base every third column plus 0, 1
  // or 2 strides (x86's base + index * 4 or 8), so the step needs NR / 3 + 1 registers. With a
  // pointer or offset per column GCC kept the twelve in xmm registers and on the stack, and
  // every step moved them back (vmovq on the VNNI port): 4 MR rows in place had lost 0.84-0.96x
  // against packing B. (The f32 kernel's StridedColumns does the same with two bases of six.)
  [[gnu::always_inline]] static void accumulate_in_place(int64_t slots, const int32_t* __restrict a, int64_t a_ps,
                                                         const int32_t* __restrict b, int64_t b_js,
                                                         V (&acc)[NR][NV]) {
    constexpr int groups = (NR + 2) / 3;
    const int32_t* base[groups];
#pragma GCC unroll 4
    for (int g = 0; g < groups; ++g) base[g] = b + 3 * g * b_js;
#pragma GCC unroll 2
    for (int64_t q = 0; q < slots; ++q, a += a_ps) {
      V av[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) av[v] = Vec::load(a + Vec::lanes * v);
#pragma GCC unroll 12
      for (int j = 0; j < NR; ++j) {
        const V bj = Vec::set1(base[j / 3][(j % 3) * b_js]);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[j][v] = Products::template add<Vec>(acc[j][v], av[v], bj);
      }
#pragma GCC unroll 4
      for (int g = 0; g < groups; ++g) ++base[g];
    }
  }

  // C = alpha * acc + beta * C (wrap-around; beta == 0 does not read C). Forced inline like
  // the rest of the tile: left to GCC it went out of line in the mainloop after an unrelated
  // change to the edge cover (its inlining budget moved), the accumulators through memory:
  // 0.6x of the int8 GEMM.
  [[gnu::always_inline]] static void store(const V (&acc)[NR][NV], int32_t* c, int64_t ldc, int32_t alpha,
                                           int32_t beta) {
    const V va = Vec::set1(alpha), vb = Vec::set1(beta);
#pragma GCC unroll 12
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        int32_t* cp = c + j * ldc + Vec::lanes * v;
        V r = alpha == 1 ? acc[j][v] : Vec::mullo(acc[j][v], va);
        if (beta != 0) r = Vec::add(r, Vec::mullo(Vec::load(cp), vb));
        Vec::store(cp, r);
      }
  }
};

using MicroKernelI8Avx2 = MicroKernelSlots<I32x8, PairProducts, 2, 6>;
using MicroKernelU7Avx2 = MicroKernelSlots<I32x8, QuadProducts, 2, 6>;
#if defined(__AVXVNNI__)
using MicroKernelU8VnniAvx2 = MicroKernelSlots<I32x8, VnniQuadProducts, 2, 6>;
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
using MicroKernelI8Avx512 = MicroKernelSlots<I32x16, PairProducts, 2, 12>;
using MicroKernelU8Vnni512 = MicroKernelSlots<I32x16, VnniQuadProducts, 2, 12>;
#endif
#endif

STRATA_TILE_NS_END
