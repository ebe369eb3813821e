// Few-column TN products (op(A) = A^T, op(B) = B, columns within twice the kernel's rows, op(A)
// beyond L2) run as C^T = op(B)^T op(A)^T (src/blas/gemm/transposed_product.hpp): the trace
// says so, the result is the transposed call's C^T bit for bit (a C^T block of all rows), held
// to a double reference over several blocks with beta, leading dimensions past the operands
// and 2 threads giving 1 thread's bits; shapes outside the rule keep the direct route.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "support/gemm_trace.hpp"
#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/level3.hpp"
#include "strata/blas/lt.hpp"
#include "strata/tile/activation.hpp"
#include "strata/core/cpu.hpp"

using namespace strata;
using namespace strata::blas;

namespace {

bool transposed(const std::string& trace) { return trace.find("as C^T") != std::string::npos; }

// C (m x n, leading dimension ldc, holding 0.5 before) against the double sum of
// alpha op(A) op(B) + beta 0.5 for TN operands A (k x m, lda) and B (k x n, ldb).
template <class T>
void expect_near_reference(const std::vector<T>& A, index_t lda, const std::vector<T>& B, index_t ldb,
                           const std::vector<T>& C, index_t ldc, index_t m, index_t n, index_t k, double alpha,
                           double beta, double tol) {
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      double s = 0;
      for (index_t p = 0; p < k; ++p) s += double(A[size_t(p + i * lda)]) * double(B[size_t(p + j * ldb)]);
      const double want = alpha * s + beta * 0.5;
      ASSERT_NEAR(double(C[size_t(i + j * ldc)]), want, tol) << "i=" << i << " j=" << j;
    }
}

template <class T>
void check_real(const char* name) {
  Handle h;
  h.set_num_threads(1);
  const auto tile = test::sgemm_tile(h);
  index_t mr = tile.mr;
  if constexpr (sizeof(T) == 8) mr /= 2;  // the f64 kernel's vectors hold half as many values
  const index_t n = 2 * mr, k = 300;
  // Two C^T blocks (rows_per_block: half of L2 over n values a row), the second ragged.
  const index_t block = index_t(cpu_features().l2_bytes / 2) / (n * index_t(sizeof(T))) / 64 * 64;
  const index_t m = std::max<index_t>(block, 256) + 77, lda = k + 3, ldb = k + 5, ldc = m + 9;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> A(size_t(lda * m)), B(size_t(ldb * n));
  for (auto& v : A) v = T(d(rng));
  for (auto& v : B) v = T(d(rng));
  std::vector<T> C1(size_t(ldc * n), T(0.5)), C2 = C1;
  gemm<T>(h, Op::T, Op::N, m, n, k, T(1.5), A.data(), lda, B.data(), ldb, T(-2), C1.data(), ldc);
  expect_near_reference(A, lda, B, ldb, C1, ldc, m, n, k, 1.5, -2.0, sizeof(T) == 4 ? 2e-4 : 1e-11);
  h.set_num_threads(2);
  gemm<T>(h, Op::T, Op::N, m, n, k, T(1.5), A.data(), lda, B.data(), ldb, T(-2), C2.data(), ldc);
  ASSERT_EQ(0, std::memcmp(C1.data(), C2.data(), sizeof(T) * C1.size())) << name << ": 2 threads differ";
  if constexpr (sizeof(T) == 4) {
    h.set_num_threads(1);
    EXPECT_TRUE(transposed(test::sgemm_trace(h, Op::T, m, n, k))) << "the rule's shape";
    EXPECT_FALSE(transposed(test::sgemm_trace(h, Op::T, m, n + 1, k))) << "no whole half-height tiles";
    EXPECT_FALSE(transposed(test::sgemm_trace(h, Op::T, m, 4 * mr, k))) << "too many columns";
    EXPECT_FALSE(transposed(test::sgemm_trace(h, Op::N, m, n, k))) << "NN: op(A)^T would need a transposing pack";
    EXPECT_FALSE(transposed(test::sgemm_trace(h, Op::T, m, n, 200))) << "a short depth";
  }
}

}  // namespace

TEST(TransposedProduct, FewColumnTnSgemmRunsAsItsTranspose) { check_real<float>("sgemm"); }
TEST(TransposedProduct, FewColumnTnDgemmRunsAsItsTranspose) { check_real<double>("dgemm"); }

