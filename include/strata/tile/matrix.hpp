// Layouts: a matrix operand as (pointer, row stride, column stride), BLIS style. Column-major
// has rs = 1, row-major cs = 1, and a transpose is a stride swap — so every op/order
// combination reaches the kernels as one shape.
#pragma once
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

template <class T>
struct MatrixView {
  const T* data = nullptr;
  int64_t rs = 1, cs = 1;
  const T& operator()(int64_t i, int64_t j) const { return data[i * rs + j * cs]; }
  MatrixView block(int64_t i, int64_t j) const { return {data + i * rs + j * cs, rs, cs}; }
  MatrixView transposed() const { return {data, cs, rs}; }
};

template <class T>
MatrixView<T> col_major(const T* p, int64_t ld) { return {p, 1, ld}; }

STRATA_TILE_NS_END
