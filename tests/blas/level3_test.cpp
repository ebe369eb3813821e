// Level 3 (beyond gemm) against the dense references, at sizes below and above the
// diagonal block (64) so both the gemm panels and the diagonal kernels are exercised: every
// side/uplo/op/diag, lda > m, beta == 0 with NaN in C, 1 and 2 threads (results must be
// bitwise identical), and argument errors.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "blas_test_util.hpp"
#include "support/expect_error.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/isa.hpp"
#include "strata/core/status.hpp"

namespace strata::blastest {
namespace {

using namespace testref;
using blas::Diag;
using blas::Op;
using blas::Side;
using blas::Uplo;

template <class T>
class Level3 : public ::testing::Test {};
TYPED_TEST_SUITE(Level3, Types);

constexpr int64_t kSizes[] = {0, 1, 13, 67, 131, 200};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Runs `call(handle, out)` with 1 and 2 threads and checks both give the same bits.
template <class T, class Call>
std::vector<T> run_threads(const std::vector<T>& init, Call&& call) {
  std::vector<T> one = init, two = init;
  blas::Handle h1, h2;
  h1.set_num_threads(1);
  h2.set_num_threads(2);
  call(h1, one);
  call(h2, two);
  EXPECT_TRUE(same_bits(one, two)) << "results differ between 1 and 2 threads";
  return one;
}

TYPED_TEST(Level3, TrmmTrsmAllSidesUplosOpsDiags) {
  using T = TypeParam;
  for (int64_t m : kSizes)
    for (int64_t n : {int64_t(1), int64_t(70)})
      for (char sd : {'L', 'R'})
        for (char ul : {'U', 'L'})
          for (char op : {'N', 'T', 'C'})
            for (char di : {'N', 'U'}) {
              const int64_t na = sd == 'L' ? m : n, lda = na + 3, ldb = m + 2;
              auto A = random_values<T>(size_t(lda * std::max<int64_t>(1, na)), 41);
              // Small off-diagonal entries keep op(A) well conditioned, unit diagonal included.
              for (auto& v : A) v *= T(1.0 / double(na + 1));
              for (int64_t j = 0; j < na; ++j) A[size_t(j + j * lda)] += T(1);
              auto B = random_values<T>(size_t(ldb * n), 42);
              const T alpha = T(0.5);
              auto out = run_threads<T>(B, [&](blas::Handle& h, std::vector<T>& b) {
                blas::trmm<T>(h, Side(sd), Uplo(ul), Op(op), Diag(di), m, n, alpha, A.data(), lda, b.data(), ldb);
              });
              const Dense<T> oa = apply_op(op, expand(Store::full, 't', A.data(), na, na - 1, lda, ul == 'U', di == 'U'));
              const Dense<T> b0 = from_general(B.data(), m, n, ldb);
              const Dense<T> want = sd == 'L' ? multiply(oa, b0) : multiply(b0, oa);
              for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < m; ++i)
                  expect_close(out[size_t(i + j * ldb)], widen(alpha) * want(i, j), 8.0, tolerance<T>(na), "trmm");
              // Solving with the same op(A) and 1/alpha restores B.
              auto back = run_threads<T>(out, [&](blas::Handle& h, std::vector<T>& b) {
                blas::trsm<T>(h, Side(sd), Uplo(ul), Op(op), Diag(di), m, n, T(1) / alpha, A.data(), lda, b.data(), ldb);
              });
              for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < m; ++i)
                  expect_close(back[size_t(i + j * ldb)], widen(B[size_t(i + j * ldb)]), 1.0, 16 * tolerance<T>(na), "trsm");
            }
}

