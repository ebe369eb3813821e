// Operands of the mainloop: anything that can pack panels of itself. The mainloop only asks an
// operand to "pack `len` panel rows starting at i0, for k in [p0, p0 + kc), W wide" — so a
// matrix in memory, a matrix of another element type, or a convolution's virtual im2col
// matrix (conv_operand.hpp) are all the same to it.
//
//   op(A): the panel dimension is rows (i), the depth is k.
//   op(B): the panel dimension is columns (j), the depth is k.
#pragma once
#include <cstdint>

#include "strata/tile/matrix.hpp"
#include "strata/tile/pack.hpp"

STRATA_TILE_NS_BEGIN

// A strided matrix in memory, seen panel-major: v(i, p) with i along the panel dimension.
// Element type S may be narrower than the compute type (widened while packing).
template <class S>
struct ViewOperand {
  using value_type = S;
  static constexpr bool has_view = true;  // may be read in place by the microkernel
  MatrixView<S> v;

  template <int W, class T>
  void pack(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* dst) const {
    pack_panels<W>(len, kc, v.block(i0, p0), dst);
  }
  ViewOperand shifted(int64_t i0) const { return {v.block(i0, 0)}; }
};

template <class S>
ViewOperand<S> a_operand(MatrixView<S> a) { return {a}; }               // op(A)(i, p)
template <class S>
ViewOperand<S> b_operand(MatrixView<S> b) { return {b.transposed()}; }  // op(B)(p, j) seen as (j, p)

STRATA_TILE_NS_END
