// blas::lt against a naive reference: epilogue pieces alone and composed, row/column-major
// per matrix, batches with broadcast, narrow quantised outputs, heuristics and errors.
#include <gtest/gtest.h>

#include "support/expect_error.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/level3.hpp"
#include "strata/blas/lt.hpp"
#include "strata/core/isa.hpp"
#include "strata/core/minifloat.hpp"
#include "strata/core/status.hpp"

using namespace strata;
using namespace strata::blas;
using namespace strata::blas::lt;

namespace {

struct Mat {
  std::vector<float> v;
  MatrixLayout l;
  float at(index_t i, index_t j, index_t item = 0) const {
    index_t off = l.batch_count == 1 ? 0 : item * l.batch_stride;
    return v[size_t(off + (l.order == Order::col_major ? i + j * l.ld : i * l.ld + j))];
  }
};

Mat make(index_t rows, index_t cols, Order order, std::mt19937& rng, index_t batch = 1, index_t pad = 2) {
  Mat m;
  m.l.rows = rows, m.l.cols = cols, m.l.order = order;
  m.l.ld = (order == Order::col_major ? rows : cols) + pad;
  m.l.batch_count = batch;
  m.l.batch_stride = m.l.ld * (order == Order::col_major ? cols : rows) + 5;
  m.v.resize(size_t(m.l.batch_stride * batch));
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& x : m.v) x = d(rng);
  return m;
}

double ref_act(Activation a, double x) { return tile::activate(a, x, 0.05, 0.5); }

}  // namespace

struct LtCase {
  Op ta, tb;
  Order oa, ob, od;
  index_t m, n, k, batch;
};

class LtSweep : public ::testing::TestWithParam<LtCase> {};

