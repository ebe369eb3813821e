// AMX's tile registers as the AMX kernels use them: eight tiles of 16 rows x 64 bytes (the
// largest palette-1 shape), configured once per thread for a whole mainloop run (the
// configuration load zeroes every tile and costs far more than one tile product) and released
// after it, so that a thread that stops using AMX does not keep its 8 KB of tile state alive.
//
// The 2 x 2 kernels' roles (amx_bf16_gemm.hpp, amx_int8_gemm.hpp):
//   tiles 0-3  accumulators: C'(jb, ib) = tile 2 jb + ib, 16 columns of C x 16 of its rows
//   tiles 4-5  the first operand:  16 columns of op(B) each, one 64-byte depth row per column
//   tiles 6-7  the second operand: 16 rows of op(A) each, one 64-byte row per depth group
// (AMX's own names: C[M][N] += A[M][K] B[K][N] with M = C's columns, N = C's rows, so that a
// tile row is 16 consecutive elements of a column-major C column.)
//
// Requires a process that was granted the tile state (amx_ready() in core/cpu.hpp).
#pragma once
#include <algorithm>
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

#if defined(__AMX_TILE__)
#include <immintrin.h>
#endif

STRATA_TILE_NS_BEGIN

#if defined(__AMX_TILE__)

// The 64-byte LDTILECFG operand (palette 1).
struct alignas(64) AmxConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(AmxConfig) == 64, "LDTILECFG reads exactly 64 bytes");

// Holds the eight 16 x 64-byte tiles configured for its lifetime (one thread's). Nested holds
// (a batch's range of entries around each entry's mainloop runs) configure and release once,
// at the outermost: every hold asks for the same configuration.
// A hold given its own configuration (amx_small_products.hpp's tiles shaped to one product's
// entries) loads it whether or not it is nested, and a nested one puts the eight 16 x 64-byte
// tiles back when it ends; it must not enclose other holds (they assume the standard tiles).
class AmxTiles {
 public:
  AmxTiles() {
    if (depth()++ == 0) load(standard());
  }
  explicit AmxTiles(const AmxConfig& shaped) : shaped_(true) {
    ++depth();
    load(shaped);
  }
  ~AmxTiles() {
    if (--depth() == 0) _tile_release();
    else if (shaped_) load(standard());
  }
  AmxTiles(const AmxTiles&) = delete;
  AmxTiles& operator=(const AmxTiles&) = delete;

 private:
  bool shaped_ = false;
  static int& depth() {
    static thread_local int held = 0;
    return held;
  }
  static AmxConfig standard() {
    AmxConfig cfg;
    for (int t = 0; t < 8; ++t) cfg.bytes_per_row[t] = 64, cfg.rows[t] = 16;
    return cfg;
  }
  // Not _tile_loadconfig: GCC 12's names only 8 bytes of the operand as read, so the
  // configuration's other stores could be dropped or sunk past it (a fault at the first tile
  // load); the whole object as the asm's input keeps every byte.
  static void load(const AmxConfig& cfg) { __asm__ volatile("ldtilecfg %0" : : "m"(cfg)); }
};

// Whether the accumulators can start from C and end in it as they are: alpha 1 and beta 0 or 1
// (every k block after the first has beta 1). Otherwise they start at zero and are combined with
// C through a buffer.
template <class T>
inline bool amx_c_direct(T alpha, T beta) {
  return alpha == T(1) && (beta == T(0) || beta == T(1));
}

// Fetches the C tile below this one (the mainloop's next call down a column panel: 32 columns
// of two lines each) into L1 a few lines per depth group, so that its tile loads and stores do
// not wait on L2 or memory. In-process, bf16 2048^3 1.07x, 1024^3 1.01x, 256^3 0.99x. Only
// over 4 depth groups or more: a shorter loop issued its 64 fetches in one or two bursts ahead
// of its tile loads (without them, in-process: bf16 32^3-96^3 1.10-1.12x, u8s8s32 64^3 1.15x,
// 512 x 512 x 128 1.09x, 1024 x 1024 x 64-128 1.00-1.06x).
struct AmxNextC {
  const char* c;
  int64_t ldc_bytes, per_group;
  [[gnu::always_inline]] void fetch(int64_t g) const {
    const int64_t end = std::min<int64_t>(64, (g + 1) * per_group);
    for (int64_t l = g * per_group; l < end; ++l) _mm_prefetch(c + (l >> 1) * ldc_bytes + 64 * (l & 1), _MM_HINT_T0);
  }
};

