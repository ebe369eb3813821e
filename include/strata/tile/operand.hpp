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

// An operand packed ahead of time, once for many GEMMs (a convolution filter prepared for
// repeated inference calls): rows in panels of W, panel r holding `depth` x W values
// contiguously (row-fastest), the last panel zero-padded. The mainloop reads its panels in
// place; W must be the kernel's MR (as A) or NR (as B), and blocks start on whole panels
// (the scheduler's borders are whole micro-tiles).
template <class T, int W>
struct PrepackedOperand {
  using value_type = T;
  static constexpr bool has_view = false;
  static constexpr int width = W;
  const T* data = nullptr;
  int64_t depth = 0;
  int64_t first = 0;   // row of this operand's row 0 (a multiple of W)
  int64_t stride = 0;  // elements from one panel to the next (0: depth * W, back to back)

  // The micro-panel holding rows [i0, i0 + W), from depth p0 on; reads advance by W per step.
  const T* panel(int64_t i0, int64_t p0) const { return data + (first + i0) / W * panel_stride() + p0 * W; }
  int64_t panel_stride() const { return stride ? stride : depth * W; }
  PrepackedOperand shifted(int64_t i0) const { return {data, depth, first + i0, stride}; }
};

template <class Op>
inline constexpr bool is_prepacked = requires { Op::width; };
// The panel width of a prepacked operand (0 for any other operand).
template <class Op>
constexpr int prepacked_width() {
  if constexpr (is_prepacked<Op>) return Op::width;
  else return 0;
}

// An op(B) whose columns hold their depth contiguously in whole slots of a kernel's dot-product
// instruction (each Slot packs sizeof(Slot) / sizeof(Source) depth values: int8 quads, bf16
// pairs), read where it lies: `v` in slots, (j, q) at data + j * rs + q (bit patterns, never
// arithmetic); depth_per_value converts the mainloop's depth. The blocks and edge panels the
// mainloop packs go through `packer`, which must lay its slots out as they lie in memory.
// fits(): unit depth stride, a column stride and a depth of whole slots, slot-aligned data.
template <class Slot, class Source, class Packer>
struct SlotColumnsOperand {
  using value_type = Slot;
  static constexpr bool has_view = true;
  static constexpr int64_t depth_per_value = int64_t(sizeof(Slot) / sizeof(Source));
  MatrixView<Slot> v;
  Packer packer;

  // b: op(B) seen panel-major, (j, p) at data + j * rs + p * cs.
  static bool fits(const MatrixView<Source>& b, int64_t k) {
    return b.cs == 1 && b.rs % depth_per_value == 0 && k % depth_per_value == 0 &&
           reinterpret_cast<std::uintptr_t>(b.data) % sizeof(Slot) == 0;
  }
  static SlotColumnsOperand of(const MatrixView<Source>& b) {
    return {{reinterpret_cast<const Slot*>(b.data), b.rs / depth_per_value, 1}, {b}};
  }
  SlotColumnsOperand shifted(int64_t i0) const { return {v.block(i0, 0), packer.shifted(i0)}; }

  template <int W, class T>
  void pack(int64_t i0, int64_t len, int64_t p0, int64_t kc, T* __restrict dst) const {
    packer.template pack<W>(i0, len, p0, kc, dst);
  }
};

template <class S>
ViewOperand<S> a_operand(MatrixView<S> a) { return {a}; }               // op(A)(i, p)
template <class S>
ViewOperand<S> b_operand(MatrixView<S> b) { return {b.transposed()}; }  // op(B)(p, j) seen as (j, p)

STRATA_TILE_NS_END