TEST_P(LtSweep, BiasActivationResidualAuxScale) {
  const LtCase p = GetParam();
  std::mt19937 rng(11);
  Mat A = make(p.ta == Op::N ? p.m : p.k, p.ta == Op::N ? p.k : p.m, p.oa, rng, p.batch);
  Mat B = make(p.tb == Op::N ? p.k : p.n, p.tb == Op::N ? p.n : p.k, p.ob, rng, 1);  // broadcast B
  Mat D = make(p.m, p.n, p.od, rng, p.batch);
  Mat R = D, AUX = D;
  for (auto& x : AUX.v) x = 0;
  const Mat D0 = D;
  std::vector<float> bias(size_t(p.m)), colscale(size_t(p.n));
  for (auto& x : bias) x = float(rng() % 100) / 50.f - 1;
  for (auto& x : colscale) x = float(rng() % 100) / 100.f + 0.5f;
  for (Activation act : {Activation::relu, Activation::gelu_erf, Activation::gelu_tanh, Activation::silu,
                         Activation::leaky_relu, Activation::clamp, Activation::sigmoid, Activation::tanh}) {
    D = D0;
    MatmulDesc desc;
    desc.transa = p.ta, desc.transb = p.tb;
    desc.epilogue.bias(bias.data(), Epilogue::Along::rows)
        .aux(AUX.v.data(), AUX.l.ld)
        .activation(act, 0.05, 0.5)
        .residual(R.v.data(), R.l.ld, 0.5)
        .scale(colscale.data(), Epilogue::Along::cols);
    const float alpha = 0.75f, beta = 0.5f;
    matmul(Handle{}, desc, &alpha, A.v.data(), A.l, B.v.data(), B.l, &beta, D.v.data(), D.l, D.v.data(), D.l);
    for (index_t item = 0; item < p.batch; ++item)
      for (index_t i = 0; i < p.m; ++i)
        for (index_t j = 0; j < p.n; ++j) {
          double acc = 0, mag = 0;
          for (index_t l = 0; l < p.k; ++l) {
            double a = p.ta == Op::N ? A.at(i, l, item) : A.at(l, i, item);
            double b = p.tb == Op::N ? B.at(l, j) : B.at(j, l);
            acc += a * b, mag += std::fabs(a * b);
          }
          double pre = alpha * acc + beta * D0.at(i, j, item) + bias[size_t(i)];
          double want = (ref_act(act, pre) + 0.5 * R.at(i, j, item)) * colscale[size_t(j)];
          double tol = 1e-5 * (mag + 2) + 4e-6 * std::fabs(want);
          ASSERT_NEAR(AUX.at(i, j, item), pre, tol) << "aux i=" << i << " j=" << j;
          ASSERT_NEAR(D.at(i, j, item), want, tol * 3) << "act=" << int(act) << " i=" << i << " j=" << j << " item=" << item;
        }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, LtSweep,
    ::testing::Values(LtCase{Op::N, Op::N, Order::col_major, Order::col_major, Order::col_major, 37, 29, 41, 1},
                      LtCase{Op::T, Op::N, Order::row_major, Order::col_major, Order::row_major, 33, 18, 20, 3},
                      LtCase{Op::N, Op::T, Order::col_major, Order::row_major, Order::row_major, 8, 70, 33, 2},
                      LtCase{Op::T, Op::T, Order::row_major, Order::row_major, Order::col_major, 70, 5, 19, 4},
                      LtCase{Op::N, Op::N, Order::col_major, Order::col_major, Order::col_major, 130, 140, 300, 1}));

// Each ISA's compiled epilogue (FMA contraction in the AVX kernels, none in the generic one)
// against libm in double on a dense grid: D = act(C), one column per slice of the range.
TEST(Lt, ActivationEpiloguesMatchLibmOnADenseGridOnEveryIsa) {
  const index_t m = 4001, n = 61;  // x = -15 .. 15 by 1/8000 per column, columns shifted
  std::vector<float> A(size_t(m), 0.0f), B(size_t(n), 0.0f), C(size_t(m * n)), D(size_t(m * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) C[size_t(i + j * m)] = float(-15.0 + (double(j) * double(m) + double(i)) * 30.0 / double(m * n));
  C[0] = -1e30f, C[1] = 1e30f, C[2] = std::nanf(""), C[3] = -0.0f, C[4] = 1e-30f, C[5] = -3e-38f;
  MatrixLayout la{DType::f32, m, 1, m}, lb{DType::f32, 1, n, 1}, lc{DType::f32, m, n, m};
  const float alpha = 0.0f, beta = 1.0f;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    Handle h;
    h.set_isa(isa);
    for (Activation act : {Activation::gelu_erf, Activation::gelu_tanh, Activation::silu, Activation::sigmoid,
                           Activation::tanh}) {
      MatmulDesc desc;
      desc.epilogue.activation(act);
      matmul(h, desc, &alpha, A.data(), la, B.data(), lb, &beta, C.data(), lc, D.data(), lc);
      for (size_t e = 0; e < C.size(); ++e) {
        const double want = tile::activate(act, double(C[e]), 0.0, 0.0);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(D[e])) << "act=" << int(act) << " isa=" << isa_name(isa);
          continue;
        }
        ASSERT_NEAR(D[e], want, 1e-6 + 1e-6 * std::fabs(want))
            << "act=" << int(act) << " x=" << C[e] << " isa=" << isa_name(isa);
      }
    }
  }
}

