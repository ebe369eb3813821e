// AMX products that read op(B) where it lies, for products of few rows: with one row panel of
// the 32 x 32 tile each element of B meets a single tile row, so packing it (the mainloop's way)
// writes and reads a copy for nothing, and for a skinny product B is nearly all of the data;
// with a few row panels, B's column panel is read again from L2 for each, which still beats
// packing a large B. It needs op(B) = B not transposed: each column's depth values adjacent,
// which is how AMX's first operand holds a row, in natural order (the earlier value in the
// lower half or byte); op(A)'s panel is packed once and put in that order too.
//
// Each thread takes whole 32-column panels of C; a panel runs the whole depth in the tiles, row
// panel after row panel (no k blocks: C is written once). A depth group whose 64 bytes per
// column lie inside B is loaded from B (stride ldb); the depth's last, partial group and every
// group of a partial last panel are staged first (masked copies, zeros past the depth and past
// n), so nothing outside B is read and the padding is zero.
#pragma once
#include <algorithm>
#include <cstdint>

#include "strata/core/thread_pool.hpp"
#include "strata/tile/amx_tiles.hpp"
#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/workspace.hpp"

STRATA_TILE_NS_BEGIN

#if defined(__AMX_TILE__) && defined(__AVX512BW__)

// Whether a product takes this route: op(B)'s depth values adjacent, and few enough rows for
// reading B once per 32-row panel (from memory, then L2) to beat packing it once: the kernel's
// own rule (Kernel::stream_b_pays, from in-process measurements).
template <class Kernel>
bool amx_stream_b_serves(int64_t m, int64_t n, int64_t k, int64_t b_rs) {
  return b_rs == 1 && Kernel::stream_b_pays(m, k * n * Kernel::value_bytes);
}

// Group g of columns [0, cols) of b (ldb_bytes apart), depth_bytes of each present, as the
// mainloop's packed 2 KB group: masked 64-byte copies, zeros elsewhere.
inline void amx_stage_group(const char* b, int64_t ldb_bytes, int cols, int64_t g, int64_t depth_bytes,
                            char* stage) {
  const int64_t left = std::min<int64_t>(64, depth_bytes - 64 * g);
  const __mmask64 present = left == 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
  for (int j = 0; j < 32; ++j) {
    __m512i x = _mm512_setzero_si512();
    if (j < cols) x = _mm512_maskz_loadu_epi8(present, b + j * ldb_bytes + 64 * g);
    _mm512_store_si512(stage + 64 * j, x);
  }
}

// C[0:m, 0:cols] = alpha * sum + beta * C over the whole depth, op(A) from its packed panel and
// op(B)'s columns at b, ldb_bytes apart (Kernel: MicroKernelBf16Amx or MicroKernelI8Amx).
template <class Kernel>
void amx_stream_b_panel(int64_t m, int cols, int64_t depth_bytes, const char* a_panel, const char* b,
                        int64_t ldb_bytes, typename Kernel::T alpha, typename Kernel::T beta, typename Kernel::T* c,
                        int64_t ldc) {
  using T = typename Kernel::T;
  const int64_t groups = (depth_bytes + 63) / 64;
  const int64_t in_place = cols == 32 ? depth_bytes / 64 : 0;  // groups read from B itself
  alignas(64) char stage[2048];
  // (A staged group is rewritten only after the tile loads of the one before: x86 does not
  // move stores ahead of older loads.)
  auto b_group = [&](int64_t g) -> AmxBGroup {
    if (g < in_place) return {b + 64 * g, ldb_bytes};
    amx_stage_group(b, ldb_bytes, cols, g, depth_bytes, stage);
    return {stage, 64};
  };
  auto products = [] { Kernel::products(); };
  auto combine = [&](T acc, T old) { return Kernel::combine(alpha, beta, acc, old); };
  if (m == 32 && cols == 32) return amx_run_tile(groups, a_panel, b_group, c, ldc, alpha, beta, products, combine);
  alignas(64) T tile[32 * 32];  // a partial tile: the sum here, then the rows and columns present
  amx_run_tile(groups, a_panel, b_group, tile, int64_t(32), T(1), T(0), products, combine);
  for (int j = 0; j < cols; ++j)
    for (int64_t i = 0; i < m; ++i) {
      T& out = c[i + j * ldc];
      out = beta == T(0) ? Kernel::combine(alpha, T(0), tile[i + 32 * j], T(0)) : combine(tile[i + 32 * j], out);
    }
}

// C = alpha * op(A) op(B) + beta * C (amx_stream_b_serves): op(A) through `a`, the
// kernel's A operand (packed here once, all of the depth); op(B)(p, j) the element at byte
// p * Kernel::value_bytes + j * ldb_bytes of b. The column panels are divided among `threads`;
// each C element's arithmetic is the same for any thread count.
template <class Kernel, class AOperand>
void amx_gemm_stream_b(int64_t m, int64_t n, int64_t k, typename Kernel::T alpha, const AOperand& a, const void* b,
                       int64_t ldb_bytes, typename Kernel::T beta, typename Kernel::T* c, int64_t ldc, int threads) {
  using T = typename Kernel::T;
  const int64_t slots = Kernel::packed_depth(k);  // per panel row: whole groups of 16
  const int64_t rows = (m + 31) / 32 * 32;
  T* panel = static_cast<T*>(thread_pack_buffer(0).get(sizeof(T) * std::size_t(rows * slots)));
  a.template pack<32>(0, m, 0, k, panel);
  if constexpr (Kernel::pairs_earlier_high) {  // to B's natural order
    auto* words = reinterpret_cast<__m512i*>(panel);
    for (int64_t w = 0; w < rows / 16 * slots; ++w)  // (masked: GCC 12's plain rotate reads an undefined vector)
      _mm512_storeu_si512(words + w, _mm512_maskz_rol_epi32(__mmask16(0xffff), _mm512_loadu_si512(words + w), 16));
  }
  const auto* a_panel = reinterpret_cast<const char*>(panel);
  const auto* bytes = static_cast<const char*>(b);
  const int64_t panels = (n + 31) / 32, depth_bytes = k * Kernel::value_bytes;
  // A thread per 4M multiply-adds at least (a few microseconds of tiles): waking a second one
  // for less costs more than it saves (bf16 64^3 on 2 threads ran at a quarter of 1 thread's rate).
  const int64_t worth = std::max<int64_t>(1, m * n * k >> 22);
  const int parts = int(std::clamp<int64_t>(std::min<int64_t>(threads, worth), 1, panels));
  auto run = [&](int part) {
    const int64_t lo = panels * part / parts, hi = panels * (part + 1) / parts;
    AmxTiles tiles;
    for (int64_t p = lo; p < hi; ++p) {
      const int cols = int(std::min<int64_t>(32, n - 32 * p));
      for (int64_t r = 0; r < m; r += 32)
        amx_stream_b_panel<Kernel>(std::min<int64_t>(32, m - r), cols, depth_bytes,
                                   a_panel + r * slots * int64_t(sizeof(T)), bytes + 32 * p * ldb_bytes, ldb_bytes,
                                   alpha, beta, c + r + 32 * p * ldc, ldc);
    }
  };
  if (parts == 1) run(0);
  else parallel_run(parts, run);
}

#endif

STRATA_TILE_NS_END
