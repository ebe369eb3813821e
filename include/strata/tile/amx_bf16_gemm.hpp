// bf16 x bf16 -> f32 on AMX (TDPBF16PS): one instruction multiplies a 16 x 32 tile of bf16 by a
// 32 x 16 one into 16 x 16 f32 accumulators, 16 384 flops, 16 times an AVX-512 FMA's work.
//
// The micro-tile is 32 x 32 of C, four accumulator tiles (amx_tiles.hpp gives the roles).
// C is column-major, so AMX's rows are C's columns: the first operand is op(B) by columns and
// the second op(A) by rows. Both are packed as pair slots, two consecutive depth values in 32
// bits with the earlier in the high half (bf16_gemm.hpp's convention; AMX pairs half with half,
// so the order only has to agree between the operands):
//
//   op(A) panel of 32 rows (Bf16PairOperandOf<16>): slot[q * 32 + i], one 128-byte line per
//       slot row q; a tile is 16 slot rows of 16 rows (stride 128, the second at +64 bytes)
//   op(B) panel of 32 columns (Bf16AmxColumnsOperand): per group of 16 slots, each column's
//       16 slots as one 64-byte row; a tile is 16 columns (stride 64, the second at +1 KB)
//
// Both panels are zero-filled to whole groups of 16 slots (32 depth values), so a depth that is
// not a multiple of 32 multiplies zeros by zeros. The instruction, like AVX512_BF16's, treats
// subnormal bf16 inputs as zero and flushes subnormal results; it accumulates in f32 with
// round-to-nearest-even.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "strata/core/minifloat.hpp"
#include "strata/tile/amx_tiles.hpp"
#include "strata/tile/bf16_gemm.hpp"
#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/transpose.hpp"

STRATA_TILE_NS_BEGIN

#if defined(__AMX_BF16__) && defined(__AVX512BF16__)

// Slots in one packed panel row of depth kc: whole groups of 16.
constexpr int64_t amx_bf16_slots(int64_t kc) { return ((kc + 1) / 2 + 15) / 16 * 16; }

// op(B)'s columns (seen through `v`: v(j, p) = op(B)(p, j)) packed as AMX's first operand, as
// above: per panel of W columns and group g, row j holds slots 16 g .. 16 g + 15 of column j.
struct Bf16AmxColumnsOperand {
  using value_type = float;
  static constexpr bool has_view = false;
  MatrixView<bf16> v;

  Bf16AmxColumnsOperand shifted(int64_t j0) const { return {v.block(j0, 0)}; }

  template <int W, class T>
  void pack(int64_t j0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    static_assert(std::is_same_v<T, float>, "pair slots travel in f32 buffers");
    static_assert(W % 8 == 0, "columns are packed 8 at a time");
    const int64_t groups = amx_bf16_slots(kc) / 16;
    for (int64_t r0 = 0; r0 < len; r0 += W, dst += W * groups * 16) {
      const int cols = int(std::min<int64_t>(W, len - r0));
      const MatrixView<bf16> at = v.block(j0 + r0, p0);
      uint32_t* __restrict d = reinterpret_cast<uint32_t*>(dst);
      for (int64_t g = 0; g < groups; ++g) {
        uint32_t* rows = d + g * W * 16;
        const int depth = int(std::min<int64_t>(32, kc - 32 * g));  // values of this group present
        if (at.cs == 1) depth_adjacent<W>(at, cols, g, depth, rows);
        else if (at.rs == 1) columns_adjacent<W>(at, cols, g, depth, rows);
        else any_strides<W>(at, cols, g, depth, rows);
      }
    }
  }

 private:
  // A column's depth values adjacent (op(B) = B not transposed): one masked 64-byte load per
  // column and group, halves of each 32-bit word swapped (earlier value high).
  template <int W>
  static void depth_adjacent(const MatrixView<bf16>& at, int cols, int64_t g, int depth, uint32_t* rows) {
    const __mmask32 present = depth == 32 ? ~__mmask32(0) : __mmask32((1u << depth) - 1);
    for (int j = 0; j < W; ++j) {
      __m512i x = _mm512_setzero_si512();
      // (The masked rotate: GCC 12's unmasked one reads an undefined vector, -Wmaybe-uninitialized.)
      if (j < cols) x = _mm512_maskz_rol_epi32(__mmask16(0xffff), _mm512_maskz_loadu_epi16(present, &at(j, 32 * g)), 16);
      _mm512_storeu_si512(rows + 16 * j, x);
    }
  }