// One block: C equals the explicit transposed call's C^T bit for bit, f32 and bf16 (whose
// transposed product reads A's pairs in place: gemm_ex.hpp's order note).
TEST(TransposedProduct, OneBlockIsTheTransposedCallsResult) {
  const index_t m = 2048, n = 16, k = 1024;  // op(A) 4-8 MB: beyond L2 as bf16 and f32
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-2, 2);
  std::vector<float> A(size_t(k * m)), B(size_t(k * n));
  for (auto& v : A) v = bf16(d(rng)).to_float();
  for (auto& v : B) v = bf16(d(rng)).to_float();
  std::vector<bf16> Ah(A.size()), Bh(B.size());
  for (size_t i = 0; i < A.size(); ++i) Ah[i] = bf16(A[i]);
  for (size_t i = 0; i < B.size(); ++i) Bh[i] = bf16(B[i]);
  Handle h;
  for (DType t : {DType::f32, DType::bf16}) {
    const void* a = t == DType::f32 ? static_cast<const void*>(A.data()) : Ah.data();
    const void* b = t == DType::f32 ? static_cast<const void*>(B.data()) : Bh.data();
    std::vector<float> C(size_t(m * n)), Ct(size_t(n * m));
    gemm_ex(h, Op::T, Op::N, m, n, k, 1.0f, a, t, k, b, t, k, 0.0f, C.data(), m);
    gemm_ex(h, Op::T, Op::N, n, m, k, 1.0f, b, t, k, a, t, k, 0.0f, Ct.data(), n);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i)
        ASSERT_EQ(C[size_t(i + j * m)], Ct[size_t(j + i * n)]) << dtype_name(t) << " i=" << i << " j=" << j;
    expect_near_reference(A, k, B, k, C, m, m, n, k, 1.0, 0.0, 2e-3);
  }
}

// The Lt matmul's fused linear layer (bias along D's rows, GELU, a scale along its columns;
// beta reading C) on a few-column TN product runs transposed too: C's rows copied in
// transposed for beta, the epilogue's vectors swapped between rows and columns. One block:
// bit for bit the explicitly transposed matmul (its bias along columns, its scale along
// rows); two blocks: against a double reference.
TEST(TransposedProduct, LtBiasActivationScaleEpilogueRunsTransposed) {
  using namespace strata::blas::lt;
  Handle h;
  const auto tile = test::sgemm_tile(h);
  const index_t n = tile.mr / 2, k = 300;  // n: a half-height tile of the transposed product
  const index_t block = index_t(cpu_features().l2_bytes / 2) / (n * 4) / 64 * 64;
  for (index_t m : {index_t(700), std::max<index_t>(block, 256) + 77}) {
    std::mt19937 rng(static_cast<unsigned>(m));
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<float> A(size_t(k * m)), B(size_t(k * n)), C(size_t(m * n));
    std::vector<float> bias(static_cast<size_t>(m)), scale(static_cast<size_t>(n));
    for (auto* v : {&A, &B, &C, &bias}) for (auto& x : *v) x = d(rng);
    for (auto& x : scale) x = 0.5f + 0.5f * std::fabs(d(rng));
    auto layout = [](index_t rows, index_t cols) {
      MatrixLayout l;
      l.rows = rows, l.cols = cols, l.ld = rows;
      return l;
    };
    const float alpha = 0.75f, beta = 0.5f;
    MatmulDesc desc;
    desc.transa = Op::T;
    desc.epilogue.bias(bias.data(), Epilogue::Along::rows)
        .activation(Activation::gelu_erf)
        .scale(scale.data(), Epilogue::Along::cols);
    std::vector<float> D(C.size());
    matmul(h, desc, &alpha, A.data(), layout(k, m), B.data(), layout(k, n), &beta, C.data(), layout(m, n), D.data(),
           layout(m, n));
    // The engine's own policy (tiled_auto) says so in its reason; not for the NN product.
    for (Op ta : {Op::T, Op::N}) {
      MatmulDesc q = desc;
      q.transa = ta;
      const auto algos = heuristics(h, q, ta == Op::T ? layout(k, m) : layout(m, k), layout(k, n), layout(m, n),
                                    layout(m, n), {}, 8);
      const auto it =
          std::find_if(algos.begin(), algos.end(), [](const Algorithm& x) { return x.id == AlgoId::tiled_auto; });
      ASSERT_NE(it, algos.end());
      EXPECT_EQ(it->reason.find("few columns of a TN product") != std::string::npos, ta == Op::T) << it->reason;
    }
    if (m == 700) {
      std::vector<float> Ct(C.size()), Dt(C.size());
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) Ct[size_t(j + i * n)] = C[size_t(i + j * m)];
      MatmulDesc t;
      t.transa = Op::T;
      t.epilogue.bias(bias.data(), Epilogue::Along::cols)
          .activation(Activation::gelu_erf)
          .scale(scale.data(), Epilogue::Along::rows);
      matmul(h, t, &alpha, B.data(), layout(k, n), A.data(), layout(k, m), &beta, Ct.data(), layout(n, m), Dt.data(),
             layout(n, m));
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) ASSERT_EQ(D[size_t(i + j * m)], Dt[size_t(j + i * n)]) << i << " " << j;
      continue;
    }
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) {
        double s = 0;
        for (index_t p = 0; p < k; ++p) s += double(A[size_t(p + i * k)]) * double(B[size_t(p + j * k)]);
        const double pre = alpha * s + beta * double(C[size_t(i + j * m)]) + bias[size_t(i)];
        const double want = tile::activate(Activation::gelu_erf, pre, 0.0, 0.0) * scale[size_t(j)];
        ASSERT_NEAR(double(D[size_t(i + j * m)]), want, 2e-4) << "i=" << i << " j=" << j;
      }
  }
}

