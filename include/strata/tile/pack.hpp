// Packing policies: copy a block of op(A) or op(B) into the micro-panel order the microkernel
// streams, padding the ragged edge with zeros so the kernel never branches on size.
//
//   A block (mc x kc) → ceil(mc/MR) panels; panel r holds, for each p, MR rows r*MR..r*MR+MR-1
//   B block (kc x nc) → ceil(nc/NR) panels; panel s holds, for each p, NR columns
//
// Both operands are packed by one routine over a "panel-major" view: for A the panel dimension
// is rows, for B it is columns (pack_b packs the transposed view). The loop order follows the
// source's contiguous direction, so each source line and page is touched once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "strata/core/minifloat.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/transpose.hpp"

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif


STRATA_TILE_NS_BEGIN


// Element conversion while packing (mixed-precision GEMM: narrow inputs, f32 compute).
// bf16 → f32 is a 16-bit shift for every pattern (NaN, Inf, subnormals included), which
// vectorises; f16 goes through the exact bit-level decoder.
template <class T, class S>
inline T widen(S v) {
  if constexpr (std::is_same_v<S, bf16>) {
    const uint32_t bits = uint32_t(v.bits) << 16;
    float f;
    __builtin_memcpy(&f, &bits, sizeof f);
    return T(f);
  } else if constexpr (std::is_same_v<S, f16>) {
    return T(v.to_float());
  } else {
    return T(v);
  }
}

// n consecutive values widened: f16 eight at a time with F16C (vcvtph2ps gives the decoder's
// bits for every pattern: subnormals exact, signalling NaNs quieted alike); the rest element
// by element (bf16's shift vectorises as it is). The scalar f16 decoder made f16 GEMMs 0.6x
// of f32 at 64^3.
template <class T, class S>
[[gnu::always_inline]] inline void widen_run(const S* __restrict src, T* __restrict dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  if constexpr (std::is_same_v<S, f16> && std::is_same_v<T, float>)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = widen<T>(src[i]);
}

// Columns per pass of a contiguous-panel pack (below): their pages stay in the L1 TLB, and each
// panel's rows of one pass are written as one run of lines. Eight, not sixteen: a pass reads
// its columns as that many interleaved streams, a panel's two lines from each, and from memory
// sixteen of them ran at 9-15 GB/s against 13-20 GB/s for eight (stand-alone, 800 x 192 blocks
// of a 4096 x 4096 A, lda 4096, 4100 and 4112; a sequential read 22-23 GB/s). In-process,
// sgemm NN 4096 x 16 x 4096 1.11-1.15x, 4096 x 64 x 4096 1.01-1.06x, NT 4096 x 16 x 4096
// 1.11-1.18x, 3136 x 64 x 256 0.96-1.03x, 64^3-4096^3 0.99-1.01x.
inline constexpr int64_t kPackChunk = 8;

// One row of a panel (w valid values of W, the rest zero).
template <int W, class T, class S>
[[gnu::always_inline]] inline void pack_row(const S* __restrict src, T* __restrict d, int64_t w) {
  if (w == W) {
    // Same-type rows by whole vectors, a line at a time where rows are whole lines: GCC split
    // the f32 element loop into 8 + 4 + 2 + 1 + 1 moves for W = 16 (a memcpy into 16-byte
    // ones), and built f64's from a copy through the stack; by 32-byte halves, dgemm NN 4096 x
    // 16 x 4096 (A's packing from memory half of the time) ran 0.91x of line-wide copies.
    constexpr int row_bytes = int(W * sizeof(T));
    if constexpr (std::is_same_v<T, S> && row_bytes % 64 == 0) {
      typedef float Line __attribute__((vector_size(64), aligned(4), may_alias));
      for (int i = 0; i < row_bytes; i += 64)
        *reinterpret_cast<Line*>(reinterpret_cast<char*>(d) + i) =
            *reinterpret_cast<const Line*>(reinterpret_cast<const char*>(src) + i);
    } else if constexpr (std::is_same_v<T, S> && row_bytes % 32 == 0) {
      for (int i = 0; i < row_bytes; i += 32)
        *reinterpret_cast<Floats8*>(reinterpret_cast<char*>(d) + i) =
            *reinterpret_cast<const Floats8*>(reinterpret_cast<const char*>(src) + i);
    } else {
      widen_run(src, d, W);
    }
  } else {
    for (int64_t i = 0; i < W; ++i) d[i] = i < w ? widen<T>(src[i]) : T(0);
  }
}

