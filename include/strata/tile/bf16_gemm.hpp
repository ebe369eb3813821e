// bf16 x bf16 -> f32 on the bf16 dot-product instruction (AVX512_BF16's vdpbf16ps), which
// multiplies a pair of bf16 in each 32-bit lane by a pair of the other operand and adds both
// products into the f32 lane: twice the multiply-adds of an f32 FMA per instruction.
//
// Operands are packed as pairs of consecutive depth values in 32-bit slots, the earlier one in
// the HIGH half: the instruction adds the high pair's product first, so every lane still adds
// its products in depth order, one rounding per product as the f32 kernel does (a product of
// two bf16 is exact in f32).
//
//   packed panel of W rows, slot q:  slot[q * W + i] = a(i, 2q) << 16 | a(i, 2q + 1)
//
// Except where few rows read B as stored (Bf16PairColumnsOperand, below): two bf16 of a column
// are then one slot with the earlier in the LOW half, A's pairs are packed the same way, and
// each lane adds a pair's later product first (depth 1, 0, 3, 2, ...): a fixed order for the
// route, which the shape alone chooses (never the thread count), so results stay bitwise
// reproducible, but they need not be the depth-order bits of the packed route. Rotating each
// broadcast B pair into depth order instead cost the route its gain (0.62-1.06x of packing).
//
// The slots travel through the mainloop's f32 buffers as bit patterns (never as arithmetic);
// a panel of kc depth fills ceil(kc / 2) slots of its W * kc (as for the int8 pairs).
//
// What differs from widening to f32 (gemm_ex's route on CPUs without the instruction): the
// instruction treats bf16 subnormal inputs as zero and flushes subnormal f32 results to zero
// (MXCSR is not consulted), and the edge tiles do not rotate accumulator sets per depth step
// as the f32 kernels' do, so results need not be bitwise those of the widened route.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "strata/core/minifloat.hpp"
#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/late_c_fetch.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/microkernel.hpp"
#include "strata/tile/operand.hpp"
#include "strata/tile/simd.hpp"
#include "strata/tile/transpose.hpp"

#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif

STRATA_TILE_NS_BEGIN

#if defined(__AVX512BF16__)

// A bf16 operand (rows x depth seen through `v`) packed into pair slots, as above. SlotGroup > 0:
// each panel's slots rounded up to a multiple of it, the rest zero, and panels W x that many
// slots apart (AMX reads 16 slots a tile: amx_bf16_gemm.hpp); 0: panels W x kc apart.
// EarlierHigh false: the earlier value in the LOW half, as two bf16 lie in memory (the pairs
// Bf16PairColumnsOperand reads in place, below).
template <int SlotGroup = 0, bool EarlierHigh = true>
struct Bf16PairOperandOf {
  using value_type = float;                // the slots' carrier in the mainloop's buffers
  static constexpr bool has_view = false;  // always packed: the kernel reads slots only
  MatrixView<bf16> v;

  Bf16PairOperandOf shifted(int64_t i0) const { return {v.block(i0, 0)}; }