TEST(Lt, QuantisedOutputsSaturateAndRoundToEven) {
  // A = identity-like so D = C exactly, then quantise.
  const index_t m = 8, n = 1, k = 1;
  std::vector<float> A(m, 1.0f), B(1, 1.0f);
  std::vector<float> Cv = {0.5f, 1.5f, 2.5f, -0.5f, 127.4f, 300.0f, -300.0f, -127.6f};
  MatrixLayout la{DType::f32, m, k, m}, lb{DType::f32, k, n, k}, lc{DType::f32, m, n, m}, ld{DType::i8, m, n, m};
  std::vector<int8_t> D(m, 99);
  MatmulDesc desc;
  const float alpha = 0.0f, beta = 1.0f;
  auto algos = heuristics(Handle{}, desc, la, lb, lc, ld);
  ASSERT_FALSE(algos.empty());
  EXPECT_GT(algos[0].workspace_bytes, 0u);
  std::vector<float> ws(algos[0].workspace_bytes / sizeof(float) + 1);
  EXPECT_THROW(matmul(Handle{}, desc, &alpha, A.data(), la, B.data(), lb, &beta, Cv.data(), lc, D.data(), ld,
                      &algos[0], ws.data(), 0),
               Error);
  for (auto d : D) EXPECT_EQ(d, 99);  // nothing written on the rejected call
  matmul(Handle{}, desc, &alpha, A.data(), la, B.data(), lb, &beta, Cv.data(), lc, D.data(), ld, &algos[0], ws.data(),
         ws.size() * sizeof(float));
  const int8_t want[] = {0, 2, 2, 0, 127, 127, -128, -128};
  for (index_t i = 0; i < m; ++i) EXPECT_EQ(D[size_t(i)], want[i]) << i;

  std::vector<uint16_t> Dh(m);
  MatrixLayout lbf{DType::bf16, m, n, m};
  matmul(Handle{}, desc, &alpha, A.data(), la, B.data(), lb, &beta, Cv.data(), lc, Dh.data(), lbf, nullptr,
         ws.data(), ws.size() * sizeof(float));
  for (index_t i = 0; i < m; ++i) EXPECT_EQ(Dh[size_t(i)], bf16(Cv[size_t(i)]).bits);
}

