// Compiled with the AMX flags: the tile products' throughput (TDPBF16PS, TDPBUSD) on tiles held
// in registers, four independent accumulators as the GEMM kernels keep. Operands are normal
// numbers (bf16 near 1, bytes near 60): products of subnormal or zero data ran at a different
// rate on one VM. Call only where amx_ready().
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "fma_loop.hpp"

namespace strata::detail {

namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

// Loads the eight 16 x 64-byte tiles: accumulators zero, operands filled with `pattern`.
void load_tiles(uint32_t pattern) {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.bytes_per_row[t] = 64, cfg.rows[t] = 16;
  // Not _tile_loadconfig: GCC 12's names only 8 bytes of the operand as read, so the
  // configuration's other stores could be dropped or sunk past it (a fault at the first tile
  // load); the whole object as the asm's input keeps every byte.
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
  alignas(64) uint32_t data[256];
  for (uint32_t& d : data) d = pattern;
  _tile_loadd(4, data, 64);
  _tile_loadd(5, data, 64);
  _tile_loadd(6, data, 64);
  _tile_loadd(7, data, 64);
}

// A value from the accumulators, so the products cannot be dropped.
double drain() {
  alignas(64) uint32_t out[256];
  _tile_stored(0, out, 64);
  _tile_release();
  double s = 0;
  for (uint32_t x : out) s += double(x);
  return s;
}

}  // namespace

double amx_bf16_loop(int64_t iters) {
  load_tiles(0x3f803f00u);  // bf16 pairs 1.0, 0.5
  for (int64_t i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  return drain();
}

double amx_int8_loop(int64_t iters) {
  load_tiles(0x3c3d3e3fu);
  for (int64_t i = 0; i < iters; ++i) {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  return drain();
}

}  // namespace strata::detail