// The partial last panel (w < W values per row, the rest zero) for `rows` rows, row p's values
// at src + p * step. f32 goes eight lanes at a time: whole vectors copied, the group holding
// the end zeroed and then overwritten by its values in fixed-size moves (variable-length
// copies became memmove calls), the rest zeroed. pack_row's element loop (a select per lane)
// was part of why 4x4x4096 NN spent 60% of its time packing A's 4 rows into an 8-row panel
// (the rest: the narrow-panel walk below). The kernel reads the panel only after the whole block is packed, so the
// overlapping stores cost no store-forwarding stalls. Out of line: inlined into pack_panels,
// its body slowed the full panels' loops by ~3% (1024x32x1024).
template <int W, class T, class S>
[[gnu::noinline]] void pack_partial_rows(const S* __restrict src, int64_t step, T* __restrict d, int64_t w,
                                         int64_t rows) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<S, float> && W % 8 == 0) {
    for (int64_t p = 0; p < rows; ++p, src += step, d += W) {
      for (int i0 = 0; i0 < W; i0 += 8) {
        const int64_t n = std::clamp<int64_t>(w - i0, 0, 8);
        if (n == 8) {
          *reinterpret_cast<Floats8*>(d + i0) = *reinterpret_cast<const Floats8*>(src + i0);
          continue;
        }
        *reinterpret_cast<Floats8*>(d + i0) = Floats8{};
        int64_t i = i0;
        if (n >= 4) __builtin_memcpy(d + i, src + i, 4 * sizeof(float)), i += 4;
        if (i0 + n - i >= 2) __builtin_memcpy(d + i, src + i, 2 * sizeof(float)), i += 2;
        if (i < i0 + n) d[i] = src[i];
      }
    }
  } else {
    for (int64_t p = 0; p < rows; ++p) pack_row<W>(src + p * step, d + p * W, w);
  }
}

// Whether transpose_streams serves panels of width W of T (B's on AVX-512 and AVX2).
template <int W, class T>
constexpr bool transposes_streams() {
#if defined(__AVX2__)
  return (std::is_same_v<T, float> || std::is_same_v<T, double>) && (W == 6 || W == 12);
#else
  return false;
#endif
}

#if defined(__AVX2__)
// The 32-byte row of T the register transposes take.
template <class T>
struct RegisterRow;
template <>
struct RegisterRow<float> {
  using type = Floats8;
};
template <>
struct RegisterRow<double> {
  using type = Doubles4;
};

// Whether transpose_streams reads streams of S for panels of T: the same type, or bf16 and f16
// widened to f32 as each register row is loaded.
template <class T, class S>
constexpr bool transposes_from() {
  return std::is_same_v<T, S> || (std::is_same_v<T, float> && (std::is_same_v<S, bf16> || std::is_same_v<S, f16>));
}

// One 32-byte register row of T from src: loaded, or 8 narrow values widened (bf16: a 16-bit
// shift, every pattern exact; f16: F16C's vcvtph2ps, the decoder's bits, widen_run).
template <class T, class S>
[[gnu::always_inline]] inline typename RegisterRow<T>::type load_row(const S* src) {
  using Row = typename RegisterRow<T>::type;
  if constexpr (std::is_same_v<T, S>) {
    return *reinterpret_cast<const Row*>(src);
  } else {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    __m256 f;
    if constexpr (std::is_same_v<S, bf16>) {
      f = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
    } else {
#if defined(__F16C__)
      f = _mm256_cvtph_ps(v);
#else
      alignas(32) float out[8];
      widen_run(src, out, 8);
      f = _mm256_load_ps(out);
#endif
    }
    Row r;
    __builtin_memcpy(&r, &f, sizeof r);
    return r;
  }
}