// The diagonal blocks' products (trmm's leaves, trsm's inverse times the right-hand sides) run
// as one product whose micro-tiles stop where the triangle's zeros begin, in every ISA's
// mainloop: each ISA against the reference, both sides, both triangles, every op, with the
// triangle crossing several diagonal blocks (131 = 64 + 64 + 3) and 1 and 3 threads giving the
// same bits. A depth cut one micro-panel short (or long, into garbage) fails it.
TYPED_TEST(Level3, TriangularProductsOnEveryIsa) {
  using T = TypeParam;
  const int64_t m = 131, n = 45;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    for (char sd : {'L', 'R'})
      for (char ul : {'U', 'L'})
        for (char op : {'N', 'T', 'C'}) {
          const int64_t na = sd == 'L' ? m : n, lda = na + 1, ldb = m + 5;
          auto A = random_values<T>(size_t(lda * na), 61);
          for (auto& v : A) v *= T(1.0 / double(na + 1));
          for (int64_t j = 0; j < na; ++j) A[size_t(j + j * lda)] += T(1);
          const auto B = random_values<T>(size_t(ldb * n), 62);
          const T alpha = T(-1.25);
          std::vector<T> out[2], solved[2];
          for (int t = 0; t < 2; ++t) {
            blas::Handle h;
            h.set_isa(isa);
            h.set_num_threads(t == 0 ? 1 : 3);
            out[t] = B;
            blas::trmm<T>(h, Side(sd), Uplo(ul), Op(op), Diag::non_unit, m, n, alpha, A.data(), lda, out[t].data(), ldb);
            solved[t] = out[t];
            blas::trsm<T>(h, Side(sd), Uplo(ul), Op(op), Diag::non_unit, m, n, T(1) / alpha, A.data(), lda,
                          solved[t].data(), ldb);
          }
          const std::string where = std::string(isa_name(isa)) + " " + sd + ul + op;
          EXPECT_TRUE(same_bits(out[0], out[1])) << "trmm, 1 and 3 threads differ: " << where;
          EXPECT_TRUE(same_bits(solved[0], solved[1])) << "trsm, 1 and 3 threads differ: " << where;
          const Dense<T> oa = apply_op(op, expand(Store::full, 't', A.data(), na, na - 1, lda, ul == 'U', false));
          const Dense<T> b0 = from_general(B.data(), m, n, ldb);
          const Dense<T> want = sd == 'L' ? multiply(oa, b0) : multiply(b0, oa);
          for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
              expect_close(out[0][size_t(i + j * ldb)], widen(alpha) * want(i, j), 8.0, tolerance<T>(na),
                           "trmm " + where);
              expect_close(solved[0][size_t(i + j * ldb)], widen(B[size_t(i + j * ldb)]), 1.0, 16 * tolerance<T>(na),
                           "trsm " + where);
            }
        }
  }
}

TYPED_TEST(Level3, SymmHemmBothSides) {
  using T = TypeParam;
  for (int64_t m : kSizes)
    for (int64_t n : {int64_t(3), int64_t(66)})
      for (char sd : {'L', 'R'})
        for (char ul : {'U', 'L'})
          for (bool herm : {false, true}) {
            if (herm && !is_cplx<T>) continue;
            const int64_t na = sd == 'L' ? m : n, lda = na + 1, ldc = m + 2;
            auto A = random_values<T>(size_t(lda * std::max<int64_t>(1, na)), 51);
            auto B = random_values<T>(size_t(ldc * n), 52);
            std::vector<T> C(size_t(ldc * n), T(std::numeric_limits<double>::quiet_NaN()));  // beta = 0: not read
            const T alpha = T(1.5);
            auto out = run_threads<T>(C, [&](blas::Handle& h, std::vector<T>& c) {
              // hemm exists for complex types only: the branch must not even be instantiated for
              // real ones (unoptimised builds keep the reference and fail to link).
              if constexpr (is_cplx<T>) {
                if (herm) {
                  blas::hemm<T>(h, Side(sd), Uplo(ul), m, n, alpha, A.data(), lda, B.data(), ldc, T(0), c.data(), ldc);
                  return;
                }
              }
              blas::symm<T>(h, Side(sd), Uplo(ul), m, n, alpha, A.data(), lda, B.data(), ldc, T(0), c.data(), ldc);
            });
            const Dense<T> a = expand(Store::full, herm ? 'h' : 's', A.data(), na, na - 1, lda, ul == 'U');
            const Dense<T> b = from_general(B.data(), m, n, ldc);
            const Dense<T> want = sd == 'L' ? multiply(a, b) : multiply(b, a);
            for (int64_t j = 0; j < n; ++j)
              for (int64_t i = 0; i < m; ++i)
                expect_close(out[size_t(i + j * ldc)], widen(alpha) * want(i, j), 4.0, tolerance<T>(na), "symm/hemm");
          }
}

