// gemm_ex with bf16/f16 inputs equals the f32 GEMM of the exactly widened inputs (bitwise:
// same kernels, same order), on every ISA path and thread count; invalid types are rejected.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/status.hpp"

using namespace strata;
using namespace strata::blas;

template <class N>
void check_narrow(DType t) {
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    for (int threads : {1, 2})
      for (Op ta : {Op::N, Op::T})
        for (auto [m, n, k] : {std::tuple{37, 23, 51}, std::tuple{200, 9, 300}, std::tuple{5, 300, 17}}) {
          std::mt19937 rng(5);
          std::uniform_real_distribution<float> d(-2, 2);
          std::vector<N> A(size_t(m * k)), B(size_t(k * n));
          std::vector<float> Af(A.size()), Bf(B.size());
          for (size_t i = 0; i < A.size(); ++i) A[i] = N(d(rng)), Af[i] = A[i].to_float();
          for (size_t i = 0; i < B.size(); ++i) B[i] = N(d(rng)), Bf[i] = B[i].to_float();
          std::vector<float> C1(size_t(m * n), 1.0f), C2 = C1;
          Handle h;
          h.set_isa(isa);
          h.set_num_threads(threads);
          const index_t lda = ta == Op::N ? m : k;
          gemm_ex(h, ta, Op::N, m, n, k, 0.5f, A.data(), t, lda, B.data(), t, k, 2.0f, C1.data(), m);
          gemm<float>(h, ta, Op::N, m, n, k, 0.5f, Af.data(), lda, Bf.data(), k, 2.0f, C2.data(), m);
          ASSERT_EQ(0, std::memcmp(C1.data(), C2.data(), C1.size() * sizeof(float)))
              << dtype_name(t) << " isa=" << isa_name(isa) << " m=" << m;
        }
  }
}

TEST(GemmEx, Bf16EqualsF32OfWidenedInputs) { check_narrow<bf16>(DType::bf16); }
TEST(GemmEx, F16EqualsF32OfWidenedInputs) { check_narrow<f16>(DType::f16); }

TEST(GemmEx, RejectsBadTypes) {
  float C[4] = {};
  int8_t a[4] = {}, b[4] = {};
  try {
    gemm_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1, a, DType::i8, 2, b, DType::i8, 2, 0, C, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::not_supported);
  }
  bf16 x[4];
  f16 y[4];
  try {
    gemm_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1, x, DType::bf16, 2, y, DType::f16, 2, 0, C, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "b_type");
  }
}
