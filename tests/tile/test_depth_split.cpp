// blas::MathMode::fast splits the depth among threads where the split of C would leave threads
// idle (tile/depth_split.hpp): few rows and columns over a long depth. The inputs are small
// integers, so every partial sum is exact and any order of the additions gives the same bits:
// the split product must equal the exact reference, which a piece lost, counted twice, or
// given beta twice would not.
#include <gtest/gtest.h>

#include "support/gemm_trace.hpp"

#include <array>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "strata/blas/level3.hpp"
#include "strata/blas/lt.hpp"

using namespace strata;
using namespace strata::blas;

namespace {

template <class T>
std::vector<T> small_ints(std::size_t count, std::mt19937& rng) {
  std::vector<T> v(count);
  for (auto& x : v) x = T(int(rng() % 7) - 3);
  return v;
}

Handle handle(int threads, MathMode mode) {
  Handle h;
  h.set_num_threads(threads);
  h.set_math_mode(mode);
  return h;
}

std::string trace(const Handle& h, index_t m, index_t n, index_t k) { return test::sgemm_trace(h, Op::N, m, n, k); }

template <class T>
void split_products_are_exact() {
  std::mt19937 rng(21);
  const Handle fast = handle(2, MathMode::fast);
  // The last entry: whether the depth is split in two (1) or C, evenly enough (0), on every ISA's
  // tile, or whether that depends on the tile (-1: 16 columns on AVX-512's 12-wide tiles go
  // 12 + 4 and split the depth, on AVX2's 6-wide ones 6 + 10 and do not).
  for (auto [m, n, k, split] : {std::array<index_t, 4>{16, 16, 20000, -1}, {1, 1, 300000, 1}, {33, 7, 3001, -1},
                                {12, 16, 4096, -1}, {3, 2, 100000, 1}, {8, 4, 20000, 1}, {2, 4, 80000, 1},
                                {1, 1, 4096, 0}, {5, 64, 777, 0}, {12, 40, 1024, 0}}) {
    if constexpr (std::is_same_v<T, float>) {
      if (split >= 0) {
        EXPECT_EQ(trace(fast, m, n, k).find("path=depth-split pieces=2") != std::string::npos, split != 0)
            << m << "x" << n << "x" << k;
      }
    }
    for (Op ta : {Op::N, Op::T})
      for (Op tb : {Op::N, Op::T})
        for (T beta : {T(0), T(0.5)}) {
          const index_t lda = (ta == Op::N ? m : k) + 1, ldb = (tb == Op::N ? k : n) + 2, ldc = m + 3;
          const auto A = small_ints<T>(size_t(lda * (ta == Op::N ? k : m)), rng);
          const auto B = small_ints<T>(size_t(ldb * (tb == Op::N ? n : k)), rng);
          const auto C0 = small_ints<T>(size_t(ldc * n), rng);
          std::vector<T> C = C0;
          const T alpha = T(1.5);
          gemm<T>(fast, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
          for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) {
              double acc = 0;
              for (index_t p = 0; p < k; ++p)
                acc += double(ta == Op::N ? A[size_t(i + p * lda)] : A[size_t(p + i * lda)]) *
                       double(tb == Op::N ? B[size_t(p + j * ldb)] : B[size_t(j + p * ldb)]);
              const double want = double(alpha) * acc + double(beta) * double(C0[size_t(i + j * ldc)]);
              ASSERT_EQ(double(C[size_t(i + j * ldc)]), want)
                  << "m=" << m << " n=" << n << " k=" << k << " ops=" << char(ta) << char(tb) << " beta=" << beta
                  << " i=" << i << " j=" << j;
            }
          // Rows between m and ldc untouched.
          for (index_t j = 0; j < n; ++j)
            for (index_t i = m; i < ldc; ++i) ASSERT_EQ(C[size_t(i + j * ldc)], C0[size_t(i + j * ldc)]);
        }
  }
}

}  // namespace

TEST(DepthSplit, FastMathSplitsTheDepthExactly) {
  split_products_are_exact<float>();
  split_products_are_exact<double>();
}

// Only fast mode, only with threads the split of C would leave idle, only over depth enough.
TEST(DepthSplit, TakenOnlyInFastModeWhereThreadsWouldIdle) {
  EXPECT_NE(trace(handle(2, MathMode::fast), 8, 4, 20000).find("path=depth-split pieces=2"), std::string::npos);
  EXPECT_EQ(trace(handle(2, MathMode::deterministic), 8, 4, 20000).find("depth-split"), std::string::npos);
  EXPECT_EQ(trace(handle(1, MathMode::fast), 8, 4, 20000).find("depth-split"), std::string::npos);
  EXPECT_EQ(trace(handle(2, MathMode::fast), 256, 256, 2048).find("depth-split"), std::string::npos);  // C splits
  EXPECT_EQ(trace(handle(2, MathMode::fast), 8, 4, 300).find("depth-split"), std::string::npos);      // shallow
}

// The Lt matmul's epilogue (bias, ReLU, scale) runs once on the summed depth, not per piece.
TEST(DepthSplit, LtEpilogueRunsOnTheSummedDepth) {
  using namespace strata::blas::lt;
  std::mt19937 rng(22);
  const index_t m = 20, n = 10, k = 8000;
  const auto A = small_ints<float>(size_t(m * k), rng), B = small_ints<float>(size_t(k * n), rng);
  const auto C0 = small_ints<float>(size_t(m * n), rng), bias = small_ints<float>(size_t(m), rng);
  MatmulDesc desc;
  desc.epilogue.bias(bias.data(), Epilogue::Along::rows).activation(Activation::relu).scale(0.5);
  const MatrixLayout la{DType::f32, m, k, m}, lb{DType::f32, k, n, k}, lc{DType::f32, m, n, m};
  const float alpha = 1.0f, beta = 0.5f;
  std::vector<float> fast = C0, det = C0;
  matmul(handle(2, MathMode::fast), desc, &alpha, A.data(), la, B.data(), lb, &beta, fast.data(), lc, fast.data(), lc);
  matmul(handle(2, MathMode::deterministic), desc, &alpha, A.data(), la, B.data(), lb, &beta, det.data(), lc,
         det.data(), lc);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      double acc = 0;
      for (index_t p = 0; p < k; ++p) acc += double(A[size_t(i + p * m)]) * double(B[size_t(p + j * k)]);
      const double pre = acc + 0.5 * double(C0[size_t(i + j * m)]) + double(bias[size_t(i)]);
      const double want = 0.5 * (pre > 0 ? pre : 0);
      ASSERT_EQ(double(fast[size_t(i + j * m)]), want) << "i=" << i << " j=" << j;
      ASSERT_EQ(fast[size_t(i + j * m)], det[size_t(i + j * m)]);
    }
}