// syrk/herk/syr2k/her2k/gemmt: only the uplo triangle changes; the other is left as it was.
TYPED_TEST(Level3, RankKUpdatesTouchOnlyTheirTriangle) {
  using T = TypeParam;
  for (int64_t n : kSizes)
    for (int64_t k : {int64_t(0), int64_t(5), int64_t(70)})
      for (char ul : {'U', 'L'})
        for (char tr : {'N', 'T', 'C'})
          for (int routine = 0; routine < 5; ++routine) {  // syrk, herk, syr2k, her2k, gemmt
            const bool herm = routine == 1 || routine == 3, rank2 = routine == 2 || routine == 3;
            if (herm && (!is_cplx<T> || tr == 'T')) continue;
            if (!herm && routine != 4 && is_cplx<T> && tr == 'C') continue;
            const int64_t ar = tr == 'N' ? n : k, ac = tr == 'N' ? k : n, lda = ar + 2, ldc = n + 1;
            auto A = random_values<T>(size_t(lda * std::max<int64_t>(1, ac)), 61);
            auto B = random_values<T>(size_t(lda * std::max<int64_t>(1, ac)), 62);
            auto C = random_values<T>(size_t(ldc * std::max<int64_t>(1, n)), 63);
            const T alpha = T(0.5), beta = T(-2);
            const Op o = Op(tr), oo = tr == 'N' ? (herm || (is_cplx<T> && routine == 4) ? Op::C : Op::T) : Op::N;
            auto out = run_threads<T>(C, [&](blas::Handle& h, std::vector<T>& c) {
              const Uplo u = Uplo(ul);
              switch (routine) {
                case 0: blas::syrk<T>(h, u, o, n, k, alpha, A.data(), lda, beta, c.data(), ldc); break;
                case 1:
                  if constexpr (is_cplx<T>) blas::herk<T>(h, u, o, n, k, 0.5, A.data(), lda, -2.0, c.data(), ldc);
                  break;
                case 2: blas::syr2k<T>(h, u, o, n, k, alpha, A.data(), lda, B.data(), lda, beta, c.data(), ldc); break;
                case 3:
                  if constexpr (is_cplx<T>) blas::her2k<T>(h, u, o, n, k, alpha, A.data(), lda, B.data(), lda, -2.0, c.data(), ldc);
                  break;
                case 4: blas::gemmt<T>(h, u, o, oo, n, k, alpha, A.data(), lda, B.data(), lda, beta, c.data(), ldc); break;
              }
            });
            const Dense<T> a = from_general(A.data(), ar, ac, lda), b = from_general(B.data(), ar, ac, lda);
            const char t2 = herm ? 'C' : (routine == 4 ? char(oo) : 'T');
            // op(A) * op2(A or B), op2 the "other" transpose.
            auto prod = [&](const Dense<T>& x, const Dense<T>& y) {
              return tr == 'N' ? multiply(x, apply_op(t2, y)) : multiply(apply_op(tr, x), y);
            };
            const Dense<T> p1 = routine == 4 || rank2 ? prod(a, b) : prod(a, a);
            const Dense<T> p2 = rank2 ? prod(b, a) : Dense<T>(n, n);
            for (int64_t j = 0; j < n; ++j)
              for (int64_t i = 0; i < n; ++i) {
                const T got = out[size_t(i + j * ldc)];
                if (ul == 'U' ? i > j : i < j) {
                  ASSERT_EQ(got, C[size_t(i + j * ldc)]) << "routine " << routine << " wrote outside its triangle";
                  continue;
                }
                wide_t<T> c0 = widen(C[size_t(i + j * ldc)]);
                if (herm && i == j) c0 = wide_t<T>(std::real(c0));
                wide_t<T> want = widen(beta) * c0 + widen(alpha) * p1(i, j);
                if (rank2) want += (herm ? cj(widen(alpha)) : widen(alpha)) * p2(i, j);
                if (herm && i == j) want = wide_t<T>(std::real(want));
                expect_close(got, want, 8.0, tolerance<T>(k), "rank-k routine " + std::to_string(routine));
              }
          }
}