  template <int W, class T>
  void pack(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    static_assert(std::is_same_v<T, float>, "pair slots travel in f32 buffers");
    const int64_t slots = (kc + 1) / 2;
    const int64_t stored = SlotGroup ? (slots + SlotGroup - 1) / SlotGroup * SlotGroup : slots;
    const int64_t panel_stride = W * (SlotGroup ? stored : kc);
    // Narrow panels of adjacent rows (B transposed: 12 columns, 24 bytes of each depth row):
    // packed a group at a time, each depth pair across the group's panels, so that a row's
    // lines are read whole, in order. Panel by panel, each read a third of a line, and the
    // rows, a leading dimension apart (8 KB at ldb 4096), shared few cache sets: every line
    // came from memory about three times (NT bf16 16 x 4096 x 4096 spent two thirds of its
    // time packing B). In-process against panel by panel, 1 thread: NT 16 x 4096 x 4096 1.44x,
    // 64 x 4096 x 4096 1.20x, 4096 x 16 x 4096 1.08x, 256^3-2048^3 1.00x; a block within 64 KB
    // stays panel by panel (64^3 and 96^3 lost 4-5% to the group's prefetches and calls).
    int64_t done_pairs = 0;
    if (v.rs == 1 && v.cs != 1 && W * int64_t(sizeof(bf16)) < 64 && len * kc * int64_t(sizeof(bf16)) > 65536) {
      constexpr int64_t group = 8, ahead = 8;
      for (int64_t g0 = 0; g0 < len; g0 += group * W) {
        const int64_t panels = std::min<int64_t>(group, (len - g0 + W - 1) / W);
        const int64_t bytes = std::min<int64_t>(group * W, len - g0) * int64_t(sizeof(bf16));
        for (int64_t q = 0; q < kc / 2; ++q) {
          // The rows `ahead` pairs on: each row's few lines are a stream too short for the
          // hardware prefetcher to find (a row a leading dimension from the last).
          if (q + ahead < kc / 2)
            for (int r = 0; r < 2; ++r) {
              const char* row = reinterpret_cast<const char*>(&v(i0 + g0, p0 + 2 * (q + ahead) + r));
              for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(row + o);
            }
          for (int64_t j = 0; j < panels; ++j) {
            const int rows = int(std::min<int64_t>(W, len - g0 - j * W));
            pack_rows_adjacent<W>(v.block(i0 + g0 + j * W, p0 + 2 * q), rows, 1,
                                  reinterpret_cast<uint32_t*>(dst + (g0 / W + j) * panel_stride) + q * W);
          }
        }
      }
      done_pairs = kc / 2;
    }
    for (int64_t r0 = 0; r0 < len; r0 += W, dst += panel_stride) {
      const int rows = int(std::min<int64_t>(W, len - r0));
      const MatrixView<bf16> at = v.block(i0 + r0, p0);
      uint32_t* __restrict d = reinterpret_cast<uint32_t*>(dst);
      int64_t q = done_pairs;
      if (q == 0 && at.cs == 1) q = pack_depth_adjacent<W>(at, rows, kc / 16, d);
      else if (q == 0 && at.rs == 1) q = pack_rows_adjacent<W>(at, rows, kc / 2, d);
      for (; q < slots; ++q) {
        const int depth = int(std::min<int64_t>(2, kc - 2 * q));
        for (int i = 0; i < rows; ++i) {
          const uint32_t earlier = at(i, 2 * q).bits, later = depth == 2 ? at(i, 2 * q + 1).bits : 0u;
          d[q * W + i] = EarlierHigh ? earlier << 16 | later : later << 16 | earlier;
        }
        for (int i = rows; i < W; ++i) d[q * W + i] = 0;
      }
      std::memset(d + slots * W, 0, sizeof(uint32_t) * std::size_t((stored - slots) * W));
    }
  }