// Where a depth group's op(B) tiles lie: rows of 64 bytes (one column's group each) `stride`
// bytes apart, the second tile's 16 rows after the first's -- or, where `rows2` is set, at
// rows2, stride2 apart (an implicit-GEMM convolution reads each half of its 32 pixels from
// wherever it lies: in the input itself, or staged).
struct AmxBGroup {
  const char* rows;
  int64_t stride;
  const char* rows2 = nullptr;
  int64_t stride2 = 0;
};

// op(B) as the mainloop packs it: 2 KB a group, rows adjacent.
struct AmxPackedB {
  const char* panel;
  [[gnu::always_inline]] AmxBGroup operator()(int64_t g) const { return {panel + 2048 * g, 64}; }
};

// One 32 x 32 tile of C (f32 or s32, ldc in elements): C = alpha * sum + beta * C (beta 0 never
// reads C), the sum over `groups` depth groups of 32-bit slots: a (op(A), AMX's second operand)
// a packed panel, 2 KB a group, 16 slot rows of 32 rows; b_group(g) (op(B), the first) where
// group g's 32 columns of 16 slots lie (AmxPackedB, or op(B) in place: amx_stream_b.hpp).
// products() issues the four tile products (tiles 0-3 += 4/5 x 6/7); combine(acc, c) gives one
// element of the buffered result (the integer one wraps around).
template <class T, class BGroups, class Products, class Combine>
[[gnu::always_inline]] inline void amx_run_tile(int64_t groups, const void* a, BGroups&& b_group, T* c, int64_t ldc,
                                                T alpha, T beta, Products&& products, Combine&& combine) {
  const int64_t stride = ldc * int64_t(sizeof(T));
  const bool direct = amx_c_direct(alpha, beta);
  if (direct && beta == T(1)) {
    _tile_loadd(0, c, stride);
    _tile_loadd(1, c + 16, stride);
    _tile_loadd(2, c + 16 * ldc, stride);
    _tile_loadd(3, c + 16 + 16 * ldc, stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  const AmxNextC next{reinterpret_cast<const char*>(c + 32), stride, groups >= 4 ? (64 + groups - 1) / groups : 0};
  const char* ag = static_cast<const char*>(a);
  for (int64_t g = 0; g < groups; ++g, ag += 2048) {
    next.fetch(g);
    const AmxBGroup bg = b_group(g);
    _tile_loadd(4, bg.rows, bg.stride);
    if (bg.rows2) _tile_loadd(5, bg.rows2, bg.stride2);
    else _tile_loadd(5, bg.rows + 16 * bg.stride, bg.stride);
    _tile_loadd(6, ag, 128);
    _tile_loadd(7, ag + 64, 128);
    products();
  }
  if (direct) {
    _tile_stored(0, c, stride);
    _tile_stored(1, c + 16, stride);
    _tile_stored(2, c + 16 * ldc, stride);
    _tile_stored(3, c + 16 + 16 * ldc, stride);
    return;
  }
  alignas(64) T acc[32 * 32];  // column-major, leading dimension 32
  _tile_stored(0, acc, 128);
  _tile_stored(1, acc + 16, 128);
  _tile_stored(2, acc + 16 * 32, 128);
  _tile_stored(3, acc + 16 + 16 * 32, 128);
  for (int j = 0; j < 32; ++j)
#pragma GCC ivdep
    for (int i = 0; i < 32; ++i) {
      T& out = c[i + j * ldc];
      out = beta == T(0) ? combine(acc[i + 32 * j], T(0)) : combine(acc[i + 32 * j], out);
    }
}

#endif

STRATA_TILE_NS_END