TYPED_TEST(Level3, BatchedGemmMatchesSingleCalls) {
  using T = TypeParam;
  const int64_t m = 9, n = 7, k = 5, batch = 6;
  auto A = random_values<T>(size_t(m * k * batch), 71), B = random_values<T>(size_t(k * n * batch), 72);
  std::vector<T> C(size_t(m * n * batch), T(1)), D = C;
  blas::Handle h;
  blas::gemm_strided_batched<T>(h, Op::N, Op::N, m, n, k, T(2), A.data(), m, m * k, B.data(), k, k * n, T(1), C.data(),
                                m, m * n, batch);
  std::vector<const T*> pa, pb;
  std::vector<T*> pc;
  for (int64_t i = 0; i < batch; ++i) {
    pa.push_back(A.data() + i * m * k);
    pb.push_back(B.data() + i * k * n);
    pc.push_back(D.data() + i * m * n);
  }
  blas::gemm_batched<T>(h, Op::N, Op::N, m, n, k, T(2), pa.data(), m, pb.data(), k, T(1), pc.data(), m, batch);
  EXPECT_TRUE(same_bits(C, D));
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<T> single(size_t(m * n), T(1));
    blas::gemm<T>(h, Op::N, Op::N, m, n, k, T(2), pa[size_t(i)], m, pb[size_t(i)], k, T(1), single.data(), m);
    EXPECT_EQ(0, std::memcmp(single.data(), C.data() + i * m * n, single.size() * sizeof(T)));
  }
}

// The batch as one engine call (real types) or one gemm per entry (complex): every entry's
// bits equal a single gemm's, for each op and storage order, small products split among two
// threads a whole entry each or larger ones run in turn with both threads, strided entries
// (some overlapping A and B: stride 0) and pointer arrays alike.
TYPED_TEST(Level3, BatchedGemmEveryPathMatchesSingleCalls) {
  using T = TypeParam;
  struct Shape { int64_t m, n, k, batch; };
  for (Shape s : {Shape{32, 32, 32, 40}, Shape{5, 3, 7, 9}, Shape{70, 40, 90, 3}, Shape{1, 1, 1, 1}})
    for (Op ta : {Op::N, Op::T})
      for (Op tb : {Op::N, Op::T})
        for (blas::Order order : {blas::Order::col_major, blas::Order::row_major})
          for (int threads : {1, 2}) {
            const bool col = order == blas::Order::col_major;
            const int64_t a_rows = (ta == Op::N) == col ? s.m : s.k, a_cols = s.m * s.k / a_rows;
            const int64_t b_rows = (tb == Op::N) == col ? s.k : s.n, b_cols = s.k * s.n / b_rows;
            const int64_t c_rows = col ? s.m : s.n, c_cols = s.m * s.n / c_rows;
            const int64_t lda = a_rows + 1, ldb = b_rows + 2, ldc = c_rows + 1;
            const int64_t sa = lda * a_cols, sb = s.batch > 3 ? 0 : ldb * b_cols, sc = ldc * c_cols;
            auto A = random_values<T>(size_t(sa * s.batch), 91), B = random_values<T>(size_t(ldb * b_cols * s.batch), 92);
            const auto C0 = random_values<T>(size_t(sc * s.batch), 93);
            std::vector<T> strided = C0, arrays = C0;
            blas::Handle h;
            h.set_num_threads(threads);
            blas::gemm_strided_batched<T>(h, order, ta, tb, s.m, s.n, s.k, T(1.5), A.data(), lda, sa, B.data(), ldb, sb,
                                          T(-0.5), strided.data(), ldc, sc, s.batch);
            std::vector<const T*> pa, pb;
            std::vector<T*> pc;
            for (int64_t i = 0; i < s.batch; ++i) {
              pa.push_back(A.data() + i * sa), pb.push_back(B.data() + i * sb), pc.push_back(arrays.data() + i * sc);
            }
            blas::gemm_batched<T>(h, order, ta, tb, s.m, s.n, s.k, T(1.5), pa.data(), lda, pb.data(), ldb, T(-0.5),
                                  pc.data(), ldc, s.batch);
            std::vector<T> single = C0;
            for (int64_t i = 0; i < s.batch; ++i)
              blas::gemm<T>(h, order, ta, tb, s.m, s.n, s.k, T(1.5), pa[size_t(i)], lda, pb[size_t(i)], ldb, T(-0.5),
                            single.data() + i * sc, ldc);
            ASSERT_TRUE(same_bits(strided, single)) << s.m << "x" << s.n << "x" << s.k << " batch " << s.batch
                                                    << " ops " << char(ta) << char(tb) << " threads " << threads;
            ASSERT_TRUE(same_bits(arrays, single));
          }
}