TEST(Lt, HeuristicsRankByShapeWithReasons) {
  MatmulDesc desc;
  auto layout = [](index_t r, index_t c) { return MatrixLayout{DType::f32, r, c, r}; };
  auto skinny = heuristics(Handle{}, desc, layout(16, 4096), layout(4096, 4096), layout(16, 4096), layout(16, 4096));
  EXPECT_EQ(skinny[0].id, AlgoId::tiled_stream_b);
  EXPECT_FALSE(skinny[0].reason.empty());
  auto square = heuristics(Handle{}, desc, layout(512, 512), layout(512, 512), layout(512, 512), layout(512, 512));
  EXPECT_EQ(square[0].id, AlgoId::tiled_auto);  // the engine's own policy, as gemm uses
  EXPECT_NE(std::find_if(square.begin(), square.end(), [](auto& x) { return x.id == AlgoId::tiled_pack_both; }),
            square.end());
  // One k block and a C of a few register tiles: the one-block path first; not for a deep product.
  auto one_block = heuristics(Handle{}, desc, layout(64, 64), layout(64, 64), layout(64, 64), layout(64, 64));
  EXPECT_EQ(one_block[0].id, AlgoId::one_block);
  EXPECT_NE(one_block[0].reason.find("one k block"), std::string::npos) << one_block[0].reason;
  // 8 rows over a depth of 8: the engine's small path, named in the reason (every ISA).
  auto small_ranked = heuristics(Handle{}, desc, layout(8, 8), layout(8, 8), layout(8, 8), layout(8, 8));
  EXPECT_EQ(small_ranked[0].id, AlgoId::one_block);
  EXPECT_NE(small_ranked[0].reason.find("the small path"), std::string::npos) << small_ranked[0].reason;
  auto deep = heuristics(Handle{}, desc, layout(64, 4096), layout(4096, 64), layout(64, 64), layout(64, 64));
  for (const auto& algo : deep) EXPECT_NE(algo.id, AlgoId::one_block);
  {  // every candidate of the small product gives the same bits
    std::mt19937 rng(4);
    std::vector<float> A(64 * 64), B(64 * 64), D1(64 * 64), D2(64 * 64);
    for (auto& x : A) x = float(rng() % 7) - 3.5f;
    for (auto& x : B) x = float(rng() % 5) - 2.25f;
    const float one = 1, zero = 0;
    MatrixLayout l = layout(64, 64);
    matmul(Handle{}, desc, &one, A.data(), l, B.data(), l, &zero, nullptr, l, D1.data(), l, &one_block[0]);
    for (auto& algo : one_block) {
      matmul(Handle{}, desc, &one, A.data(), l, B.data(), l, &zero, nullptr, l, D2.data(), l, &algo);
      EXPECT_EQ(std::memcmp(D1.data(), D2.data(), D1.size() * sizeof(float)), 0) << algo.name;
    }
  }
  {  // Few rows and columns over a long depth: dot products first (A^T B: nothing copied); it
     // matches blas::gemm bit for bit and every candidate matches a reference (exact here:
     // small integers and halves).
    MatmulDesc tn;
    tn.transa = Op::T;
    const index_t m = 8, n = 8, k = 1024;
    auto dot = heuristics(Handle{}, tn, layout(k, m), layout(k, n), layout(m, n), layout(m, n));
    if (Handle{}.isa() == Isa::avx512) {  // the dot path's ISA (tile::dot_gemm_pays)
      ASSERT_EQ(dot[0].id, AlgoId::dot_products);
      EXPECT_NE(dot[0].reason.find("along the depth"), std::string::npos) << dot[0].reason;
    } else {
      for (const auto& algo : dot) EXPECT_NE(algo.id, AlgoId::dot_products);
    }
    std::mt19937 rng(5);
    std::vector<float> A(k * m), B(k * n), D(m * n), G(m * n), R(m * n, 0.0f);
    for (auto& x : A) x = float(rng() % 7) - 3;
    for (auto& x : B) x = float(rng() % 5) * 0.5f - 1;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i)
        for (index_t p = 0; p < k; ++p) R[i + j * m] += A[p + i * k] * B[p + j * k];
    const float one = 1, zero = 0;
    for (auto& algo : dot) {
      matmul(Handle{}, tn, &one, A.data(), layout(k, m), B.data(), layout(k, n), &zero, nullptr, layout(m, n),
             D.data(), layout(m, n), &algo);
      EXPECT_EQ(D, R) << algo.name;
    }
    matmul(Handle{}, tn, &one, A.data(), layout(k, m), B.data(), layout(k, n), &zero, nullptr, layout(m, n),
           D.data(), layout(m, n), &dot[0]);
    gemm<float>(Handle{}, Op::T, Op::N, m, n, k, 1.0f, A.data(), k, B.data(), k, 0.0f, G.data(), m);
    EXPECT_EQ(0, std::memcmp(D.data(), G.data(), D.size() * sizeof(float)));
    // A square product of the same depth is not for it.
    auto wide = heuristics(Handle{}, tn, layout(k, 64), layout(k, 64), layout(64, 64), layout(64, 64));
    for (const auto& algo : wide) EXPECT_NE(algo.id, AlgoId::dot_products);
  }
  MatrixLayout small = layout(32, 32);
  small.batch_count = 1000, small.batch_stride = 1024;
  Handle h;
  h.set_num_threads(2);
  auto batched = heuristics(h, desc, small, small, small, small);
  EXPECT_EQ(batched[0].id, AlgoId::batch_parallel);
  // Every candidate computes the same result (bitwise: same kernel arithmetic per element).
  std::mt19937 rng(3);
  std::vector<float> A(32 * 32 * 1000), B(A.size()), D1(A.size()), D2(A.size());
  for (auto& x : A) x = float(rng() % 7) - 3;
  for (auto& x : B) x = float(rng() % 5) - 2;
  const float one = 1, zero = 0;
  matmul(h, desc, &one, A.data(), small, B.data(), small, &zero, nullptr, small, D1.data(), small, &batched[0]);
  for (auto& algo : batched) {
    matmul(h, desc, &one, A.data(), small, B.data(), small, &zero, nullptr, small, D2.data(), small, &algo);
    EXPECT_EQ(0, std::memcmp(D1.data(), D2.data(), D1.size() * sizeof(float))) << algo.name;
  }
}