// n steps of w <= W streams of S into a panel of T row by row: d[q * W + i] = stream(i)[q]
// (widened), zero for i >= w. Register transposes of 32-byte rows (8 x 8 floats, 4 x 4
// doubles), each step's W values stored as whole vectors and a rest of 4 or 2, a line's worth
// of steps at a time, so each stream's line is read whole at once: streams a page apart (B's
// columns, an image's pixels) share a few L1 sets, and a line read in two halves several steps
// apart was often gone by the second.
template <int W, class T, class Stream>
[[gnu::always_inline]] inline void transpose_streams(Stream&& stream, int64_t w, int64_t n, T* __restrict d) {
  static_assert(transposes_streams<W, T>(), "f32 or f64, W = 6 or 12");
  using S = std::remove_cv_t<std::remove_pointer_t<decltype(stream(0))>>;
  static_assert(transposes_from<T, S>(), "streams of T, or of bf16/f16 for f32 panels");
  constexpr int G = 32 / int(sizeof(T));  // rows (and steps) of one register transpose
  using Row = typename RegisterRow<T>::type;
  auto block = [&](int64_t p) __attribute__((always_inline)) {
    for (int i0 = 0; i0 < W; i0 += G) {
      const int64_t rows = std::clamp<int64_t>(w - i0, 0, G);
      Row rv[G];
      for (int i = 0; i < G; ++i) rv[i] = i < rows ? load_row<T>(stream(i0 + i) + p) : Row{};
      auto put = [&](int j, Row v) {
        T* out = d + (p + j) * W + i0;
        if (W - i0 >= G) {
          *reinterpret_cast<Row*>(out) = v;
        } else if (W - i0 == 6) {  // floats: 4 + 2
          __builtin_memcpy(out, &v, 4 * sizeof(T));
          __builtin_memcpy(out + 4, reinterpret_cast<const T*>(&v) + 4, 2 * sizeof(T));
        } else if (W - i0 == 4) {
          __builtin_memcpy(out, &v, 4 * sizeof(T));
        } else {  // doubles: 2
          __builtin_memcpy(out, &v, 2 * sizeof(T));
        }
      };
      if constexpr (std::is_same_v<T, float>) transpose_8x8(rv, put);
      else transpose_4x4(rv, put);
    }
  };
  int64_t p = 0;
  for (; p + 2 * G <= n; p += 2 * G) block(p), block(p + G);
  for (; p + G <= n; p += G) block(p);
  for (; p < n; ++p)
    for (int i = 0; i < W; ++i) d[p * W + i] = i < w ? widen<T>(stream(i)[p]) : T(0);
}
#endif