  // Columns adjacent at each depth (op(B) = B transposed): 8 columns x 8 slots at a time, two
  // depth rows interleaved into slots (the earlier in the high halves), then transposed so that
  // each column's slots lie along its row.
  template <int W>
  static void columns_adjacent(const MatrixView<bf16>& at, int cols, int64_t g, int depth, uint32_t* rows) {
    for (int j0 = 0; j0 < W; j0 += 8) {
      const int n = std::clamp(cols - j0, 0, 8);
      const __mmask8 present = __mmask8((1u << n) - 1);
      for (int half = 0; half < 2; ++half) {
        Floats8 r[8];
        for (int s = 0; s < 8; ++s) {
          const int p = 2 * (8 * half + s);  // depth within the group
          const __m128i x0 = p < depth ? _mm_maskz_loadu_epi16(present, &at(j0, 32 * g + p)) : _mm_setzero_si128();
          const __m128i x1 =
              p + 1 < depth ? _mm_maskz_loadu_epi16(present, &at(j0, 32 * g + p + 1)) : _mm_setzero_si128();
          r[s] = reinterpret_cast<Floats8>(_mm256_set_m128i(_mm_unpackhi_epi16(x1, x0), _mm_unpacklo_epi16(x1, x0)));
        }
        transpose_8x8(r, [&](int j, Floats8 col) { std::memcpy(rows + 16 * (j0 + j) + 8 * half, &col, 32); });
      }
    }
  }

  template <int W>
  static void any_strides(const MatrixView<bf16>& at, int cols, int64_t g, int depth, uint32_t* rows) {
    for (int j = 0; j < W; ++j)
      for (int s = 0; s < 16; ++s) {
        const int p = 2 * s;
        const uint32_t hi = j < cols && p < depth ? at(j, 32 * g + p).bits : 0u;
        const uint32_t lo = j < cols && p + 1 < depth ? at(j, 32 * g + p + 1).bits : 0u;
        rows[16 * j + s] = hi << 16 | lo;
      }
  }
};

// The 32 x 32 tile on TDPBF16PS. Edges go through the mainloop's copied tile (the panels are
// zero-padded to whole tiles, so a partial tile costs a full one).
struct MicroKernelBf16Amx {
  using T = float;
  static constexpr int mr = 32, nr = 32;
  static constexpr const char* description = "AMX tiles of bf16 pairs, f32 accumulators";
  using ThreadState = AmxTiles;
  static constexpr int64_t packed_depth(int64_t kc) { return amx_bf16_slots(kc); }
  static constexpr int value_bytes = 2;                // of one depth value of op(B)
  static constexpr bool pairs_earlier_high = true;     // the packers' slot order
  // Whether B (b_bytes of it) is read in place (amx_stream_b.hpp) rather than packed. In-process
  // against packing, 1 thread: m <= 32 2.4-2.9x (16 x 4096 x 4096, 32 x 1024 x 1024, 8 x 2048^2),
  // 32^3 1.86x; m = 64 1.06-2.09x; m = 96-192 with 8 MB of B and more 1.20-1.66x, with 2 MB
  // 0.97-1.03x, with at most 64 KB (the whole product a few tiles' work, where packing B is a
  // large share) 96^3 1.03-1.15x, 128 x 128 x 64 1.08-1.10x, 128^3 1.01-1.02x, 160 x 128 x 128
  // 0.97-1.02x, on 2 threads 128^3 1.08x, 192 x 128 x 128 1.39x (at most 2^22 multiply-adds, as
  // the int8 kernel's rule); m = 256 0.87-1.01x.
  static bool stream_b_pays(int64_t m, int64_t b_bytes) {
    const bool small_b = b_bytes <= (int64_t(64) << 10) && m * b_bytes / value_bytes <= (int64_t(1) << 22);
    return m <= 64 || (m <= 192 && (b_bytes >= (int64_t(4) << 20) || small_b));
  }

  // The tile products of a depth group (accumulator I += tile 4 + I / 2 x tile 6 + I % 2; the
  // intrinsic pastes its tile numbers into the instruction, so they are literals) and one
  // buffered element.
  template <int I>
  [[gnu::always_inline]] static void product() {
    if constexpr (I == 0) _tile_dpbf16ps(0, 4, 6);
    else if constexpr (I == 1) _tile_dpbf16ps(1, 4, 7);
    else if constexpr (I == 2) _tile_dpbf16ps(2, 5, 6);
    else _tile_dpbf16ps(3, 5, 7);
  }
  [[gnu::always_inline]] static void products() { product<0>(), product<1>(), product<2>(), product<3>(); }
  static float combine(float alpha, float beta, float acc, float old) { return alpha * acc + beta * old; }

  // a: op(A)'s packed panel; b: op(B)'s. The strides the mainloop passes are its own panels'.
  static void run(int64_t kc, const float* a, int64_t, const float* b, int64_t, int64_t, float* c, int64_t ldc,
                  float alpha, float beta) {
    amx_run_tile(amx_bf16_slots(kc) / 16, a, AmxPackedB{reinterpret_cast<const char*>(b)}, c, ldc, alpha, beta,
                 [] { products(); }, [&](float acc, float old) { return combine(alpha, beta, acc, old); });
  }
};

#endif

STRATA_TILE_NS_END