// A strided batch of such products runs entry by entry on the same route (entries of 2^18
// multiply-adds or more): each entry bit for bit its own single call, on 1 and 2 threads, f32
// and bf16.
TEST(TransposedProduct, BatchEntriesMatchTheirSingleCalls) {
  Handle h;
  const auto tile = test::sgemm_tile(h);
  const index_t m = 520, n = tile.mr / 2, k = 600, batch = 3, lda = k + 2, ldb = k + 4, ldc = m + 1;
  const index_t sa = lda * m + 10, sb = ldb * n + 6, sc = ldc * n + 3;
  ASSERT_TRUE(transposed(test::sgemm_trace(h, Op::T, m, n, k))) << "an entry's shape takes the route";
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> A(size_t(sa * batch)), B(size_t(sb * batch)), C0(size_t(sc * batch));
  for (auto* v : {&A, &B})
    for (auto& x : *v) x = bf16(d(rng)).to_float();  // bf16-exact: the same values serve both types
  std::fill(C0.begin(), C0.end(), 0.5f);  // as expect_near_reference takes C
  std::vector<bf16> Ah(A.size()), Bh(B.size());
  for (size_t i = 0; i < A.size(); ++i) Ah[i] = bf16(A[i]);
  for (size_t i = 0; i < B.size(); ++i) Bh[i] = bf16(B[i]);
  for (int threads : {1, 2})
    for (DType t : {DType::f32, DType::bf16}) {
      h.set_num_threads(threads);
      const void* a = t == DType::f32 ? static_cast<const void*>(A.data()) : Ah.data();
      const void* b = t == DType::f32 ? static_cast<const void*>(B.data()) : Bh.data();
      const std::size_t size = t == DType::f32 ? 4 : 2;
      std::vector<float> C = C0, single = C0;
      gemm_strided_batched_ex(h, Op::T, Op::N, m, n, k, 0.5f, a, t, lda, sa, b, t, ldb, sb, 0.25f, C.data(), ldc, sc,
                              batch);
      for (index_t e = 0; e < batch; ++e)
        gemm_ex(h, Op::T, Op::N, m, n, k, 0.5f, static_cast<const char*>(a) + size * std::size_t(e * sa), t, lda,
                static_cast<const char*>(b) + size * std::size_t(e * sb), t, ldb, 0.25f, single.data() + e * sc, ldc);
      ASSERT_EQ(0, std::memcmp(C.data(), single.data(), sizeof(float) * C.size()))
          << dtype_name(t) << " " << threads << " threads";
      expect_near_reference(A, lda, B, ldb, std::vector<float>(C.begin(), C.begin() + sc), ldc, m, n, k, 0.5, 0.25,
                            2e-4);
    }
}