// Packs `len` x kc of x (x(i, p): i along the panel dimension) into panels of width W.
// The view by reference: by value (24 bytes, passed in memory) GCC built it with 8-byte stores
// and read it back with a 16-byte load, which cannot forward from them (a stall of ~15 cycles
// per call: the one-block path packs a partial row panel on every small product).
template <int W, class T, class S>
void pack_panels(int64_t len, int64_t kc, const MatrixView<S>& x, T* __restrict dst) {
  const int64_t panels = (len + W - 1) / W;
  if (x.rs == 1 && W * sizeof(S) >= 64) {
    // The panel dimension is contiguous (each column of x is a run of `len` values, usually
    // on a page of its own) and a panel row fills a line: passes of kPackChunk columns, each
    // copied panel by panel, so the stores of a panel fill consecutive lines and the columns'
    // pages stay in the TLB. Walking all panels per column instead (below: one read stream,
    // a store stream per panel) was bound by the stores' misses; in-process A/B: 3136x64x64
    // and 512x48x2048 1.03-1.07x, 3136x64x256 1.03-1.05x, 1024^3-2048^3 unchanged (A's
    // packing; the NCHW 1x1 convolutions pack their image this way). The panel `ahead` (or
    // the next pass's first) is fetched meanwhile: one line per column, each read once.
    constexpr int64_t ahead = 2;
    for (int64_t p0 = 0; p0 < kc; p0 += kPackChunk) {
      const int64_t pn = std::min(kPackChunk, kc - p0);
      for (int64_t r = 0; r < panels; ++r) {
        const S* src = x.data + p0 * x.cs + r * W;
        const S* next = nullptr;
        int64_t next_n = pn;
        if (r + ahead < panels) {
          next = src + ahead * W;
        } else if (p0 + kPackChunk < kc) {
          next = x.data + (p0 + kPackChunk) * x.cs + (r + ahead - panels) * W;
          next_n = std::min(kPackChunk, kc - p0 - kPackChunk);
        }
        if (next)
          for (int64_t p = 0; p < next_n; ++p) __builtin_prefetch(next + p * x.cs);
        T* d = dst + r * W * kc + p0 * W;
        const int64_t w = std::min<int64_t>(W, len - r * W);
        if (w == W)
          for (int64_t p = 0; p < pn; ++p) pack_row<W>(src + p * x.cs, d + p * W, W);
        else
          pack_partial_rows<W>(src, x.cs, d, w, pn);
      }
    }
    return;
  }
  if (x.rs == 1) {
    // Narrow panels (B's, several to a line). Whole panels of same-type values in chunks of
    // about a line's worth of panels (64 values: 5 of 12 floats), each chunk over all of p:
    // its rows' few lines read at once and its panels' rows written as a few streams that stay
    // in L1. Walking p outermost with all panels per p (one streaming read per p) wrote one
    // stream per panel (85 for 1024 columns), far more than L1 keeps, and ran at 3-4 GB/s
    // from L3 against 9-14 GB/s for the chunks (stand-alone, 1008 x 256 of an NT B; a software
    // fetch of the chunk's rows 8 steps ahead halved that).
    // With none whole, the walk is skipped outright: its empty iterations over p (4096 for A's
    // 4 rows in 4x4x4096) cost as much as the copy.
    const int64_t full = len / W;
    if constexpr (std::is_same_v<S, T>) {
      constexpr int64_t chunk = W >= 64 ? 1 : 64 / W;
      for (int64_t r0 = 0; r0 < full; r0 += chunk) {
        const int64_t r1 = std::min(full, r0 + chunk);
        for (int64_t p = 0; p < kc; ++p) {
          const S* src = x.data + p * x.cs;
          for (int64_t r = r0; r < r1; ++r) pack_row<W>(src + r * W, dst + r * W * kc + p * W, W);
        }
      }
      // The partial last panel in a pass of its own (its values share lines with the panel
      // before it, still in cache).
      if (full < panels) pack_partial_rows<W>(x.data + full * W, x.cs, dst + full * W * kc, len - full * W, kc);
      return;
    }
    // Narrow values: p outermost, a whole column segment (all panels) widened per p, eight
    // panels at a time, fetched a few columns ahead (a segment is a few lines on a page of its
    // own, a short stream the hardware prefetcher barely starts on). Columns packed closer than
    // a line apart are one forward stream the hardware follows: no fetches then.
    constexpr int64_t pack_ahead = 8;
    const int64_t lines = x.cs * int64_t(sizeof(S)) <= 64 ? 0 : (len * int64_t(sizeof(S)) + 63) / 64;
    for (int64_t p = 0; p < kc; ++p) {
      const S* src = x.data + p * x.cs;
      if (p + pack_ahead < kc)
        for (int64_t l = 0; l < lines; ++l)
          __builtin_prefetch(reinterpret_cast<const char*>(src + pack_ahead * x.cs) + 64 * l);
      constexpr int64_t group = 8;
      T wide[group * W];
      for (int64_t r0 = 0; r0 < panels; r0 += group) {
        widen_run(src + r0 * W, wide, std::min(group * W, len - r0 * W));
        for (int64_t r = r0; r < std::min(panels, r0 + group); ++r)
          pack_row<W>(wide + (r - r0) * W, dst + r * W * kc + p * W, std::min<int64_t>(W, len - r * W));
      }
    }
    return;
  }
  // The k dimension is contiguous (or neither is): walk each source line along p.
  for (int64_t r = 0; r < panels; ++r) {
    const int64_t w = std::min<int64_t>(W, len - r * W);
    T* d = dst + r * W * kc;
#if defined(__AVX2__)
    if constexpr (std::is_same_v<T, S> && (std::is_same_v<T, float> || std::is_same_v<T, double>) &&
                  W % (32 / int(sizeof(T))) == 0 && !transposes_streams<W, T>()) {
      // f32 and f64 panels with contiguous k (A of TN products, the filter operand of
      // channels-last convolutions): 8 x 8 float or 4 x 4 double register transposes instead
      // of W scattered stores per element row, one group of rows at a time over the whole
      // depth; a partial panel's missing rows are zero vectors (8 x 8 x 1024 TN packed its 8
      // rows into a 16-row panel element by element: 16 scattered stores per step, 3x the
      // multiply; dgemm TN 1024^3 spent 5.5% of its time packing A element by element).
      if (x.cs == 1) {
        constexpr int G = 32 / int(sizeof(T));
        using Row = typename RegisterRow<T>::type;
        const T* base = x.data + r * W * x.rs;
        for (int i0 = 0; i0 < W; i0 += G) {
          const int64_t rows = std::clamp<int64_t>(w - i0, 0, G);
          T* di = d + i0;
          auto group = [&]<bool Full>() __attribute__((always_inline)) {
            int64_t p = 0;
            for (; p + G <= kc; p += G) {
              Row rv[G];
              for (int i = 0; i < G; ++i)
                rv[i] = Full || i < rows ? *reinterpret_cast<const Row*>(base + (i0 + i) * x.rs + p) : Row{};
              auto put = [&](int j, Row v) { *reinterpret_cast<Row*>(di + (p + j) * W) = v; };
              if constexpr (G == 8) transpose_8x8(rv, put);
              else transpose_4x4(rv, put);
            }
            for (; p < kc; ++p)
              for (int i = 0; i < G; ++i) di[p * W + i] = Full || i < rows ? base[(i0 + i) * x.rs + p] : T(0);
          };
          if (rows == G) group.template operator()<true>();
          else group.template operator()<false>();
        }
        continue;
      }
    }
    if constexpr (transposes_from<T, S>() && transposes_streams<W, T>()) {
      // B's panels (f32, f64) from a k-contiguous B (NN, TN): the W columns as streams (a
      // partial panel's missing ones zero). Stand-alone, f32 B of 1008 x 256 from L3: 1.4-1.8x
      // against the element loop below, one column at a time (which had kept full panels for
      // the reason transpose_streams gives, at 4-6 GB/s); its scattered zero stores had cost
      // 8 x 8 x 1024 a third of its time in the partial panel. bf16 and f16 columns the same
      // way, widened as loaded (the element loop's scattered stores had held bf16 16 x 4096 x
      // 4096 at 0.5x of oneDNN on a CPU without AMX).
      if (x.cs == 1) {
        const S* base = x.data + r * W * x.rs;
        transpose_streams<W>([&](int i) { return base + i * x.rs; }, w, kc, d);
        continue;
      }
    }
#endif
    for (int64_t i = 0; i < W; ++i) {
      if (i < w) {
        const S* src = x.data + (r * W + i) * x.rs;
        if (x.cs == 1 && r + 1 < panels)  // fetch the same line of the next panel meanwhile
          for (int64_t p = 0; p < kc; p += int64_t(64 / sizeof(T))) __builtin_prefetch(src + W * x.rs + p);
        if constexpr (!std::is_same_v<S, T>) {
          if (x.cs == 1) {  // a narrow run: widened by pieces, then spread over the panel
            constexpr int64_t piece = 64;
            T wide[piece];
            for (int64_t p0 = 0; p0 < kc; p0 += piece) {
              const int64_t n = std::min(piece, kc - p0);
              widen_run(src + p0, wide, n);
              for (int64_t p = 0; p < n; ++p) d[(p0 + p) * W + i] = wide[p];
            }
            continue;
          }
        }
        for (int64_t p = 0; p < kc; ++p) d[p * W + i] = widen<T>(src[p * x.cs]);
      } else {
        for (int64_t p = 0; p < kc; ++p) d[p * W + i] = T(0);
      }
    }
  }
}

template <int MR, class T, class S>
void pack_a(int64_t mc, int64_t kc, MatrixView<S> a, T* __restrict dst) {
  pack_panels<MR>(mc, kc, a, dst);
}

template <int NR, class T, class S>
void pack_b(int64_t kc, int64_t nc, MatrixView<S> b, T* __restrict dst) {
  pack_panels<NR>(nc, kc, b.transposed(), dst);
}

STRATA_TILE_NS_END
