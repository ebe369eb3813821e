// Level 2 sweeps against the dense references: every op/uplo/diag, full/band/packed storage,
// sizes 0, 1, primes and above the kernels' chunking, increments +-1 and +-3, lda > m, every
// ISA path, 1 and 2 threads; beta == 0 must not read y (NaN there); bad arguments throw
// strata::Error naming the argument and leave the outputs untouched.
#include <cmath>
#include <cstring>
#include <limits>

#include "blas_test_util.hpp"
#include "support/expect_error.hpp"
#include "strata/blas/level1.hpp"
#include "strata/blas/level2.hpp"
#include "strata/core/status.hpp"

namespace strata::blastest {
namespace {

using namespace testref;
using blas::Diag;
using blas::Op;
using blas::Uplo;

template <class T>
class Level2 : public ::testing::Test {};
TYPED_TEST_SUITE(Level2, Types);

constexpr int64_t kSizes[] = {0, 1, 7, 37, 130};
constexpr int64_t kIncs[] = {1, -1, 3, -3};

template <class T>
std::vector<T> strided(const std::vector<T>& logical, int64_t inc) {
  const int64_t n = int64_t(logical.size());
  std::vector<T> s(size_t(std::max<int64_t>(1, 1 + (n - 1) * std::abs(inc))), T(-7));
  for (int64_t i = 0; i < n; ++i) s[size_t(vidx<T>(i, n, inc))] = logical[size_t(i)];
  return s;
}

TYPED_TEST(Level2, GemvGbmvAllOpsIncrementsIsasThreads) {
  using T = TypeParam;
  for (const Config& cfg : configs()) {
    IsaScope scope(cfg.isa);
    blas::Handle h;
    h.set_num_threads(cfg.threads);
    for (int64_t m : kSizes)
      for (int64_t n : {int64_t(0), int64_t(1), int64_t(11), int64_t(67)})
        for (char op : {'N', 'T', 'C'})
          for (int64_t inc : kIncs)
            for (bool band : {false, true}) {
              const int64_t kl = band ? 2 : m - 1, ku = band ? 3 : n - 1;
              const int64_t lda = band ? kl + ku + 2 : m + 3;
              auto A = random_values<T>(size_t(std::max<int64_t>(1, lda * n)), 11);
              const int64_t lx = op == 'N' ? n : m, ly = op == 'N' ? m : n;
              auto x = random_values<T>(size_t(lx), 12), y0 = random_values<T>(size_t(ly), 13);
              auto xs = strided(x, inc), ys = strided(y0, -inc);
              // beta == 0 must ignore y: put NaN there.
              for (T beta : {T(0), T(0.5)}) {
                auto yv = ys;
                if (beta == T(0)) for (auto& v : yv) v = T(std::numeric_limits<double>::quiet_NaN());
                const T alpha = T(1.25);
                const auto before = yv;
                if (band)
                  blas::gbmv<T>(h, Op(op), m, n, kl, ku, alpha, A.data(), lda, xs.data(), inc, beta, yv.data(), -inc);
                else
                  blas::gemv<T>(h, Op(op), m, n, alpha, A.data(), lda, xs.data(), inc, beta, yv.data(), -inc);
                // Reference: dense op(A) with the band zeroed.
                Dense<T> a(m, n);
                for (int64_t j = 0; j < n; ++j)
                  for (int64_t i = std::max<int64_t>(0, j - ku); i <= std::min(m - 1, j + kl); ++i)
                    a(i, j) = widen(band ? A[size_t(ku + i - j + j * lda)] : A[size_t(i + j * lda)]);
                const Dense<T> oa = apply_op(op, a);
                if (m == 0 || n == 0) {  // the reference's quick return: y is not touched at all
                  for (size_t i = 0; i < yv.size(); ++i)
                    ASSERT_EQ(0, std::memcmp(&yv[i], &before[i], sizeof(T)));
                  continue;
                }
                for (int64_t i = 0; i < ly; ++i) {
                  wide_t<T> want = beta == T(0) ? wide_t<T>(0) : widen(beta) * widen(y0[size_t(i)]);
                  for (int64_t p = 0; p < lx; ++p) want += widen(alpha) * oa(i, p) * widen(x[size_t(p)]);
                  expect_close(yv[size_t(vidx<T>(i, ly, -inc))], want, 4.0, tolerance<T>(lx),
                               "gemv op=" + std::string(1, op) + " m=" + std::to_string(m) + " n=" + std::to_string(n));
                }
              }
            }
  }
}

// trmv/tbmv/tpmv and the solves: x := op(A) x, then solving op(A) y = x must give back x.
TYPED_TEST(Level2, TriangularMultiplyAndSolveAllStorages) {
  using T = TypeParam;
  for (const Config& cfg : configs()) {
    IsaScope scope(cfg.isa);
    blas::Handle h;
    h.set_num_threads(cfg.threads);
    for (int64_t n : kSizes)
      for (Store s : {Store::full, Store::band, Store::packed})
        for (char ul : {'U', 'L'})
          for (char op : {'N', 'T', 'C'})
            for (char di : {'N', 'U'})
              for (int64_t inc : {int64_t(1), int64_t(-3)}) {
                // Band: narrow (column by column) and, at n = 130, wide enough for the four-column paths.
                const int64_t k = s == Store::band ? (n > 64 ? 40 : 4) : n - 1, lda = s == Store::full ? n + 2 : k + 2;
                auto A = random_values<T>(size_t(std::max<int64_t>(1, lda * n + n * n)), 21);
                // A well-conditioned triangle (unit diagonal included): small off-diagonal entries.
                for (auto& v : A) v *= T(1.0 / double(n + 1));
                for (int64_t j = 0; j < n; ++j)
                  if (T* d = const_cast<T*>(stored(s, A.data(), n, k, lda, ul == 'U', j, j))) *d = T(1) + *d;
                auto x = random_values<T>(size_t(n), 22);
                auto xs = strided(x, inc);
                const Uplo u = Uplo(ul);
                const Diag d = Diag(di);
                switch (s) {
                  case Store::full: blas::trmv<T>(h, u, Op(op), d, n, A.data(), lda, xs.data(), inc); break;
                  case Store::band: blas::tbmv<T>(h, u, Op(op), d, n, k, A.data(), lda, xs.data(), inc); break;
                  case Store::packed: blas::tpmv<T>(h, u, Op(op), d, n, A.data(), xs.data(), inc); break;
                }
                const Dense<T> oa = apply_op(op, expand(s, 't', A.data(), n, k, lda, ul == 'U', di == 'U'));
                for (int64_t i = 0; i < n; ++i) {
                  wide_t<T> want = 0;
                  for (int64_t p = 0; p < n; ++p) want += oa(i, p) * widen(x[size_t(p)]);
                  expect_close(xs[size_t(vidx<T>(i, n, inc))], want, 8.0, tolerance<T>(n), "trmv");
                }
                switch (s) {
                  case Store::full: blas::trsv<T>(h, u, Op(op), d, n, A.data(), lda, xs.data(), inc); break;
                  case Store::band: blas::tbsv<T>(h, u, Op(op), d, n, k, A.data(), lda, xs.data(), inc); break;
                  case Store::packed: blas::tpsv<T>(h, u, Op(op), d, n, A.data(), xs.data(), inc); break;
                }
                for (int64_t i = 0; i < n; ++i)
                  expect_close(xs[size_t(vidx<T>(i, n, inc))], widen(x[size_t(i)]), 1.0, 8 * tolerance<T>(n), "trsv");
              }
  }
}

// symv/sbmv/spmv (and hemv/hbmv/hpmv for complex) and the rank updates.
TYPED_TEST(Level2, SymmetricHermitianProductsAndUpdates) {
  using T = TypeParam;
  constexpr bool herm = is_cplx<T>;
  for (const Config& cfg : configs()) {
    IsaScope scope(cfg.isa);
    blas::Handle h;
    h.set_num_threads(cfg.threads);
    for (int64_t n : kSizes)
      for (Store s : {Store::full, Store::band, Store::packed})
        for (char ul : {'U', 'L'})
          for (int64_t inc : {int64_t(1), int64_t(-3)}) {
            const int64_t k = s == Store::band ? 3 : n - 1, lda = s == Store::full ? n + 1 : k + 2;
            auto A = random_values<T>(size_t(std::max<int64_t>(1, lda * n + n * n)), 31);
            auto x = random_values<T>(size_t(n), 32), y = random_values<T>(size_t(n), 33);
            auto xs = strided(x, inc), ys = strided(y, inc);
            const T alpha = T(0.75), beta = T(-1.5);
            const Uplo u = Uplo(ul);
            if constexpr (herm) {
              if (s == Store::full) blas::hemv<T>(h, u, n, alpha, A.data(), lda, xs.data(), inc, beta, ys.data(), inc);
              if (s == Store::band) blas::hbmv<T>(h, u, n, k, alpha, A.data(), lda, xs.data(), inc, beta, ys.data(), inc);
              if (s == Store::packed) blas::hpmv<T>(h, u, n, alpha, A.data(), xs.data(), inc, beta, ys.data(), inc);
            } else {
              if (s == Store::full) blas::symv<T>(h, u, n, alpha, A.data(), lda, xs.data(), inc, beta, ys.data(), inc);
              if (s == Store::band) blas::sbmv<T>(h, u, n, k, alpha, A.data(), lda, xs.data(), inc, beta, ys.data(), inc);
              if (s == Store::packed) blas::spmv<T>(h, u, n, alpha, A.data(), xs.data(), inc, beta, ys.data(), inc);
            }
            const Dense<T> a = expand(s, herm ? 'h' : 's', A.data(), n, k, lda, ul == 'U');
            for (int64_t i = 0; i < n; ++i) {
              wide_t<T> want = widen(beta) * widen(y[size_t(i)]);
              for (int64_t p = 0; p < n; ++p) want += widen(alpha) * a(i, p) * widen(x[size_t(p)]);
              expect_close(ys[size_t(vidx<T>(i, n, inc))], want, 4.0, tolerance<T>(n), "symv/hemv");
            }
            if (s == Store::band) continue;
            // Rank-2 update on the stored triangle: A + alpha x y^H + conj(alpha) y x^H (herm).
            auto before = A;
            if constexpr (herm) {
              if (s == Store::full) blas::her2<T>(h, u, n, alpha, xs.data(), inc, ys.data(), inc, A.data(), lda);
              else blas::hpr2<T>(h, u, n, alpha, xs.data(), inc, ys.data(), inc, A.data());
            } else {
              if (s == Store::full) blas::syr2<T>(h, u, n, alpha, xs.data(), inc, ys.data(), inc, A.data(), lda);
              else blas::spr2<T>(h, u, n, alpha, xs.data(), inc, ys.data(), inc, A.data());
            }
            const Dense<T> a0 = expand(s, herm ? 'h' : 's', before.data(), n, k, lda, ul == 'U');
            const Dense<T> a1 = expand(s, herm ? 'h' : 's', A.data(), n, k, lda, ul == 'U');
            for (int64_t j = 0; j < n; ++j)
              for (int64_t i = 0; i < n; ++i) {
                const wide_t<T> xi = widen(xs[size_t(vidx<T>(i, n, inc))]), xj = widen(xs[size_t(vidx<T>(j, n, inc))]);
                const wide_t<T> yi = widen(ys[size_t(vidx<T>(i, n, inc))]), yj = widen(ys[size_t(vidx<T>(j, n, inc))]);
                const wide_t<T> al = widen(alpha);
                // herm: A + alpha x y^H + conj(alpha) y x^H (real diagonal); else A + alpha (x y^T + y x^T).
                wide_t<T> want = herm ? a0(i, j) + al * xi * cj(yj) + cj(al) * yi * cj(xj) : a0(i, j) + al * (xi * yj + yi * xj);
                if (herm && i == j) want = wide_t<T>(std::real(want));
                expect_close(T(a1(i, j)), want, 4.0,
                             tolerance<T>(2), "syr2/her2");
              }
          }
  }
}

// Long symmetric/triangular sweeps are cut into column chunks run on several threads
// (common/parallel.hpp): above the chunk size the results must still be right and bitwise
// the same for 1 and 2 threads.
// gemv T/C takes four columns per pass over x and the threads split whole groups of four:
// every output must be the same bits at 1, 2 and 3 threads (a column must not change kernel
// with the split), and agree with its column's dot product.
TYPED_TEST(Level2, GemvTransposedIsTheSameForAnyThreadCount) {
  using T = TypeParam;
  // 131 rows: lanes plus a tail; 523 columns: enough work for threads, 130 groups of four and 3.
  const int64_t m = 131, n = 523, lda = m + 2;
  auto A = random_values<T>(size_t(lda * n), 51);
  auto x = random_values<T>(size_t(m), 52);
  for (char op : {'T', 'C'}) {
    std::vector<T> first;
    for (int threads : {1, 2, 3}) {
      blas::Handle h;
      h.set_num_threads(threads);
      std::vector<T> y(size_t(n), T(7));
      blas::gemv<T>(h, Op(op), m, n, T(1), A.data(), lda, x.data(), 1, T(0), y.data(), 1);
      if (first.empty()) first = y;
      EXPECT_EQ(0, std::memcmp(first.data(), y.data(), y.size() * sizeof(T))) << op << " threads " << threads;
      for (int64_t j = 0; j < n; ++j) {
        const T* col = A.data() + j * lda;
        const T want = op == 'C' ? blas::dotc<T>(h, m, col, 1, x.data(), 1) : blas::dot<T>(h, m, col, 1, x.data(), 1);
        expect_close(y[size_t(j)], widen(want), 1.0, tolerance<T>(m), "gemv T column");
      }
    }
  }
}

// ger/geru/gerc against the wide reference on every ISA: column counts around the kernel's
// groups of four, increments +-1 and 3, lda > m; a zero y_j leaves column j as it was even
// where x holds an Inf (no 0 * Inf); the bits are the same on 1, 2 and 3 threads.
TYPED_TEST(Level2, RankOneUpdatesMatchTheReferenceOnAnyThreadCount) {
  using T = TypeParam;
  const T alpha = T(0.75);
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    IsaScope scope(isa);
    for (int64_t m : {1, 7, 37, 130})
      for (int64_t n : {1, 3, 4, 5, 9, 131})
        for (int64_t inc : {1, -1, 3})
          for (bool conj : {false, true}) {
            const int64_t lda = m + 3;
            auto x = random_values<T>(size_t(m), 61);
            auto y = random_values<T>(size_t(n), 62);
            for (int64_t j = 2; j < n; j += 5) y[size_t(j)] = T(0);  // columns that must stay untouched
            if (n > 2) x[size_t(m / 2)] = T(std::numeric_limits<double>::infinity());
            const auto A0 = random_values<T>(size_t(lda * n), 63);
            const auto xs = strided(x, inc), ys = strided(y, inc);
            std::vector<T> first;
            for (int threads : {1, 2, 3}) {
              blas::Handle h;
              h.set_num_threads(threads);
              auto A = A0;
              if (conj) blas::gerc<T>(h, m, n, alpha, xs.data(), inc, ys.data(), inc, A.data(), lda);
              else if constexpr (!std::is_floating_point_v<T>) blas::geru<T>(h, m, n, alpha, xs.data(), inc, ys.data(), inc, A.data(), lda);
              else blas::ger<T>(h, m, n, alpha, xs.data(), inc, ys.data(), inc, A.data(), lda);
              if (first.empty()) first = A;
              ASSERT_EQ(0, std::memcmp(first.data(), A.data(), A.size() * sizeof(T)))
                  << "m " << m << " n " << n << " threads " << threads;
            }
            for (int64_t j = 0; j < n; ++j)
              for (int64_t i = 0; i < lda; ++i) {
                const T before = A0[size_t(i + j * lda)], got = first[size_t(i + j * lda)];
                if (i >= m || y[size_t(j)] == T(0)) {  // padding rows and skipped columns: untouched
                  ASSERT_EQ(0, std::memcmp(&before, &got, sizeof(T))) << "i " << i << " j " << j;
                  continue;
                }
                if (!std::isfinite(std::abs(x[size_t(i)]))) continue;
                T yj = y[size_t(j)];
                if constexpr (!std::is_floating_point_v<T>)
                  if (conj) yj = std::conj(yj);
                const auto want = widen(before) + widen(alpha) * widen(x[size_t(i)]) * widen(yj);
                expect_close(got, want, 1.0, tolerance<T>(2), "ger entry");
              }
          }
  }
}

// Strided vectors are gathered into unit-stride copies (kept inside the call up to 2 KiB, on
// the heap beyond): the results equal the unit-stride call's bit for bit, both sizes.
TYPED_TEST(Level2, StridedVectorsGiveTheUnitStrideBits) {
  using T = TypeParam;
  blas::Handle h;
  for (int64_t n : {5, 130, 600})
    for (int64_t inc : {3, -2}) {
      auto A = random_values<T>(size_t(n * n), 71);
      auto x = random_values<T>(size_t(n), 72), y = random_values<T>(size_t(n), 73);
      const auto xs = strided(x, inc);
      for (char op : {'N', 'T'}) {
        auto y1 = y;
        auto ys = strided(y, inc);
        blas::gemv<T>(h, Op(op), n, n, T(0.5), A.data(), n, x.data(), 1, T(-2), y1.data(), 1);
        blas::gemv<T>(h, Op(op), n, n, T(0.5), A.data(), n, xs.data(), inc, T(-2), ys.data(), inc);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(0, std::memcmp(&y1[size_t(i)], &ys[size_t(vidx<T>(i, n, inc))], sizeof(T)))
              << op << " n " << n << " inc " << inc << " i " << i;
      }
      auto y1 = y;
      auto ys = strided(y, inc);
      blas::symv<T>(h, Uplo::lower, n, T(0.5), A.data(), n, x.data(), 1, T(-2), y1.data(), 1);
      blas::symv<T>(h, Uplo::lower, n, T(0.5), A.data(), n, xs.data(), inc, T(-2), ys.data(), inc);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(0, std::memcmp(&y1[size_t(i)], &ys[size_t(vidx<T>(i, n, inc))], sizeof(T))) << "symv n " << n;
    }
}

TYPED_TEST(Level2, ChunkedSweepsAreCorrectAndIndependentOfThreads) {
  using T = TypeParam;
  constexpr bool herm = is_cplx<T>;
  const int64_t n = 600;  // three chunks of 256 columns
  for (Store s : {Store::full, Store::band, Store::packed})
    for (char ul : {'U', 'L'}) {
      const int64_t k = s == Store::band ? 300 : n - 1, lda = s == Store::full ? n + 1 : k + 2;
      auto A = random_values<T>(size_t(lda * n + n * n), 41);
      for (auto& v : A) v *= T(1.0 / double(n));
      auto x = random_values<T>(size_t(n), 42), y = random_values<T>(size_t(n), 43);
      const Uplo u = Uplo(ul);
      auto run = [&](int threads, auto&& call) {
        blas::Handle h;
        h.set_num_threads(threads);
        return call(h);
      };
      // symv / hemv family.
      auto product = [&](blas::Handle& h) {
        auto ys = y;
        const T alpha = T(0.75), beta = T(-1.5);
        if constexpr (herm) {
          if (s == Store::full) blas::hemv<T>(h, u, n, alpha, A.data(), lda, x.data(), 1, beta, ys.data(), 1);
          if (s == Store::band) blas::hbmv<T>(h, u, n, k, alpha, A.data(), lda, x.data(), 1, beta, ys.data(), 1);
          if (s == Store::packed) blas::hpmv<T>(h, u, n, alpha, A.data(), x.data(), 1, beta, ys.data(), 1);
        } else {
          if (s == Store::full) blas::symv<T>(h, u, n, alpha, A.data(), lda, x.data(), 1, beta, ys.data(), 1);
          if (s == Store::band) blas::sbmv<T>(h, u, n, k, alpha, A.data(), lda, x.data(), 1, beta, ys.data(), 1);
          if (s == Store::packed) blas::spmv<T>(h, u, n, alpha, A.data(), x.data(), 1, beta, ys.data(), 1);
        }
        return ys;
      };
      const auto y1 = run(1, product), y2 = run(2, product);
      EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(T))) << "symv/hemv threads";
      const Dense<T> a = expand(s, herm ? 'h' : 's', A.data(), n, k, lda, ul == 'U');
      for (int64_t i = 0; i < n; ++i) {
        wide_t<T> want = widen(T(-1.5)) * widen(y[size_t(i)]);
        for (int64_t p = 0; p < n; ++p) want += widen(T(0.75)) * a(i, p) * widen(x[size_t(p)]);
        expect_close(y1[size_t(i)], want, 4.0, tolerance<T>(n), "chunked symv/hemv");
      }
      // trmv family, every op.
      for (char op : {'N', 'T', 'C'}) {
        auto tri = [&](blas::Handle& h) {
          auto xs = x;
          if (s == Store::full) blas::trmv<T>(h, u, Op(op), Diag::non_unit, n, A.data(), lda, xs.data(), 1);
          if (s == Store::band) blas::tbmv<T>(h, u, Op(op), Diag::non_unit, n, k, A.data(), lda, xs.data(), 1);
          if (s == Store::packed) blas::tpmv<T>(h, u, Op(op), Diag::non_unit, n, A.data(), xs.data(), 1);
          return xs;
        };
        const auto x1 = run(1, tri), x2 = run(2, tri);
        EXPECT_EQ(0, std::memcmp(x1.data(), x2.data(), x1.size() * sizeof(T))) << "trmv threads op " << op;
        const Dense<T> oa = apply_op(op, expand(s, 't', A.data(), n, k, lda, ul == 'U', false));
        for (int64_t i = 0; i < n; i += 7) {
          wide_t<T> want = 0;
          for (int64_t p = 0; p < n; ++p) want += oa(i, p) * widen(x[size_t(p)]);
          expect_close(x1[size_t(i)], want, 8.0, tolerance<T>(n), "chunked trmv");
        }
      }
      // Rank-2 updates (columns are independent; chunks only change who computes them).
      if (s == Store::band) continue;
      auto update = [&](blas::Handle& h) {
        auto a2 = A;
        if constexpr (herm) {
          if (s == Store::full) blas::her2<T>(h, u, n, T(0.5), x.data(), 1, y.data(), 1, a2.data(), lda);
          else blas::hpr2<T>(h, u, n, T(0.5), x.data(), 1, y.data(), 1, a2.data());
        } else {
          if (s == Store::full) blas::syr2<T>(h, u, n, T(0.5), x.data(), 1, y.data(), 1, a2.data(), lda);
          else blas::spr2<T>(h, u, n, T(0.5), x.data(), 1, y.data(), 1, a2.data());
        }
        return a2;
      };
      const auto a1 = run(1, update), a2 = run(2, update);
      EXPECT_EQ(0, std::memcmp(a1.data(), a2.data(), a1.size() * sizeof(T))) << "syr2/her2 threads";
      const Dense<T> d0 = expand(s, herm ? 'h' : 's', A.data(), n, k, lda, ul == 'U');
      const Dense<T> d1 = expand(s, herm ? 'h' : 's', a1.data(), n, k, lda, ul == 'U');
      for (int64_t j = 0; j < n; j += 5)
        for (int64_t i = 0; i < n; i += 3) {
          const wide_t<T> al = widen(T(0.5)), xi = widen(x[size_t(i)]), xj = widen(x[size_t(j)]);
          const wide_t<T> yi = widen(y[size_t(i)]), yj = widen(y[size_t(j)]);
          wide_t<T> want = herm ? d0(i, j) + al * xi * cj(yj) + cj(al) * yi * cj(xj) : d0(i, j) + al * (xi * yj + yi * xj);
          if (herm && i == j) want = wide_t<T>(std::real(want));
          expect_close(T(d1(i, j)), want, 4.0, tolerance<T>(2), "chunked syr2/her2");
        }
    }
}

