// u8/s8 x s8 -> s32 on AMX (TDPBSUD for u8 A, TDPBSSD for s8 A): one instruction multiplies a
// 16 x 64 tile of bytes by a 64 x 16 one into 16 x 16 int32 accumulators, exactly (wrapping
// around on int32 overflow as every integer path here does).
//
// The same 32 x 32 micro-tile and tile roles as the bf16 kernel (amx_bf16_gemm.hpp,
// amx_tiles.hpp), with byte quads (four consecutive depth values in 32 bits, the earliest in
// the lowest byte, as int8_gemm.hpp's quads) in place of bf16 pairs:
//
//   op(A) panel of 32 rows (SlotOperand<S, 4, 16>): slot[q * 32 + i], AMX's second operand
//       (unsigned bytes for u8 A, signed for s8 A)
//   op(B) panel of 32 columns (Int8AmxColumnsOperand): per group of 16 quads (64 depth values),
//       each column's 16 quads as one 64-byte row: AMX's first operand, signed bytes
//
// Both panels are zero-filled to whole groups of 64 depth values.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "strata/tile/amx_tiles.hpp"
#include "strata/tile/int8_gemm.hpp"
#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/transpose.hpp"

STRATA_TILE_NS_BEGIN

#if defined(__AMX_INT8__) && defined(__AVX512BW__)

// Quad slots in one packed panel row of depth kc: whole groups of 16.
constexpr int64_t amx_quad_slots(int64_t kc) { return ((kc + 3) / 4 + 15) / 16 * 16; }

// op(B)'s s8 columns (seen through `v`: v(j, p) = op(B)(p, j)) packed as AMX's first operand:
// per panel of W columns and group g, row j holds depth 64 g .. 64 g + 63 of column j.
struct Int8AmxColumnsOperand {
  using value_type = int32_t;
  static constexpr bool has_view = false;
  MatrixView<int8_t> v;

  Int8AmxColumnsOperand shifted(int64_t j0) const { return {v.block(j0, 0)}; }

  template <int W, class T>
  void pack(int64_t j0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    static_assert(std::is_same_v<T, int32_t>, "quad slots are int32");
    static_assert(W % 8 == 0, "columns are packed 8 at a time");
    const int64_t groups = amx_quad_slots(kc) / 16;
    for (int64_t r0 = 0; r0 < len; r0 += W, dst += W * groups * 16) {
      const int cols = int(std::min<int64_t>(W, len - r0));
      const MatrixView<int8_t> at = v.block(j0 + r0, p0);
      for (int64_t g = 0; g < groups; ++g) {
        int8_t* rows = reinterpret_cast<int8_t*>(dst + g * W * 16);
        const int depth = int(std::min<int64_t>(64, kc - 64 * g));  // values of this group present
        if (at.cs == 1) depth_adjacent<W>(at, cols, g, depth, rows);
        else if (at.rs == 1) columns_adjacent<W>(at, cols, g, depth, rows);
        else any_strides<W>(at, cols, g, depth, rows);
      }
    }
  }

 private:
  // A column's depth values adjacent (op(B) = B not transposed): one masked 64-byte copy.
  template <int W>
  static void depth_adjacent(const MatrixView<int8_t>& at, int cols, int64_t g, int depth, int8_t* rows) {
    const __mmask64 present = depth == 64 ? ~__mmask64(0) : (__mmask64(1) << depth) - 1;
    for (int j = 0; j < W; ++j) {
      __m512i x = _mm512_setzero_si512();
      if (j < cols) x = _mm512_maskz_loadu_epi8(present, &at(j, 64 * g));
      _mm512_storeu_si512(rows + 64 * j, x);
    }
  }

  // Columns adjacent at each depth (op(B) = B transposed): per group, 32 columns of each depth
  // row at once; four depth rows interleaved bytewise into quads give each quad slot's 32
  // columns in four vectors (columns 4v..4v+3 and 16+4v.. of vector v), and 8 x 8 transposes of
  // those over 8 slots lay each column's slots along its row. (Eight columns at a time with a
  // load per column octet and depth row, the NT u8s8s32 product spent about 14% of its time here.)
  template <int W>
  static void columns_adjacent(const MatrixView<int8_t>& at, int cols, int64_t g, int depth, int8_t* rows) {
    static_assert(W % 32 == 0, "32 columns a step");
    for (int j0 = 0; j0 < W; j0 += 32) {
      const int n = std::clamp(cols - j0, 0, 32);
      const __mmask32 present = n == 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
      Floats8 quads[4][16];  // [v][slot]: vector v of each slot's 32 columns
      for (int slot = 0; slot < 16; ++slot) {
        __m256i x[4];
        for (int d = 0; d < 4; ++d) {
          const int p = 4 * slot + d;  // depth within the group
          x[d] = p < depth ? _mm256_maskz_loadu_epi8(present, &at(j0, 64 * g + p)) : _mm256_setzero_si256();
        }
        const __m256i lo01 = _mm256_unpacklo_epi8(x[0], x[1]), hi01 = _mm256_unpackhi_epi8(x[0], x[1]);
        const __m256i lo23 = _mm256_unpacklo_epi8(x[2], x[3]), hi23 = _mm256_unpackhi_epi8(x[2], x[3]);
        quads[0][slot] = reinterpret_cast<Floats8>(_mm256_unpacklo_epi16(lo01, lo23));
        quads[1][slot] = reinterpret_cast<Floats8>(_mm256_unpackhi_epi16(lo01, lo23));
        quads[2][slot] = reinterpret_cast<Floats8>(_mm256_unpacklo_epi16(hi01, hi23));
        quads[3][slot] = reinterpret_cast<Floats8>(_mm256_unpackhi_epi16(hi01, hi23));
      }
      for (int v = 0; v < 4; ++v)
        for (int half = 0; half < 2; ++half) {  // slots 8 half .. 8 half + 7
          const Floats8(&r)[8] = *reinterpret_cast<const Floats8(*)[8]>(&quads[v][8 * half]);
          transpose_8x8(r, [&](int c, Floats8 col) {
            const int j = j0 + (c < 4 ? 4 * v + c : 16 + 4 * v + c - 4);  // lane 0: 4v.., lane 1: 16 + 4v..
            std::memcpy(rows + 64 * j + 32 * half, &col, 32);
          });
        }
    }
  }

