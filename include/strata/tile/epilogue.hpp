// Composable epilogues, in the spirit of CUTLASS's epilogue visitor trees: a GEMM tile, after
// the mainloop has written alpha*acc + beta*C into it, is visited by a short program of
// pieces while it is still in L1. Users compose programs from the pieces below without
// touching a kernel; each piece is one loop nest over the tile.
//
//   bias (per row or per column)   activation (ReLU, leaky, GELU erf/tanh, SiLU, sigmoid, tanh, clamp)
//   residual add (scaled)          scale (per tensor / row / column)
//   aux store (e.g. pre-activation for backward)
//   quantising store to int8, f8e4m3, f8e5m2, bf16 or f16 (saturating, round to nearest even)
//
// The program runs the pieces in the order given. Pointers are to whole matrices; the
// visitor receives the tile's position (i0, j0) in C.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstddef>

#include "strata/core/dtype.hpp"
#include "strata/tile/activation.hpp"

namespace strata::tile {
// The program's steps are plain data, shared by every ISA's code.


enum class EpilogueKind : uint8_t { bias_row, bias_col, activation, residual_add, scale, aux_store, quantize_store };
enum class Broadcast : uint8_t { tensor, row, col };  // scale: one value, per row i, per column j

template <class T>
struct EpilogueStep {
  EpilogueKind kind;
  const T* vec = nullptr;       // bias_row/bias_col: bias; scale: per row/col factors
  Activation act = Activation::none;
  T a = T(0), b = T(0);          // activation parameters; residual_add: a = scale; scale (tensor): a
  Broadcast broadcast = Broadcast::tensor;
  const T* src = nullptr;        // residual_add: residual matrix (column-major)
  void* dst = nullptr;           // aux_store / quantize_store: output matrix (column-major)
  int64_t ld = 0;                // leading dimension of src / dst
  DType dst_type = DType::f32;   // quantize_store
};

}  // namespace strata::tile

STRATA_TILE_NS_BEGIN

template <class T>
struct EpilogueProgram {
  static constexpr bool is_identity = false;
  const EpilogueStep<T>* steps = nullptr;
  std::size_t count = 0;

  void operator()(T* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols) const {
    for (std::size_t k = 0; k < count; ++k) apply(steps[k], c, ldc, i0, j0, rows, cols);
  }

  // One step over the tile: the switch is outside the column loops, so each case is a plain
  // loop nest the compiler vectorises.
  static void apply(const EpilogueStep<T>& s, T* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
    auto each_column = [&](auto&& body) {
      for (int64_t j = 0; j < cols; ++j) body(c + j * ldc, j0 + j);
    };
    switch (s.kind) {
      case EpilogueKind::bias_row:
        return each_column([&](T* cj, int64_t) {
          for (int64_t i = 0; i < rows; ++i) cj[i] += s.vec[i0 + i];
        });
      case EpilogueKind::bias_col:
        return each_column([&](T* cj, int64_t gj) {
          const T bj = s.vec[gj];
          for (int64_t i = 0; i < rows; ++i) cj[i] += bj;
        });
      case EpilogueKind::activation: return activate_block(s.act, c, ldc, rows, cols, s.a, s.b);
      case EpilogueKind::residual_add:
        return each_column([&](T* cj, int64_t gj) {
          const T* r = s.src + i0 + gj * s.ld;
          for (int64_t i = 0; i < rows; ++i) cj[i] += s.a * r[i];
        });
      case EpilogueKind::scale:
        if (s.broadcast == Broadcast::tensor)
          return each_column([&](T* cj, int64_t) {
            for (int64_t i = 0; i < rows; ++i) cj[i] *= s.a;
          });
        if (s.broadcast == Broadcast::row)
          return each_column([&](T* cj, int64_t) {
            for (int64_t i = 0; i < rows; ++i) cj[i] *= s.vec[i0 + i];
          });
        return each_column([&](T* cj, int64_t gj) {
          const T f = s.vec[gj];
          for (int64_t i = 0; i < rows; ++i) cj[i] *= f;
        });
      case EpilogueKind::aux_store:
        return each_column([&](T* cj, int64_t gj) {
          T* d = static_cast<T*>(s.dst) + i0 + gj * s.ld;
          for (int64_t i = 0; i < rows; ++i) d[i] = cj[i];
        });
      case EpilogueKind::quantize_store:
        return each_column([&](T* cj, int64_t gj) { quantize_column(s, cj, i0 + gj * s.ld, rows); });
    }
  }

  // Saturating, round-to-nearest-even conversion of one column segment into dst.
  static void quantize_column(const EpilogueStep<T>& s, const T* x, int64_t offset, int64_t rows) {
    switch (s.dst_type) {
      case DType::i8: {
        int8_t* d = static_cast<int8_t*>(s.dst) + offset;
        for (int64_t i = 0; i < rows; ++i) {
          T v = std::nearbyint(x[i]);  // default rounding mode: to nearest, ties to even
          v = v < T(-128) ? T(-128) : (v > T(127) ? T(127) : v);
          d[i] = int8_t(v == v ? v : T(0));  // NaN → 0
        }
        break;
      }
      case DType::u8: {
        uint8_t* d = static_cast<uint8_t*>(s.dst) + offset;
        for (int64_t i = 0; i < rows; ++i) {
          T v = std::nearbyint(x[i]);
          v = v < T(0) ? T(0) : (v > T(255) ? T(255) : v);
          d[i] = uint8_t(v == v ? v : T(0));
        }
        break;
      }
      case DType::f8e4m3: store_minifloat<f8e4m3>(s, x, offset, rows); break;
      case DType::f8e5m2: store_minifloat<f8e5m2>(s, x, offset, rows); break;
      case DType::bf16: store_minifloat<bf16>(s, x, offset, rows); break;
      case DType::f16: store_minifloat<f16>(s, x, offset, rows); break;
      default: {
        T* d = static_cast<T*>(s.dst) + offset;
        for (int64_t i = 0; i < rows; ++i) d[i] = x[i];
      }
    }
  }

  template <class F>
  static void store_minifloat(const EpilogueStep<T>& s, const T* x, int64_t offset, int64_t rows) {
    F* d = static_cast<F*>(s.dst) + offset;
    for (int64_t i = 0; i < rows; ++i) d[i] = F::from_float_saturate(float(x[i]));
  }
};

STRATA_TILE_NS_END