TEST(Lt, InvalidDescriptionsNameTheArgument) {
  MatmulDesc desc;
  MatrixLayout a{DType::f32, 4, 3, 4}, b{DType::f32, 3, 5, 3}, c{DType::f32, 4, 5, 4};
  auto expect_arg = [](const char* name, auto&& f) { test::expect_argument_error(name, f); };
  Handle h;
  expect_arg("b", [&] { MatrixLayout bb = b; bb.rows = 4; heuristics(h, desc, a, bb, c, c); });
  expect_arg("d", [&] { MatrixLayout dd = c; dd.cols = 6; heuristics(h, desc, a, b, c, dd); });
  expect_arg("a", [&] { MatrixLayout aa = a; aa.ld = 2; heuristics(h, desc, aa, b, c, c); });
  expect_arg("compute", [&] { MatmulDesc d2; d2.compute = DType::i32; heuristics(h, d2, a, b, c, c); });
  expect_arg("d", [&] { MatrixLayout dd = c; dd.type = DType::i32; heuristics(h, desc, a, b, c, dd); });
  expect_arg("bias", [&] { MatmulDesc d2; d2.epilogue.bias(nullptr); });
}

// A small bf16 matmul with an epilogue whose B pairs are read in place (NN, even depth) runs, on
// one thread, as one block of the mainloop's with the epilogue on each finished column panel
// (Mainloop::run_one_block); on two threads (0.5 MFLOP or more) through the mainloop's two
// parts: bitwise alike, and equal to gemm_ex followed by the epilogue's operations.
TEST(Lt, SmallBf16MatmulTakesItsEpilogueOnOneBlock) {
  if (!isa_supported(Isa::avx512)) GTEST_SKIP() << "no AVX-512 here";
  for (auto [m, n, k] : {std::tuple{64, 36, 128}, std::tuple{40, 20, 330}}) {
    std::mt19937 rng(uint32_t(m * n + k));
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<uint16_t> A(size_t(m * k)), B(size_t(k * n));
    for (auto& x : A) x = bf16(u(rng)).bits;
    for (auto& x : B) x = bf16(u(rng)).bits;
    std::vector<float> bias(static_cast<size_t>(m));
    for (auto& x : bias) x = u(rng);
    MatmulDesc desc;
    desc.epilogue.bias(bias.data()).activation(Activation::relu).scale(0.5);
    MatrixLayout la{DType::bf16, m, k, m}, lb{DType::bf16, k, n, k}, ld{DType::f32, m, n, m};
    std::vector<float> D[2] = {std::vector<float>(size_t(m * n), 9.0f), std::vector<float>(size_t(m * n), 9.0f)};
    std::vector<float> want(size_t(m * n));
    const float one = 1, zero = 0;
    for (int threads : {1, 2}) {
      Handle h;
      h.set_isa(Isa::avx512);
      h.set_num_threads(threads);
      matmul(h, desc, &one, A.data(), la, B.data(), lb, &zero, nullptr, ld, D[threads - 1].data(), ld);
      if (threads == 2) gemm_ex(h, Op::N, Op::N, m, n, k, 1.0f, A.data(), DType::bf16, m, B.data(), DType::bf16, k,
                                0.0f, want.data(), m);
    }
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) {
        float& x = want[size_t(i + j * m)];
        x = std::max(x + bias[size_t(i)], 0.0f) * 0.5f;
      }
    ASSERT_EQ(0, std::memcmp(D[0].data(), D[1].data(), sizeof(float) * D[0].size())) << m << "x" << n << "x" << k;
    ASSERT_EQ(0, std::memcmp(D[0].data(), want.data(), sizeof(float) * want.size())) << m << "x" << n << "x" << k;
  }
}