// A batch larger than half the L3, of entries of at least 8 KB: each entry fetches the next
// one's operands while it computes (tile/fetch_ahead.hpp), through its own kernel variants.
// Every entry's bits equal a single gemm's, with padded leading dimensions (operands fetched
// column by column or row by row) and the entries split among two threads.
TYPED_TEST(Level3, BatchedGemmBeyondL3MatchesSingleCalls) {
  using T = TypeParam;
  const int64_t m = 40, n = 36, k = 32;
  const int64_t entry_bytes = (m * k + k * n + m * n) * int64_t(sizeof(T));
  const int64_t batch = int64_t(strata::cpu_features().l3_bytes / 2) / entry_bytes + 20;
  for (Op ta : {Op::N, Op::T})
    for (int threads : {1, 2}) {
      const Op tb = ta;
      const int64_t lda = (ta == Op::N ? m : k) + 3, ldb = (tb == Op::N ? k : n) + 1, ldc = m + 2;
      const int64_t sa = lda * (ta == Op::N ? k : m), sb = ldb * (tb == Op::N ? n : k), sc = ldc * n;
      const auto A = random_values<T>(size_t(sa * batch), 94), B = random_values<T>(size_t(sb * batch), 95);
      std::vector<T> batched(size_t(sc * batch), T(0)), single = batched;
      blas::Handle h;
      h.set_num_threads(threads);
      blas::gemm_strided_batched<T>(h, ta, tb, m, n, k, T(1), A.data(), lda, sa, B.data(), ldb, sb, T(0),
                                    batched.data(), ldc, sc, batch);
      for (int64_t i = 0; i < batch; ++i)
        blas::gemm<T>(h, ta, tb, m, n, k, T(1), A.data() + i * sa, lda, B.data() + i * sb, ldb, T(0),
                      single.data() + i * sc, ldc);
      ASSERT_TRUE(same_bits(batched, single)) << "ops " << char(ta) << char(tb) << " threads " << threads
                                              << " batch " << batch;
    }
}

// A null entry anywhere in the pointer arrays is reported before any entry is written.
TYPED_TEST(Level3, BatchedGemmNullEntryWritesNothing) {
  using T = TypeParam;
  const int64_t m = 4, n = 4, k = 4, batch = 5;
  auto A = random_values<T>(size_t(m * k), 94);
  std::vector<T> C(size_t(m * n * batch), T(7));
  std::vector<const T*> pa(batch, A.data()), pb(batch, A.data());
  std::vector<T*> pc;
  for (int64_t i = 0; i < batch; ++i) pc.push_back(C.data() + i * m * n);
  for (const char* which : {"A", "B", "C"}) {
    auto qa = pa, qb = pb;
    auto qc = pc;
    if (which[0] == 'A') qa[3] = nullptr;
    if (which[0] == 'B') qb[3] = nullptr;
    if (which[0] == 'C') qc[3] = nullptr;
    blas::Handle h;
    try {
      blas::gemm_batched<T>(h, Op::N, Op::N, m, n, k, T(1), qa.data(), m, qb.data(), k, T(0), qc.data(), m, batch);
      ADD_FAILURE() << "no error for a null " << which;
    } catch (const Error& e) {
      EXPECT_EQ(e.argument(), which);
    }
    for (const T& v : C) ASSERT_EQ(v, T(7)) << "an entry was written before the null " << which << " was found";
  }
}

TYPED_TEST(Level3, MatcopyTransposesAndScales) {
  using T = TypeParam;
  blas::Handle h;
  const int64_t r = 5, c = 3;
  auto A = random_values<T>(size_t(r * c), 81);
  std::vector<T> B(size_t(r * c));
  blas::omatcopy<T>(h, blas::Order::col_major, Op::C, r, c, T(2), A.data(), r, B.data(), c);
  for (int64_t j = 0; j < c; ++j)
    for (int64_t i = 0; i < r; ++i) EXPECT_EQ(B[size_t(j + i * c)], T(2) * cj(A[size_t(i + j * r)]));
  auto AB = A;
  blas::imatcopy<T>(h, blas::Order::col_major, Op::C, r, c, T(2), AB.data(), r, c);
  EXPECT_TRUE(same_bits(AB, B));
}