 private:
  // A row's depth values adjacent (A transposed, B not): 16 values (8 slots) of 8 rows per
  // step, halves swapped by a 16-bit rotate (vprold), turned slot-major by an 8 x 8 transpose of
  // 32-bit words. Rows past `rows` are zero. Returns the slots written.
  template <int W>
  static int64_t pack_depth_adjacent(const MatrixView<bf16>& at, int rows, int64_t groups, uint32_t* __restrict d) {
    auto run = [&](int present) __attribute__((always_inline)) {
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t q0 = 8 * g;
        transpose_rows_to_slots<W>(
            present,
            [&](int i) {
              const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&at(i, 2 * q0)));
              return reinterpret_cast<Floats8>(EarlierHigh ? _mm256_rol_epi32(x, 16) : x);
            },
            [&](int j, int r0, Floats8 col, int n) {
              uint32_t* out = d + (q0 + j) * W + r0;
              if (n == 8) std::memcpy(out, &col, 32);
              else std::memcpy(out, &col, sizeof(uint32_t) * std::size_t(n));
            });
      }
    };
    // A whole panel with the row count as a constant: no per-row test in the loop (with the
    // rotate above, in-process TN 64^3 1.10x, 256^3 1.05x).
    if (rows == W) run(W);
    else run(rows);
    return 8 * groups;
  }

  // A depth column's rows adjacent (A not transposed, B transposed): the two columns of a slot
  // interleaved 16 rows at a time by one word permute (the earlier column in the high halves),
  // loads and stores masked to the rows present, so nothing past the matrix is read and rows
  // past `rows` come out zero. (In place of 8-row 128-bit unpacks with a zeroed copy for short
  // groups; with the whole-panel path above, in-process NN 64^3 1.24x, 128^3 1.11x, 256^3
  // 1.05x, NT 64^3 1.67x, 128^3 1.26x, 256^3 1.14x, 1024^3-2048^3 1.01-1.05x.)
  template <int W>
  static int64_t pack_rows_adjacent(const MatrixView<bf16>& at, int rows, int64_t pairs, uint32_t* __restrict d) {
    // Word 2i of the result is word i of the later column, word 2i + 1 word i of the earlier.
    alignas(64) static constexpr uint16_t order[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                       8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i interleave = _mm512_load_si512(order);
    for (int64_t q = 0; q < pairs; ++q) {
      const bf16* c0 = &at(0, 2 * q);
      const bf16* c1 = &at(0, 2 * q + 1);
      uint32_t* out = d + q * W;
#pragma GCC unroll 2
      for (int g = 0; g < W; g += 16) {
        const int n = std::clamp(rows - g, 0, 16);
        __m256i x0, x1;
        if (n == 16) {
          x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c0 + g));
          x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c1 + g));
        } else {
          const __mmask16 present = __mmask16((1u << n) - 1);
          x0 = _mm256_maskz_loadu_epi16(present, c0 + g);
          x1 = _mm256_maskz_loadu_epi16(present, c1 + g);
        }
        if constexpr (!EarlierHigh) std::swap(x0, x1);  // the earlier column in the low halves
        const __m512i slots =
            _mm512_permutex2var_epi16(_mm512_castsi256_si512(x1), interleave, _mm512_castsi256_si512(x0));
        if (W - g >= 16) _mm512_storeu_si512(out + g, slots);  // W and g are constants here (unrolled)
        else _mm512_mask_storeu_epi32(out + g, __mmask16((1u << (W - g)) - 1), slots);
      }
    }
    return pairs;
  }
};
using Bf16PairOperand = Bf16PairOperandOf<0>;

// op(B) whose columns hold their depth contiguously (NN, TN), read where it lies: two bf16 of a
// column are one 32-bit pair slot as the instruction takes it, the earlier in the low half, so
// the instruction adds each pair's later product first (SlotColumnsOperand, operand.hpp; the
// slots carried as floats). A product on this operand takes its A as Bf16PairOperandOf<0, false>
// (the same order), and the edges and blocks the mainloop packs go through that order too. For
// few rows B's packing (a transpose of pair slots, from memory) had taken 44% of the call
// (bf16 16 x 4096 x 4096); the caller (kernel_instance.hpp) says where this pays.
using Bf16PairColumnsOperand = SlotColumnsOperand<float, bf16, Bf16PairOperandOf<0, false>>;
// The operands of a product that reads B's pairs in place (blas's Bf16KernelInstance).
struct Bf16PairColumnsRoute {
  using A = Bf16PairOperandOf<0, false>;
  using B = Bf16PairColumnsOperand;
};