TYPED_TEST(Level2, InvalidArgumentsThrowNamingTheArgumentAndWriteNothing) {
  using T = TypeParam;
  blas::Handle h;
  std::vector<T> A(16, T(1)), x(4, T(1)), y(4, T(9));
  auto expect_arg = [&](const char* name, auto&& call) {
    test::expect_argument_error(name, call, Status::invalid_argument);
    for (const T& v : y) EXPECT_EQ(v, T(9));
  };
  expect_arg("trans", [&] { blas::gemv<T>(h, Op('X'), 2, 2, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("m", [&] { blas::gemv<T>(h, Op::N, -1, 2, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("n", [&] { blas::gemv<T>(h, Op::N, 2, -1, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("lda", [&] { blas::gemv<T>(h, Op::N, 3, 2, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("incx", [&] { blas::gemv<T>(h, Op::N, 2, 2, T(1), A.data(), 2, x.data(), 0, T(0), y.data(), 1); });
  expect_arg("incy", [&] { blas::gemv<T>(h, Op::N, 2, 2, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 0); });
  expect_arg("kl", [&] { blas::gbmv<T>(h, Op::N, 2, 2, -1, 0, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("lda", [&] { blas::gbmv<T>(h, Op::N, 2, 2, 1, 1, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("uplo", [&] { blas::symv<T>(h, Uplo('X'), 2, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("k", [&] { blas::sbmv<T>(h, Uplo::upper, 2, -1, T(1), A.data(), 2, x.data(), 1, T(0), y.data(), 1); });
  expect_arg("diag", [&] { blas::trsv<T>(h, Uplo::upper, Op::N, Diag('X'), 2, A.data(), 2, y.data(), 1); });
  expect_arg("incx", [&] { blas::tpsv<T>(h, Uplo::upper, Op::N, Diag::unit, 2, A.data(), y.data(), 0); });
  expect_arg("lda", [&] { blas::syr2<T>(h, Uplo::lower, 3, T(1), x.data(), 1, x.data(), 1, y.data(), 2); });
  expect_arg("incy", [&] { blas::gerc<T>(h, 2, 2, T(1), x.data(), 1, x.data(), 0, y.data(), 2); });
}

}  // namespace
}  // namespace strata::blastest