TYPED_TEST(Level3, InvalidArgumentsThrowNamingTheArgument) {
  using T = TypeParam;
  blas::Handle h;
  std::vector<T> A(16, T(1)), C(16, T(9));
  auto expect_arg = [&](const char* name, auto&& call) {
    test::expect_argument_error(name, call);
    for (const T& v : C) EXPECT_EQ(v, T(9));
  };
  expect_arg("side", [&] { blas::symm<T>(h, Side('X'), Uplo::upper, 2, 2, T(1), A.data(), 2, A.data(), 2, T(0), C.data(), 2); });
  expect_arg("ldb", [&] { blas::symm<T>(h, Side::left, Uplo::upper, 2, 2, T(1), A.data(), 2, A.data(), 1, T(0), C.data(), 2); });
  expect_arg("trans", [&] { blas::syrk<T>(h, Uplo::upper, Op('X'), 2, 2, T(1), A.data(), 2, T(0), C.data(), 2); });
  expect_arg("k", [&] { blas::syr2k<T>(h, Uplo::upper, Op::N, 2, -1, T(1), A.data(), 2, A.data(), 2, T(0), C.data(), 2); });
  expect_arg("ldc", [&] { blas::gemmt<T>(h, Uplo::lower, Op::N, Op::N, 3, 1, T(1), A.data(), 3, A.data(), 1, T(0), C.data(), 2); });
  expect_arg("diag", [&] { blas::trsm<T>(h, Side::left, Uplo::upper, Op::N, Diag('X'), 2, 2, T(1), A.data(), 2, C.data(), 2); });
  expect_arg("lda", [&] { blas::trmm<T>(h, Side::right, Uplo::upper, Op::N, Diag::unit, 2, 3, T(1), A.data(), 2, C.data(), 2); });
  expect_arg("batch_count", [&] {
    blas::gemm_strided_batched<T>(h, Op::N, Op::N, 2, 2, 2, T(1), A.data(), 2, 4, A.data(), 2, 4, T(0), C.data(), 2, 4, -1);
  });
}

// Many right-hand sides solve each diagonal block through its inverse, few by substitution.
// On an ill-conditioned triangle the first must stay as accurate as the second: every column
// of X solved both ways against the true X, for both sides and both triangles. The triangle
// is (I + N) D with N strictly triangular and small (|N| <= 1/2 in norm: random O(1) entries
// would make it exponentially ill-conditioned) and D graded from 1 to 1e-6 down the diagonal:
// cond ~1e6.
template <class T>
void check_trsm_inverse_accuracy() {
  const int64_t na = 150, nrhs = 40;  // nrhs >= 16: the inverse path; one column: substitution
  for (char sd : {'L', 'R'})
    for (char ul : {'U', 'L'}) {
      std::mt19937 rng(7);
      std::uniform_real_distribution<double> d(-1, 1);
      std::vector<T> A(size_t(na * na), T(0));
      for (int64_t j = 0; j < na; ++j)
        for (int64_t i = 0; i < na; ++i)
          if (const double dj = std::pow(10.0, -6.0 * double(j) / double(na - 1)); i == j)
            A[size_t(i + j * na)] = T(dj);
          else if ((ul == 'U') == (i < j))
            A[size_t(i + j * na)] = T(0.5 * d(rng) / double(na) * dj);
      const int64_t m = sd == 'L' ? na : nrhs, n = sd == 'L' ? nrhs : na;
      std::vector<long double> X(size_t(m * n));
      for (auto& v : X) v = d(rng);
      // B = op(A) X (left) or X op(A) (right), in extended precision, then rounded.
      std::vector<T> B(size_t(m * n));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          long double s = 0;
          for (int64_t p = 0; p < na; ++p)
            s += sd == 'L' ? (long double)A[size_t(i + p * na)] * X[size_t(p + j * m)]
                           : X[size_t(i + p * m)] * (long double)A[size_t(p + j * na)];
          B[size_t(i + j * m)] = T(s);
        }
      blas::Handle h;
      std::vector<T> all = B;
      blas::trsm<T>(h, Side(sd), Uplo(ul), Op::N, Diag::non_unit, m, n, T(1), A.data(), na, all.data(), m);
      double worst_all = 0, worst_one = 0;
      for (int64_t r = 0; r < nrhs; ++r) {
        // The same right-hand side alone: a column (left) or a row (right, stride m).
        std::vector<T> one(static_cast<size_t>(na));
        for (int64_t t = 0; t < na; ++t) one[size_t(t)] = sd == 'L' ? B[size_t(t + r * m)] : B[size_t(r + t * m)];
        if (sd == 'L')
          blas::trsm<T>(h, Side::left, Uplo(ul), Op::N, Diag::non_unit, na, 1, T(1), A.data(), na, one.data(), na);
        else
          blas::trsm<T>(h, Side::right, Uplo(ul), Op::N, Diag::non_unit, 1, na, T(1), A.data(), na, one.data(), 1);
        for (int64_t t = 0; t < na; ++t) {
          const size_t at = sd == 'L' ? size_t(t + r * m) : size_t(r + t * m);
          worst_all = std::max(worst_all, double(std::fabs((long double)all[at] - X[at])));
          worst_one = std::max(worst_one, double(std::fabs((long double)one[size_t(t)] - X[at])));
        }
      }
      // The inverse path within a small factor of substitution's forward error, and for
      // double far below 1 (cond ~1e6 times 1e-16).
      EXPECT_LE(worst_all, 4 * worst_one + 64 * std::numeric_limits<T>::epsilon()) << sd << ul;
      if (std::is_same_v<T, double>) {
        EXPECT_LT(worst_all, 1e-8) << sd << ul;
      }
    }
}