// (16 NV) x NR tiles of f32 accumulators (NV x NR zmm), A's pair slots loaded, B's broadcast.
// Starting and storing the tile are the f32 kernel's own (alpha/beta handled alike). The full
// tile (32 x 12: 24 accumulators) is inlined into the mainloop; the half-height one and the
// narrower ones, in powers of two as the f32 kernel's (an 8-column edge is one 32 x 8 tile,
// not 32 x 6 + 32 x 3: bf16 32^3 1.16-1.21x, 32 x 20 x 32 1.34x in-process), cover ragged
// edges (cover_narrowest) as calls of their own. C is fetched during the last steps
// (late_c_fetch.hpp), not at the start: in-process 1.00-1.02x (NN 64^3 1.02x, 1024^3-2048^3
// 1.00-1.02x, NT 1024^3 1.015x; 12 or 48 steps ahead instead of 24: 1.00-1.01x).
template <int NV, int NR, bool Full = true>
struct MicroKernelBf16Avx512 {
  using T = float;
  static constexpr int mr = 16 * NV, nr = NR;
  static constexpr const char* description = "bf16 pairs, f32 accumulators";
  using HalfRows = MicroKernelBf16Avx512<(NV > 1 ? NV / 2 : 1), NR, false>;
  using NarrowCols = MicroKernelBf16Avx512<NV, narrower_width(NR), false>;

  // b_js: B's column stride in slots (1 on packed panels; a column's slot count where B's pairs
  // are read in place, Bf16PairColumnsOperand).
  [[gnu::always_inline]] static void run(int64_t kc, const float* a, int64_t a_ps, const float* b, int64_t b_ps,
                                         int64_t b_js, float* c, int64_t ldc, float alpha, float beta) {
    if constexpr (Full) {
      if (b_ps == 1) return compute<mr, 1, 0>(kc, a, a_ps, b, 1, b_js, c, ldc, alpha, beta);  // in place
      return compute<mr, NR, 1>(kc, a, a_ps, b, NR, 1, c, ldc, alpha, beta);                // a packed panel
    }
    edge(kc, a, a_ps, b, b_ps, b_js, c, ldc, alpha, beta);
  }

 private:
  using V = VecAvx512F32;
  using F32Tile = MicroKernel<V, NV, NR>;

  [[gnu::noinline]] static void edge(int64_t kc, const float* a, int64_t a_ps, const float* b, int64_t b_ps,
                                     int64_t b_js, float* c, int64_t ldc, float alpha, float beta) {
    compute<0, 0, 0>(kc, a, a_ps, b, b_ps, b_js, c, ldc, alpha, beta);
  }

  // APS, BPS, BJS: slot strides as constants (the full tile on its own panels, or B's pairs in
  // place a slot apart), 0 for run time.
  template <int APS, int BPS, int BJS>
  [[gnu::always_inline]] static void compute(int64_t kc, const float* __restrict a, int64_t a_ps,
                                             const float* __restrict b, int64_t b_ps, int64_t b_js,
                                             float* __restrict c, int64_t ldc, float alpha, float beta) {
    if constexpr (APS != 0) a_ps = APS;
    if constexpr (BPS != 0) b_ps = BPS;
    if constexpr (BJS != 0) b_js = BJS;
    V acc[NR][NV];
    const int64_t slots = (kc + 1) / 2;
    F32Tile::start(acc, c, ldc, !fetches_c_late<NR>(slots));  // short loops fetch C here
    steps_fetching_c<NR>(slots, c, ldc, mr, [&]() __attribute__((always_inline)) {
      __m512bh av[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) av[v] = reinterpret_cast<__m512bh>(_mm512_loadu_ps(a + 16 * v));
#pragma GCC unroll 12
      for (int j = 0; j < NR; ++j) {
        const __m512bh bj = reinterpret_cast<__m512bh>(_mm512_set1_ps(b[j * b_js]));
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[j][v].v = _mm512_dpbf16_ps(acc[j][v].v, av[v], bj);
      }
      a += a_ps;
      b += b_ps;
    });
    F32Tile::store(acc, c, ldc, alpha, beta);
  }
};

#endif

STRATA_TILE_NS_END
