// The identity epilogue: what plain GEMM uses. Composable epilogues live in epilogue.hpp.
#pragma once
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

struct NoEpilogue {
  static constexpr bool is_identity = true;
  template <class T>
  void operator()(T*, int64_t, int64_t, int64_t, int64_t, int64_t) const {}
};

STRATA_TILE_NS_END