// bf16 and f16 inputs with f32 compute (the ML layer's matmul: bias, activation, scale) on
// every ISA path: each batch entry bitwise equals gemm_ex on it followed by the epilogue's
// operations in f32 (alpha 1, beta 0: the same kernel sums the same products; the bias add
// and the halving round once either way), column- and row-major D, every op pair; only the
// packing algorithms are offered for them; mixed input types are refused.
TEST(Lt, NarrowInputsEqualGemmExFollowedByTheEpilogue) {
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    for (DType t : {DType::bf16, DType::f16})
      for (int threads : {1, 2})
        for (Order od : {Order::col_major, Order::row_major})
          for (auto [m, n, k] : {std::tuple{37, 23, 51}, std::tuple{20, 70, 600}, std::tuple{130, 45, 90}}) {
            const Op ta = m == 20 ? Op::T : Op::N, tb = n == 45 ? Op::T : Op::N;
            const index_t batch = 2;
            std::mt19937 rng(uint32_t(m + n + k));
            std::uniform_real_distribution<float> u(-1, 1);
            // A and B (narrow) in D's storage order; leading dimensions past their extents.
            const bool col = od == Order::col_major;
            const index_t a_rows = ta == Op::N ? m : k, a_cols = ta == Op::N ? k : m;
            const index_t b_rows = tb == Op::N ? k : n, b_cols = tb == Op::N ? n : k;
            const index_t lda = (col ? a_rows : a_cols) + 1, ldb = (col ? b_rows : b_cols) + 3;
            const index_t ldd = (col ? m : n) + 2;
            const index_t sa = lda * (col ? a_cols : a_rows), sb = ldb * (col ? b_cols : b_rows);
            const index_t sd = ldd * (col ? n : m);
            std::vector<uint16_t> A(size_t(sa * batch)), B(size_t(sb * batch));
            for (auto& x : A) x = t == DType::bf16 ? bf16(u(rng)).bits : f16(u(rng)).bits;
            for (auto& x : B) x = t == DType::bf16 ? bf16(u(rng)).bits : f16(u(rng)).bits;
            std::vector<float> bias(static_cast<size_t>(m));
            for (auto& x : bias) x = u(rng);
            MatmulDesc desc;
            desc.transa = ta, desc.transb = tb;
            desc.epilogue.bias(bias.data()).activation(Activation::relu).scale(0.5);
            MatrixLayout la{t, a_rows, a_cols, lda, od, batch, sa}, lb{t, b_rows, b_cols, ldb, od, batch, sb};
            MatrixLayout ld{DType::f32, m, n, ldd, od, batch, sd};
            Handle h;
            h.set_isa(isa);
            h.set_num_threads(threads);
            for (const auto& algo : heuristics(h, desc, la, lb, ld, ld, Preference{}, 16))
              ASSERT_TRUE(algo.id == AlgoId::tiled_auto || algo.id == AlgoId::tiled_pack_both ||
                          algo.id == AlgoId::batch_parallel)
                  << algo.name;
            std::vector<float> D(size_t(sd * batch), 9.0f), want(D.size(), 9.0f);
            const float one = 1, zero = 0;
            matmul(h, desc, &one, A.data(), la, B.data(), lb, &zero, nullptr, ld, D.data(), ld);
            for (index_t e = 0; e < batch; ++e) {
              float* w = want.data() + e * sd;
              gemm_ex(h, od, ta, tb, m, n, k, 1.0f, A.data() + e * sa, t, lda, B.data() + e * sb, t, ldb, 0.0f, w, ldd);
              for (index_t i = 0; i < m; ++i)
                for (index_t j = 0; j < n; ++j) {
                  float& x = w[col ? i + j * ldd : i * ldd + j];
                  x = std::max(x + bias[size_t(i)], 0.0f) * 0.5f;
                }
            }
            ASSERT_EQ(0, std::memcmp(D.data(), want.data(), sizeof(float) * D.size()))
                << dtype_name(t) << " isa=" << isa_name(isa) << " threads=" << threads << " " << m << "x" << n << "x"
                << k << (col ? "" : " row-major");
          }
  }
  MatmulDesc desc;
  MatrixLayout a{DType::bf16, 4, 3, 4}, b{DType::f16, 3, 5, 3}, c{DType::f32, 4, 5, 4};
  try {
    heuristics(Handle{}, desc, a, b, c, c);
    ADD_FAILURE() << "mixed input types accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "b");
  }
}
