// The STRATA_VERBOSE=1 line of one sgemm on all-ones operands: which route the engine took
// (path=small, one-block, dot, depth-split, tiled ...), for tests that check the route.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/blas/level3.hpp"
#include "strata/core/log.hpp"

namespace strata::test {

// `lda` 0: op(A)'s own rows (no padding).
inline std::string sgemm_trace(const blas::Handle& h, blas::Op ta, blas::index_t m, blas::index_t n, blas::index_t k,
                               float alpha = 1.0f, blas::index_t lda = 0) {
  if (lda == 0) lda = ta == blas::Op::N ? m : k;
  std::vector<float> A(size_t(lda * (ta == blas::Op::N ? k : m)), 1.0f), B(size_t(k * n), 1.0f),
      C(size_t(m * n), 0.0f);
  testing::internal::CaptureStderr();
  set_verbose_level(1);
  blas::gemm<float>(h, ta, blas::Op::N, m, n, k, alpha, A.data(), lda, B.data(), k, 0.0f, C.data(), m);
  set_verbose_level(0);
  return testing::internal::GetCapturedStderr();
}

// The f32 kernel's register tile (MR x NR) on h's ISA, read off the trace's kernel name
// (kernel='avx512 f32 32x12').
struct TileShape {
  blas::index_t mr, nr;
};
inline TileShape sgemm_tile(const blas::Handle& h) {
  const std::string t = sgemm_trace(h, blas::Op::N, 300, 300, 1000);
  const auto end = t.find('\'', t.find("kernel='") + 8);
  const auto from = t.rfind(' ', end) + 1;
  const std::string shape = t.substr(from, end - from);
  return {std::stoll(shape), std::stoll(shape.substr(shape.find('x') + 1))};
}

}  // namespace strata::test
