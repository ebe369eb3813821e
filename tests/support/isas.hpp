// The ISAs this CPU runs, lowest first: what tests sweep kernels over (STRATA_ISA's choices).
#pragma once
#include <vector>

#include "strata/core/isa.hpp"

namespace strata::test {

inline std::vector<Isa> usable_isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::generic, Isa::avx2, Isa::avx512})
    if (isa_supported(i)) out.push_back(i);
  return out;
}

}  // namespace strata::test