// A NaN in one right-hand side reaches exactly the entries substitution makes NaN (those
// solved after it), whether the column is solved with many others (the inverse path, which
// falls back to substitution for a block holding a NaN) or alone; the other columns stay
// finite.
// herk/her2k read only the real part of C's diagonal (C_jj := beta*Re(C_jj) + ...) and leave
// it real: a NaN in an imaginary part there must not reach the result, for either triangle,
// on the path through the engine's triangular complex product.
TEST(Level3Accuracy, HerkIgnoresTheDiagonalsImaginaryParts) {
  using T = std::complex<float>;
  const int64_t n = 37, k = 11;
  auto A = random_values<T>(size_t(n * k), 71);
  for (char ul : {'U', 'L'})
    for (bool rank2 : {false, true}) {
      auto C = random_values<T>(size_t(n * n), 72);
      const auto C0 = C;
      for (int64_t j = 0; j < n; ++j) C[size_t(j + j * n)].imag(std::numeric_limits<float>::quiet_NaN());
      blas::Handle h;
      if (rank2) blas::her2k<T>(h, Uplo(ul), Op::N, n, k, T(0.5f, 0.25f), A.data(), n, A.data(), n, 2.f, C.data(), n);
      else blas::herk<T>(h, Uplo(ul), Op::N, n, k, 0.5f, A.data(), n, 2.f, C.data(), n);
      for (int64_t j = 0; j < n; ++j) {
        double norm = 0;
        for (int64_t p = 0; p < k; ++p) norm += std::norm(std::complex<double>(A[size_t(j + p * n)]));
        // herk: 0.5 |a_j|^2; her2k: 2 Re(alpha) |a_j|^2 with A = B.
        const double want = 2.0 * C0[size_t(j + j * n)].real() + (rank2 ? 1.0 : 0.5) * norm;
        const T got = C[size_t(j + j * n)];
        ASSERT_EQ(got.imag(), 0.f) << "diagonal " << j;
        ASSERT_NEAR(got.real(), want, 1e-4 * (1 + std::abs(want))) << "diagonal " << j;
      }
    }
}

