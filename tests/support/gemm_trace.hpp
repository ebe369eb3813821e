// The STRATA_VERBOSE=1 line of one sgemm on all-ones operands: which route the engine took
// (path=small, one-block, dot, depth-split, tiled ...), for tests that check the route.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/blas/level3.hpp"
#include "strata/core/log.hpp"

namespace strata::test {

inline std::string sgemm_trace(const blas::Handle& h, blas::Op ta, blas::index_t m, blas::index_t n, blas::index_t k,
                               float alpha = 1.0f) {
  std::vector<float> A(size_t(m * k), 1.0f), B(size_t(k * n), 1.0f), C(size_t(m * n), 0.0f);
  testing::internal::CaptureStderr();
  set_verbose_level(1);
  blas::gemm<float>(h, ta, blas::Op::N, m, n, k, alpha, A.data(), ta == blas::Op::N ? m : k, B.data(), k, 0.0f,
                    C.data(), m);
  set_verbose_level(0);
  return testing::internal::GetCapturedStderr();
}

}  // namespace strata::test