  template <int W>
  static void any_strides(const MatrixView<int8_t>& at, int cols, int64_t g, int depth, int8_t* rows) {
    for (int j = 0; j < W; ++j)
      for (int p = 0; p < 64; ++p) rows[64 * j + p] = j < cols && p < depth ? at(j, 64 * g + p) : int8_t(0);
  }
};

// The 32 x 32 tile; SA the type of A's bytes (u8: TDPBSUD, s8: TDPBSSD). Edges go through the
// mainloop's copied tile, as in the bf16 kernel.
template <class SA>
struct MicroKernelI8Amx {
  static_assert(std::is_same_v<SA, uint8_t> || std::is_same_v<SA, int8_t>, "A is u8 or s8");
  using T = int32_t;
  static constexpr int mr = 32, nr = 32;
  using ThreadState = AmxTiles;
  static constexpr int64_t packed_depth(int64_t kc) { return amx_quad_slots(kc); }
  static constexpr int value_bytes = 1;                // of one depth value of op(B)
  static constexpr bool pairs_earlier_high = false;    // quads: the earliest in the lowest byte
  // Whether B (b_bytes of it) is read in place (amx_stream_b.hpp) rather than packed. In-process
  // against packing, 1 thread: m <= 32 2.8x (16 x 4096 x 4096, 32 x 1024 x 1024); m = 64-256
  // with 1 MB of B and more 1.15-1.74x, with 64-150 KB 0.90-1.01x, with less (a few tiles'
  // work, where packing B is a large share) 128^3 1.12-1.19x, 128 x 128 x 64 1.15-1.16x, 256 x
  // 128 x 128 1.09-1.11x, 96^3 0.98-1.00x, on 2 threads 1.4-2.1x, but only up to 2^22
  // multiply-adds (one thread's share of this route; 256 x 256 x 128 on 2 threads 0.62-0.69x,
  // A packed by one before both compute); m = 384 and more 0.73-1.15x.
  static bool stream_b_pays(int64_t m, int64_t b_bytes) {
    const bool small_b = b_bytes <= (int64_t(64) << 10) && m * b_bytes <= (int64_t(1) << 22);
    return m <= 64 || (m <= 256 && (b_bytes >= (int64_t(1) << 20) || small_b));
  }

  // Signed B bytes (tiles 4, 5) times A's, unsigned or signed (tiles 6, 7): accumulator I +=
  // tile 4 + I / 2 x tile 6 + I % 2 (literal tile numbers, as in the bf16 kernel).
  template <int I>
  [[gnu::always_inline]] static void product() {
    if constexpr (std::is_same_v<SA, uint8_t>) {
      if constexpr (I == 0) _tile_dpbsud(0, 4, 6);
      else if constexpr (I == 1) _tile_dpbsud(1, 4, 7);
      else if constexpr (I == 2) _tile_dpbsud(2, 5, 6);
      else _tile_dpbsud(3, 5, 7);
    } else {
      if constexpr (I == 0) _tile_dpbssd(0, 4, 6);
      else if constexpr (I == 1) _tile_dpbssd(1, 4, 7);
      else if constexpr (I == 2) _tile_dpbssd(2, 5, 6);
      else _tile_dpbssd(3, 5, 7);
    }
  }
  [[gnu::always_inline]] static void products() { product<0>(), product<1>(), product<2>(), product<3>(); }
  static int32_t combine(int32_t alpha, int32_t beta, int32_t acc, int32_t old) {
    return int32_t(uint32_t(alpha) * uint32_t(acc) + uint32_t(beta) * uint32_t(old));
  }

  static void run(int64_t kc, const int32_t* a, int64_t, const int32_t* b, int64_t, int64_t, int32_t* c, int64_t ldc,
                  int32_t alpha, int32_t beta) {
    amx_run_tile(amx_quad_slots(kc) / 16, a, AmxPackedB{reinterpret_cast<const char*>(b)}, c, ldc, alpha, beta,
                 [] { products(); }, [&](int32_t acc, int32_t old) { return combine(alpha, beta, acc, old); });
  }
};

#endif

STRATA_TILE_NS_END