TEST(Level3Accuracy, TrsmNanReachesWhatSubstitutionReaches) {
  const int64_t na = 150, nrhs = 20;
  std::vector<double> A(size_t(na * na), 0.0);
  for (int64_t j = 0; j < na; ++j)
    for (int64_t i = j; i < na; ++i) A[size_t(i + j * na)] = i == j ? 2.0 : 0.01;
  std::vector<double> B(size_t(na * nrhs), 1.0);
  B[size_t(100 + 5 * na)] = std::numeric_limits<double>::quiet_NaN();
  blas::Handle h;
  std::vector<double> all = B, one(B.begin() + 5 * na, B.begin() + 6 * na);
  blas::trsm<double>(h, Side::left, Uplo::lower, Op::N, Diag::non_unit, na, nrhs, 1.0, A.data(), na, all.data(), na);
  blas::trsm<double>(h, Side::left, Uplo::lower, Op::N, Diag::non_unit, na, 1, 1.0, A.data(), na, one.data(), na);
  for (int64_t j = 0; j < nrhs; ++j)
    for (int64_t i = 0; i < na; ++i) {
      const double v = all[size_t(i + j * na)];
      if (j == 5) EXPECT_EQ(std::isnan(v), std::isnan(one[size_t(i)])) << "row " << i;
      else EXPECT_TRUE(std::isfinite(v)) << "row " << i << " column " << j;
    }
  EXPECT_FALSE(std::isnan(all[size_t(99 + 5 * na)]));  // solved before the NaN
  EXPECT_TRUE(std::isnan(all[size_t(100 + 5 * na)]));
}

// trmm as the reference computes it: an Inf in B reaches only the entries whose sums hold it
// (for a lower op(A) on the left, the rows from its own down; upper, from its own up; on the
// right, the columns after or before it), never through the zeros of the triangle, both sides,
// both triangles, every op; the other entries match the reference. (The diagonal blocks' products
// multiply the zeros in the micro-tiles the diagonal crosses: the two rows above a 100 x 100 Inf
// came out NaN, as OpenBLAS's do.)
TEST(Level3Accuracy, TrmmInfReachesOnlyTheSumsHoldingIt) {
  const int64_t m = 100, n = 90;
  for (char sd : {'L', 'R'})
    for (char ul : {'U', 'L'})
      for (char op : {'N', 'T'}) {
        const int64_t na = sd == 'L' ? m : n;
        std::vector<float> A(size_t(na * na));
        for (int64_t j = 0; j < na; ++j)
          for (int64_t i = 0; i < na; ++i) A[size_t(i + j * na)] = i == j ? 1.5f : 0.01f * float(1 + (i + 2 * j) % 7);
        std::vector<float> B(size_t(m * n), 1.0f);
        const int64_t bi = 50, bj = 45;  // the Inf, inside a diagonal block and its micro-tiles
        B[size_t(bi + bj * m)] = std::numeric_limits<float>::infinity();
        std::vector<float> out = B;
        blas::Handle h;
        blas::trmm<float>(h, Side(sd), Uplo(ul), Op(op), Diag::non_unit, m, n, 1.0f, A.data(), na, out.data(), m);
        // op(A)(r, c) nonzero where the triangle of op(A) holds it.
        const bool eu = (ul == 'U') == (op == 'N');
        auto nonzero = [&](int64_t r, int64_t c) { return eu ? r <= c : r >= c; };
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < m; ++i) {
            const bool reached = sd == 'L' ? j == bj && nonzero(i, bi) : i == bi && nonzero(bj, j);
            const float got = out[size_t(i + j * m)];
            if (reached) {
              EXPECT_TRUE(std::isinf(got)) << sd << ul << op << " at " << i << "," << j;
              continue;
            }
            double want = 0;
            for (int64_t p = 0; p < na; ++p) {
              const int64_t r = sd == 'L' ? i : p, c = sd == 'L' ? p : j;  // op(A)(r, c)
              if (!nonzero(r, c)) continue;
              const double a = op == 'N' ? A[size_t(r + c * na)] : A[size_t(c + r * na)];
              want += a * (sd == 'L' ? double(B[size_t(p + j * m)]) : double(B[size_t(i + p * m)]));
            }
            ASSERT_NEAR(got, want, 1e-4 * (1 + std::abs(want))) << sd << ul << op << " at " << i << "," << j;
          }
      }
}

TEST(Level3Accuracy, TrsmThroughInversesIsAsAccurateAsSubstitution) {
  check_trsm_inverse_accuracy<float>();
  check_trsm_inverse_accuracy<double>();
}

}  // namespace
}  // namespace strata::blastest
