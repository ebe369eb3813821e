// The GEMM engine through blas::gemm: every ISA path this CPU has, 1 and 2 threads, all op
// combinations, shapes around the register/cache block sizes, against a double-precision
// naive reference with a k-scaled tolerance; plus the BLAS special cases and determinism.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/expect_error.hpp"
#include "support/gemm_trace.hpp"
#include "support/isas.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <complex>
#include <limits>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "strata/blas/level3.hpp"
#include "strata/blas/lt.hpp"
#include "strata/tile/blocking.hpp"
#include "strata/tile/gemm.hpp"
#include "strata/tile/scheduler.hpp"
#include "strata/core/load_balance.hpp"
#include "strata/core/log.hpp"
#include "strata/core/status.hpp"

using namespace strata;
using namespace strata::blas;

namespace {

template <class T> struct Real { using type = T; };
template <class R> struct Real<std::complex<R>> { using type = R; };
template <class T> using real_t = typename Real<T>::type;
template <class T> constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;

template <class T>
T random_value(std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  if constexpr (is_complex_v<T>) return T(real_t<T>(d(rng)), real_t<T>(d(rng)));
  else return T(d(rng));
}

template <class T>
std::complex<double> widen(T v) {
  if constexpr (is_complex_v<T>) return {double(v.real()), double(v.imag())};
  else return {double(v), 0.0};
}

template <class T>
std::complex<double> op_elem(Op op, const std::vector<T>& x, index_t ld, index_t i, index_t j) {
  std::complex<double> v = op == Op::N ? widen(x[size_t(i + j * ld)]) : widen(x[size_t(j + i * ld)]);
  return op == Op::C ? std::conj(v) : v;
}

template <class T>
void check_gemm(Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, T beta, int threads, Isa isa,
                index_t pad = 3) {
  std::mt19937 rng(unsigned(m * 131 + n * 17 + k));
  const index_t lda = (ta == Op::N ? m : k) + pad, ldb = (tb == Op::N ? k : n) + pad, ldc = m + pad;
  std::vector<T> A(size_t(lda * (ta == Op::N ? k : m) + 1)), B(size_t(ldb * (tb == Op::N ? n : k) + 1)),
      C(size_t(ldc * n + 1));
  for (auto& v : A) v = random_value<T>(rng);
  for (auto& v : B) v = random_value<T>(rng);
  for (auto& v : C) v = random_value<T>(rng);
  std::vector<T> C0 = C;
  Handle h;
  h.set_num_threads(threads);
  h.set_isa(isa);
  gemm<T>(h, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  const double eps = double(std::numeric_limits<real_t<T>>::epsilon());
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < m; ++i) {
      std::complex<double> acc = 0, mag = 0;
      for (index_t p = 0; p < k; ++p) {
        auto prod = op_elem(ta, A, lda, i, p) * op_elem(tb, B, ldb, p, j);
        acc += prod;
        mag += std::abs(prod);
      }
      std::complex<double> want = widen(alpha) * acc + widen(beta) * widen(C0[size_t(i + j * ldc)]);
      double bound = 4.0 * double(k + 2) * eps * (std::abs(widen(alpha)) * std::abs(mag) +
                                                   std::abs(widen(beta) * widen(C0[size_t(i + j * ldc)]))) + 1e-30;
      ASSERT_LE(std::abs(widen(C[size_t(i + j * ldc)]) - want), bound)
          << "m=" << m << " n=" << n << " k=" << k << " i=" << i << " j=" << j << " ops=" << char(ta) << char(tb)
          << " threads=" << threads << " isa=" << isa_name(isa);
    }
    for (index_t i = m; i < ldc; ++i) ASSERT_EQ(C[size_t(i + j * ldc)], C0[size_t(i + j * ldc)]) << "padding written";
  }
}

// A (m x k) and B (k x n), column-major without padding, from one seeded stream (A first).
std::pair<std::vector<float>, std::vector<float>> random_operands(index_t m, index_t n, index_t k, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> A(size_t(m * k)), B(size_t(k * n));
  for (auto& v : A) v = random_value<float>(rng);
  for (auto& v : B) v = random_value<float>(rng);
  return {std::move(A), std::move(B)};
}

// sgemm NN of A (m x k) and op_b (k x n, unpadded) with B's columns stored ldb apart.
std::vector<float> nn_product_at_ldb(const Handle& h, const std::vector<float>& A, const std::vector<float>& op_b,
                                     index_t m, index_t n, index_t k, index_t ldb) {
  std::vector<float> B(size_t(ldb * n), 0.0f), C(size_t(m * n), 0.0f);
  for (index_t j = 0; j < n; ++j) std::copy_n(&op_b[size_t(j * k)], k, &B[size_t(j * ldb)]);
  gemm<float>(h, Op::N, Op::N, m, n, k, 1.0f, A.data(), m, B.data(), ldb, 0.0f, C.data(), m);
  return C;
}

// `samples` entries of C = A B (all column-major, unpadded; C from an f32 product) against a
// double-precision sum, within f32 accumulation error over k terms: for products too large for
// check_gemm's full reference.
void expect_sampled_entries(const std::vector<float>& C, const std::vector<float>& A, const std::vector<float>& B,
                            index_t m, index_t n, index_t k, int samples) {
  std::mt19937 rng(unsigned(m + n + k));
  for (int s = 0; s < samples; ++s) {
    const index_t i = index_t(rng() % uint32_t(m)), j = index_t(rng() % uint32_t(n));
    double want = 0, mag = 0;
    for (index_t p = 0; p < k; ++p) {
      const double prod = double(A[size_t(i + p * m)]) * double(B[size_t(p + j * k)]);
      want += prod;
      mag += std::abs(prod);
    }
    ASSERT_NEAR(C[size_t(i + j * m)], want, 4.0 * double(k) * 6e-8 * mag) << "m=" << m << " i=" << i << " j=" << j;
  }
}

std::vector<Isa> isas() { return strata::test::usable_isas(); }

template <class T>
void sweep(std::initializer_list<index_t> sizes, std::initializer_list<Op> ops) {
  for (Isa isa : isas())
    for (int threads : {1, 2})
      for (Op ta : ops)
        for (Op tb : ops)
          for (index_t m : sizes)
            for (index_t n : sizes)
              for (index_t k : {index_t(1), index_t(7), index_t(33)}) {
                check_gemm<T>(ta, tb, m, n, k, T(1.5), T(-0.5), threads, isa);
                if (::testing::Test::HasFatalFailure()) return;
              }
}

}  // namespace

TEST(GemmEngine, F32SmallShapesAllOps) { sweep<float>({1, 2, 5, 17, 33}, {Op::N, Op::T}); }
TEST(GemmEngine, F64SmallShapesAllOps) { sweep<double>({1, 3, 9, 19}, {Op::N, Op::T}); }
TEST(GemmEngine, C64SmallShapesAllOps) { sweep<c64>({1, 4, 11}, {Op::N, Op::T, Op::C}); }
TEST(GemmEngine, C128SmallShapesAllOps) { sweep<c128>({2, 7}, {Op::N, Op::T, Op::C}); }

// Edge tiles of every width and height run the narrow kernels (tile::cover_narrowest), which
// from a depth of 48 rotate their k steps through 2-4 accumulator sets: depths around that
// threshold and each remainder of the rotation, packed and in-place B, every ISA.
TEST(GemmEngine, EdgeTilesOfEveryWidthAcrossTheChainedDepths) {
  for (Isa isa : isas())
    for (index_t k : {index_t(47), index_t(48), index_t(49), index_t(50), index_t(51), index_t(130), index_t(401)})
      for (index_t n = 1; n <= 17; ++n) {
        check_gemm<float>(Op::N, Op::N, 37, n, k, 1.5f, -0.5f, 1, isa);   // 16 + 16 + 5 rows; B in place
        check_gemm<float>(Op::T, Op::T, 200, n, k, 1.0f, 0.0f, 1, isa);   // B packed
        check_gemm<double>(Op::N, Op::N, 13, n, k, 1.0, 1.0, 1, isa);     // f64: 8 + 5 rows
        if (::testing::Test::HasFatalFailure()) return;
      }
}

// Few rows and columns over a long depth take the dot-product path on AVX-512
// (tile/dot_gemm.hpp; the other ISAs their microkernel paths, checked here too): every block
// size it instantiates (1..4 x 1..4 entries, the last block of each row and column narrower),
// depths with and without a tail of less than a vector, op(A) and op(B) read in place or
// copied into rows (every op pair), beta 0 / 1 / other, 1 and 2 threads (one thread runs it
// either way: the bits must match).
TEST(GemmEngine, FewRowsAndColumnsOverALongDepthAsDotProducts) {
  for (Isa isa : isas())
    for (Op ta : {Op::N, Op::T})
      for (Op tb : {Op::N, Op::T})
        for (index_t m : {index_t(1), index_t(3), index_t(5), index_t(13), index_t(16)})
          for (index_t n : {index_t(1), index_t(2), index_t(3), index_t(7), index_t(16)})
            for (index_t k : {index_t(512), index_t(519), index_t(1031)}) {
              check_gemm<float>(ta, tb, m, n, k, 1.5f, -0.5f, 1, isa);
              check_gemm<double>(ta, tb, m, n, k, 1.0, 0.0, 2, isa);
              if (::testing::Test::HasFatalFailure()) return;
            }
  for (Op ta : {Op::N, Op::T}) {
    const index_t m = 12, n = 12, k = 1030;
    const auto [A, B] = random_operands(m, n, k, 11);
    std::vector<float> C[2];
    for (int threads : {1, 2}) {
      C[threads - 1].assign(size_t(m * n), 1.0f);
      Handle h;
      h.set_num_threads(threads);
      gemm<float>(h, ta, Op::N, m, n, k, 1.0f, A.data(), ta == Op::N ? m : k, B.data(), k, 1.0f,
                  C[threads - 1].data(), m);
    }
    EXPECT_EQ(0, std::memcmp(C[0].data(), C[1].data(), C[0].size() * sizeof(float))) << char(ta);
  }
}

// Beyond a depth of 65536 only C of at most four 4 x 4 blocks with at most four rows copied
// stays on the dot path (1 x 1 on the tiled path ran at 1/384 of a 32x12 tile's rate): those
// against the reference on every ISA, 1 and 2 threads, and the route on AVX-512.
TEST(GemmEngine, FewEntriesOverAVeryLongDepthAsDotProducts) {
  for (Isa isa : isas())
    for (auto [ta, tb, m, n] : {std::tuple{Op::N, Op::N, 1, 1}, {Op::N, Op::N, 4, 4}, {Op::N, Op::N, 2, 16},
                                {Op::T, Op::N, 8, 8}, {Op::T, Op::T, 3, 1}, {Op::N, Op::N, 8, 8}}) {
      check_gemm<float>(ta, tb, m, n, 70001, 1.5f, -0.5f, 1, isa);
      check_gemm<double>(ta, tb, m, n, 66000, 1.0, 0.0, 2, isa);
      if (::testing::Test::HasFatalFailure()) return;
    }
  auto route = [](Op ta, index_t m, index_t n, index_t k) { return test::sgemm_trace(Handle{}, ta, m, n, k); };
  const bool avx512 = Handle{}.isa() == Isa::avx512;
  EXPECT_EQ(route(Op::N, 1, 1, 100000).find("path=dot") != std::string::npos, avx512);
  EXPECT_EQ(route(Op::T, 8, 8, 100000).find("path=dot") != std::string::npos, avx512);
  EXPECT_EQ(route(Op::N, 8, 8, 100000).find("path=dot"), std::string::npos);   // eight rows copied
  EXPECT_EQ(route(Op::T, 12, 12, 100000).find("path=dot"), std::string::npos);  // nine blocks
}

// A small A read in place (columns close together) whose last row panel is short: exactly as
// tall as the half-height kernel it is read in place, otherwise packed once per block (and a
// transposed A's short panel packed by register transposes with zero rows). Whatever the path,
// the bits equal those of the same product with A packed (a leading dimension far from m
// makes the engine pack it), and both match the reference. Heights around every ISA's half
// tile (4, 8, 16), depths across KC.
TEST(GemmEngine, ShortRowPanelsInPlaceOrPackedGiveTheSameBits) {
  for (Isa isa : isas())
    for (Op ta : {Op::N, Op::T})
      for (index_t m : {4, 8, 12, 20, 24, 40, 48})
        for (index_t n : {3, 8, 13})
          for (index_t k : {9, 300, 1000}) {
            check_gemm<float>(ta, Op::N, m, n, k, 1.0f, 0.5f, 1, isa, 0);
            std::mt19937 rng(unsigned(m * 7 + n * 3 + k));
            std::vector<float> op_a(size_t(m * k)), B(size_t(k * n));
            for (auto& v : op_a) v = random_value<float>(rng);
            for (auto& v : B) v = random_value<float>(rng);
            std::vector<float> out[2];
            for (int packed = 0; packed < 2; ++packed) {
              const index_t rows = ta == Op::N ? m : k, cols = ta == Op::N ? k : m;
              const index_t lda = rows + (packed ? 100 : 0);
              std::vector<float> A(size_t(lda * cols), 0.0f);
              for (index_t i = 0; i < m; ++i)
                for (index_t p = 0; p < k; ++p)
                  A[size_t(ta == Op::N ? i + p * lda : p + i * lda)] = op_a[size_t(i + p * m)];
              out[packed].assign(size_t(m * n), 0.0f);
              Handle h;
              h.set_isa(isa);
              h.set_num_threads(1);
              gemm<float>(h, ta, Op::N, m, n, k, 1.0f, A.data(), lda, B.data(), k, 0.0f, out[packed].data(), m);
            }
            ASSERT_EQ(0, std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)))
                << isa_name(isa) << " " << char(ta) << " m=" << m << " n=" << n << " k=" << k;
          }
}

// A row panel shorter than the half-height kernel is read in place outside the last k blocks,
// the kernel's rows past it coming from the next columns (tile/mainloop.hpp): never past the
// matrix. Each A here ends where an inaccessible page begins, so one value read beyond it
// faults; tight leading dimensions (the fewest values after each column), several k blocks,
// every ISA, 1 and 2 threads, against the reference.
TEST(GemmEngine, ShortRowPanelsReadInPlaceStayWithinTheMatrix) {
  const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  for (Isa isa : isas())
    for (int threads : {1, 2})
      for (index_t m : {1, 2, 4, 8, 12, 44})
        for (index_t n : {5, 16}) {
          const index_t k = 3000, lda = m;
          const std::size_t bytes = std::size_t(lda * k) * sizeof(float);
          const std::size_t span = (bytes + page - 1) / page * page;
          void* base = mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          ASSERT_NE(base, MAP_FAILED);
          ASSERT_EQ(mprotect(static_cast<char*>(base) + span, page, PROT_NONE), 0);
          float* A = reinterpret_cast<float*>(static_cast<char*>(base) + span - bytes);
          std::mt19937 rng(unsigned(m + 100 * n));
          for (index_t e = 0; e < lda * k; ++e) A[e] = random_value<float>(rng);
          std::vector<float> B(size_t(k * n)), C(size_t(m * n), 0.0f);
          for (auto& v : B) v = random_value<float>(rng);
          Handle h;
          h.set_isa(isa);
          h.set_num_threads(threads);
          gemm<float>(h, Op::N, Op::N, m, n, k, 1.0f, A, lda, B.data(), k, 0.0f, C.data(), m);
          for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) {
              double want = 0, mag = 0;
              for (index_t p = 0; p < k; ++p) {
                const double term = double(A[i + p * lda]) * B[size_t(p + j * k)];
                want += term, mag += std::fabs(term);
              }
              ASSERT_NEAR(C[size_t(i + j * m)], want, 1e-5 * mag + 1e-6)
                  << isa_name(isa) << " m=" << m << " n=" << n << " threads=" << threads;
            }
          munmap(base, span + page);
        }
}

// Shapes that cross the MC/KC/NC cache blocks and thread borders.
TEST(GemmEngine, LargerThanCacheBlocks) {
  for (Isa isa : isas())
    for (int threads : {1, 2}) {
      check_gemm<float>(Op::N, Op::N, 301, 97, 613, 1.0f, 0.0f, threads, isa);
      check_gemm<float>(Op::T, Op::N, 1031, 29, 701, -1.0f, 1.0f, threads, isa);
      check_gemm<double>(Op::N, Op::T, 263, 149, 529, 0.5, 2.0, threads, isa);
      check_gemm<float>(Op::N, Op::N, 16, 1301, 300, 1.0f, 0.0f, threads, isa);   // skinny M: B in place
      check_gemm<float>(Op::N, Op::N, 700, 5, 300, 1.0f, 1.0f, threads, isa);     // skinny N: A in place
      check_gemm<double>(Op::N, Op::N, 77, 203, 611, 1.0, -1.0, threads, isa);    // one A block: B in place, 2+ k blocks
      check_gemm<float>(Op::T, Op::N, 150, 97, 1000, 2.0f, 0.5f, threads, isa);   // the same with A transposed
      check_gemm<float>(Op::N, Op::N, 450, 40, 900, 1.0f, 0.5f, threads, isa);   // B in place, 3 A blocks
      check_gemm<float>(Op::N, Op::N, 1100, 41, 45, 1.0f, 0.5f, threads, isa);   // short k: one A block of all rows
      check_gemm<float>(Op::N, Op::T, 70, 4100, 24, 1.0f, 0.5f, threads, isa);   // N beyond NC: two equal column blocks
    }
}

// A block of at most 16 rows (the half-height kernel's) is packed at that height; with B read
// in place from memory (here 34 MB, beyond this machine's L3) each column panel runs as one
// column walk that fetches the next panel. Every entry against a double reference, every ISA,
// 1 and 2 threads.
TEST(GemmEngine, SixteenRowBlocksAgainstBFromMemory) {
  const index_t m = 16, n = 4100, k = 2100;
  const auto [A, B] = random_operands(m, n, k, 7);
  std::vector<double> want(size_t(m * n), 0.0), mag(size_t(m * n), 0.0);
  for (index_t j = 0; j < n; ++j)
    for (index_t p = 0; p < k; ++p) {
      const double b = B[size_t(p + j * k)];
      for (index_t i = 0; i < m; ++i) {
        want[size_t(i + j * m)] += double(A[size_t(i + p * m)]) * b;
        mag[size_t(i + j * m)] += std::abs(double(A[size_t(i + p * m)]) * b);
      }
    }
  const double eps = double(std::numeric_limits<float>::epsilon());
  for (Isa isa : isas())
    for (int threads : {1, 2}) {
      std::vector<float> C(size_t(m * n), 0.0f);
      Handle h;
      h.set_isa(isa);
      h.set_num_threads(threads);
      gemm<float>(h, Op::N, Op::N, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f, C.data(), m);
      for (index_t e = 0; e < m * n; ++e)
        ASSERT_LE(std::abs(double(C[size_t(e)]) - want[size_t(e)]), 4.0 * double(k + 2) * eps * mag[size_t(e)])
            << isa_name(isa) << " t" << threads << " row " << e % m << " column " << e / m;
    }
}

// Cache blocks cut an extent into equal steps of whole micro-tiles, never beyond the cap
// (the pack buffers' size).
TEST(GemmEngine, CacheBlocksAreEqualSteps) {
  EXPECT_EQ(tile::balanced_step(4096, 4092, 12), 2052);  // not 4092 + 4
  EXPECT_EQ(tile::balanced_step(4096, 544, 32), 512);    // not 7 x 544 + 288
  EXPECT_EQ(tile::balanced_step(2048, 4092, 12), 2052);  // one block
  EXPECT_EQ(tile::balanced_step(100, 30, 7), 28);
  EXPECT_EQ(tile::balanced_step(100, 30, 8), 30);        // 32 would pass the cap
}

// The depth is cut into as few k blocks as blocks up to an eighth over KC allow, of equal
// depth in multiples of 64 (AMX pads only a last block); one block keeps the whole depth.
TEST(GemmEngine, DepthIsCutIntoEqualBlocks) {
  EXPECT_EQ(tile::balanced_depth(256, 240), 256);    // not 240 + 16
  EXPECT_EQ(tile::balanced_depth(270, 240), 270);    // an eighth over: still one block
  EXPECT_EQ(tile::balanced_depth(4096, 240), 256);   // not 17 x 240 + 16
  EXPECT_EQ(tile::balanced_depth(1000, 240), 256);   // 3 x 256 + 232
  EXPECT_EQ(tile::balanced_depth(600, 512), 320);    // AMX's 512: 320 + 280, whole 64-deep tiles first
  EXPECT_EQ(tile::balanced_depth(64, 240), 64);
  EXPECT_EQ(tile::balanced_depth(1, 240), 1);
  for (int64_t k : {300, 513, 777, 2049, 5000})
    for (int64_t kc : {128, 240, 512}) {
      const int64_t step = tile::balanced_depth(k, kc);
      ASSERT_TRUE(step == k || step % 64 == 0) << k << " " << kc;
      ASSERT_LE(step, kc + kc / 8 + 63) << k << " " << kc;
      ASSERT_GT(k - (k + step - 1) / step * step + step, 0) << k << " " << kc;  // no empty last block
    }
}

// Column panels read in place cover the columns back to back in panels of at most NR; a
// remainder of NR / 3 takes the last 4/3 NR columns as two panels of 2/3 NR (28 = 12 + 8 + 8),
// others stay (NR, ..., remainder).
TEST(GemmEngine, ColumnPanelsSplitARemainderOfAThird) {
  auto widths = [](int64_t n, int64_t nr) {
    std::vector<int64_t> w;
    for (int64_t j0 = 0; j0 < n; j0 += w.back()) w.push_back(tile::balanced_panel_width(n, nr, j0));
    return w;
  };
  EXPECT_EQ(widths(28, 12), (std::vector<int64_t>{12, 8, 8}));
  EXPECT_EQ(widths(16, 12), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(widths(64, 12), (std::vector<int64_t>{12, 12, 12, 12, 8, 8}));
  EXPECT_EQ(widths(26, 12), (std::vector<int64_t>{12, 12, 2}));  // a remainder other than NR / 3
  EXPECT_EQ(widths(8, 6), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(widths(9, 4), (std::vector<int64_t>{4, 4, 1}));       // NR / 3 not whole: no split
  for (int64_t nr : {4, 6, 12})
    for (int64_t n = 1; n <= 60; ++n) {
      int64_t sum = 0;
      for (int64_t w : widths(n, nr)) {
        ASSERT_GT(w, 0);
        ASSERT_LE(w, nr);
        sum += w;
      }
      ASSERT_EQ(sum, n) << n << " " << nr;
    }
}

// Twelve columns a multiple of 4 KB apart share one L1 set: more lines than an 8-way 32 KB L1
// set holds (Zen 4), as many as a 12-way 48 KB one does; strides off 4 KB spread over sets.
TEST(GemmEngine, InPlaceColumnsOverflowAnL1SetOnPageStrides) {
  constexpr int64_t kb = 1024;
  EXPECT_TRUE(tile::columns_overflow_l1_set(4 * kb, 12, 32 * kb, 8, 64));   // lda 1024 floats
  EXPECT_TRUE(tile::columns_overflow_l1_set(8 * kb, 12, 32 * kb, 8, 64));   // 2048 channels
  EXPECT_FALSE(tile::columns_overflow_l1_set(2 * kb, 12, 32 * kb, 8, 64));  // two sets, 6 each
  EXPECT_FALSE(tile::columns_overflow_l1_set(6000, 12, 32 * kb, 8, 64));    // 1500 floats
  EXPECT_FALSE(tile::columns_overflow_l1_set(4 * kb, 8, 32 * kb, 8, 64));   // 8 columns: 8 ways
  EXPECT_FALSE(tile::columns_overflow_l1_set(8 * kb, 12, 48 * kb, 12, 64)); // 12 ways
  EXPECT_TRUE(tile::columns_overflow_l1_set(8 * kb, 16, 48 * kb, 12, 64));
}

// A block of 224 rows x 384 columns (f32) fetched into a 1 MB 8-way L2 (2048 sets): columns
// 2000 or 3000 floats apart spread over the sets; a multiple of 4 KB apart they fall into few
// (2048 floats: 16 starting sets, 24 columns each), as they do on a 2 MB 16-way L2; 64 columns
// a page apart fit half of 8 ways (4 KB: 32 starts, 2 columns each, 15 lines long).
TEST(GemmEngine, FetchedABlocksFitL2SetsOffPageStrides) {
  constexpr int64_t kb = 1024, mb = kb * kb;
  EXPECT_TRUE(tile::columns_fit_l2_sets(8000, 224 * 4, 384, mb, 8, 64));
  EXPECT_TRUE(tile::columns_fit_l2_sets(12000, 224 * 4, 384, mb, 8, 64));
  EXPECT_FALSE(tile::columns_fit_l2_sets(8 * kb, 224 * 4, 384, mb, 8, 64));
  EXPECT_FALSE(tile::columns_fit_l2_sets(12 * kb, 224 * 4, 384, mb, 8, 64));
  EXPECT_FALSE(tile::columns_fit_l2_sets(4 * kb, 224 * 4, 384, 2 * mb, 16, 64));
  EXPECT_TRUE(tile::columns_fit_l2_sets(4 * kb, 224 * 4, 64, mb, 8, 64));
}

// Above 4 MR rows, where this machine's L1 cannot hold the kernel's NR in-place columns (ldb
// 1024 floats: 4 KB apart on Zen 4's 8-way L1), the engine reads B as in place through a copy
// of each column panel, and straight from B otherwise (ldb 1032). The trace says which; the copy
// gives the bits of the direct read (the same blocks, values and order: B's columns moved 32
// bytes apart), and both match the reference, 1 and 2 threads.
TEST(GemmEngine, BPanelsAreCopiedWhereTheirColumnsOverflowAnL1Set) {
  Handle h;
  h.set_num_threads(1);
  const auto [mr, nr] = test::sgemm_tile(h);
  const index_t m = 8 * mr, n = 3 * nr + 5, k = 1024;
  const bool copied = !tile::in_place_columns_fit_l1(k * index_t(sizeof(float)), nr);
  const std::string t = test::sgemm_trace(h, Op::N, m, 256, k);
  EXPECT_NE(t.find(copied ? "B=in-place (panels copied" : "B=in-place"), std::string::npos) << t;
  EXPECT_EQ(t.find("B=packed"), std::string::npos) << t;
  EXPECT_EQ(test::sgemm_trace(h, Op::N, m, 256, 1000).find("panels copied"), std::string::npos);
  std::mt19937 rng(7);
  std::vector<float> A(size_t(m * k)), op_b(size_t(k * n));
  for (auto& v : A) v = random_value<float>(rng);
  for (auto& v : op_b) v = random_value<float>(rng);
  const std::vector<float> out[2] = {nn_product_at_ldb(h, A, op_b, m, n, k, k),
                                     nn_product_at_ldb(h, A, op_b, m, n, k, k + 8)};
  EXPECT_EQ(0, std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)));
  for (int threads : {1, 2}) {
    check_gemm<float>(Op::N, Op::N, m, n, k, 1.0f, 0.5f, threads, h.isa(), 0);
    check_gemm<float>(Op::T, Op::N, m, n, k, -1.0f, 1.0f, threads, h.isa(), 0);
    check_gemm<double>(Op::N, Op::N, m, n, k, 1.0, 0.0, threads, h.isa(), 0);
  }
}

// Few rows read B in place even where its columns fall into one L1 set (k a multiple of 1024
// floats: 4 KB apart); each 12-wide panel then runs as an 8-wide and a 4-wide walk
// (run_column_in_fitting_widths), which sums each entry in the same order: the bits equal those
// of the same product with B's columns spread (ldb k + 16, one 12-wide walk), and 2 threads
// those of 1. Full tiles (32, 64 rows), a ragged last tile (100 rows) and the half-height walk
// of a B from memory (16 rows, B beyond L3: its 4-wide rest keeps one accumulator set); against
// the reference too.
TEST(GemmEngine, PanelsWhoseColumnsShareAnL1SetRunInNarrowerWalks) {
  Handle h;
  const auto [mr, nr] = test::sgemm_tile(h);
  const index_t beyond_l3 = index_t(cpu_features().l3_bytes) / (4 * 4096) + 2 * nr + 3;
  const std::tuple<index_t, index_t, index_t> shapes[] = {{32, 3 * nr + 5, 1024}, {64, 4 * nr, 2048},
                                                           {100, 2 * nr + 1, 1024}, {16, beyond_l3, 4096}};
  for (const auto& [m, n, k] : shapes) {
    if (m > 4 * mr) continue;
    const auto [A, op_b] = random_operands(m, n, k, unsigned(m + n));
    std::vector<float> one_thread;
    for (int threads : {1, 2}) {
      h.set_num_threads(threads);
      const std::vector<float> out[2] = {nn_product_at_ldb(h, A, op_b, m, n, k, k),
                                         nn_product_at_ldb(h, A, op_b, m, n, k, k + 16)};
      EXPECT_EQ(0, std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)))
          << "m=" << m << " n=" << n << " k=" << k << " threads=" << threads;
      if (threads == 1) one_thread = out[0];
      else EXPECT_EQ(0, std::memcmp(one_thread.data(), out[0].data(), out[0].size() * sizeof(float))) << "m=" << m;
      expect_sampled_entries(out[0], A, op_b, m, n, k, 300);
    }
  }
  for (int threads : {1, 2}) check_gemm<float>(Op::T, Op::N, 48, 2 * nr + 7, 1024, 1.0f, 0.5f, threads, h.isa(), 0);
}

// Few columns (2 to 12 column panels) against an A beyond L2 pack B once per k block and fetch
// each next block of A into L2 while the block before it computes (PackPolicy::fetch_next_a),
// except where A's columns are a multiple of 4 KB apart (the fetched lines would crowd a few L2
// sets): the blocks are the same either way, so the bits do not depend on lda (1024 and 1036
// rows apart, 1 and 2 threads alike), and both match the reference (NN, NT, f32 and f64, beta
// reading C).
TEST(GemmEngine, FewColumnsFetchTheirNextBlockOfAIntoL2) {
  Handle h;
  h.set_num_threads(1);
  const auto [mr, nr] = test::sgemm_tile(h);
  const index_t m = 1024, n = 5 * nr + 4, k = 1100;
  const std::string spread = test::sgemm_trace(h, Op::N, m, n, k, 1.0f, m + 12);
  const std::string aliased = test::sgemm_trace(h, Op::N, m, n, k, 1.0f, m);
  EXPECT_NE(spread.find("B=packed A=packed (each next block fetched into L2"), std::string::npos) << spread;
  auto blocks = [](const std::string& t) { return t.substr(t.find("blocks"), t.find(" nc=") - t.find("blocks")); };
  EXPECT_EQ(blocks(spread), blocks(aliased)) << spread << aliased;
  EXPECT_EQ(test::sgemm_trace(h, Op::N, m, nr + nr / 2, k, 1.0f, m + 12).find("fetched"), std::string::npos)
      << "one full column panel: no fetch";
  const auto [A, B] = random_operands(m, n, k, 11);
  std::vector<float> padded(size_t((m + 12) * k));
  for (index_t p = 0; p < k; ++p) std::copy_n(&A[size_t(p * m)], m, &padded[size_t(p * (m + 12))]);
  std::vector<float> first;
  for (int threads : {1, 2}) {
    h.set_num_threads(threads);
    for (index_t lda : {m, m + 12}) {
      std::vector<float> C(size_t(m * n), 0.0f);
      gemm<float>(h, Op::N, Op::N, m, n, k, 1.0f, lda == m ? A.data() : padded.data(), lda, B.data(), k, 0.0f,
                  C.data(), m);
      if (first.empty()) first = C, expect_sampled_entries(C, A, B, m, n, k, 300);
      else EXPECT_EQ(0, std::memcmp(first.data(), C.data(), C.size() * sizeof(float))) << threads << " " << lda;
    }
    check_gemm<float>(Op::N, Op::N, m, n, k, 1.0f, 0.5f, threads, h.isa(), 12);
    check_gemm<float>(Op::N, Op::T, m, 3 * nr, k, -1.0f, 1.0f, threads, h.isa(), 12);
    check_gemm<double>(Op::N, Op::N, m, n, k, 1.0, 0.0, threads, h.isa(), 12);
  }
}

// The tile-stationary walk's fetch of the next A slice is split among the column panels by
// width (16 columns of a packed B as 12 + 4 take three quarters and one), panels that do not fetch
// take none, and the shares cover the slice back to back.
TEST(GemmEngine, NextSliceFetchIsSplitByPanelWidth) {
  const int64_t kc = 512, slice = kc * 32 * 4;  // a 32-row f32 slice, 128 bytes a step
  int64_t share[5], offset[5];
  const int64_t wino[] = {12, 4};
  tile::split_slice_fetch(wino, 2, slice, kc, share, offset);
  EXPECT_EQ(share[0], 96);
  EXPECT_EQ(share[1], 32);
  EXPECT_EQ(offset[0], 0);
  EXPECT_EQ(offset[1], 96 * kc);
  const int64_t one[] = {12};  // one panel: the whole slice, two lines a step
  tile::split_slice_fetch(one, 1, slice, kc, share, offset);
  EXPECT_EQ(share[0], 128);
  const int64_t none[] = {0, 0};  // no panel fetches
  tile::split_slice_fetch(none, 2, slice, kc, share, offset);
  EXPECT_EQ(share[0], 0);
  EXPECT_EQ(share[1], 0);
  const std::vector<std::vector<int64_t>> layouts{{12, 12, 12, 12, 0}, {12, 1}, {12, 12, 6}, {4}};
  for (int64_t depth : {1, 64, 301, 1152})
    for (const std::vector<int64_t>& w : layouts) {
      const int64_t bytes = depth * 32 * 4;
      tile::split_slice_fetch(w.data(), int64_t(w.size()), bytes, depth, share, offset);
      int64_t width = 0;
      for (int64_t x : w) width += x;
      for (std::size_t q = 0; q < w.size(); ++q) {
        ASSERT_LE(share[q], 128) << depth << " panel " << q;  // LineFetch names two lines a step at most
        ASSERT_EQ(share[q] == 0, w[q] == 0) << depth << " panel " << q;
        ASSERT_GE(share[q] * depth * width, bytes * w[q]) << depth << " panel " << q;  // its part of the slice
        if (q > 0) {
          ASSERT_EQ(offset[q], offset[q - 1] + share[q - 1] * depth) << depth << " panel " << q;
        }
      }
      ASSERT_GE(offset[w.size() - 1] + share[w.size() - 1] * depth, bytes) << depth;  // the whole slice
    }
}

TEST(GemmEngine, BetaZeroDoesNotReadC) {
  for (Isa isa : isas()) {
    Handle h;
    h.set_isa(isa);
    const index_t m = 37, n = 13, k = 5;
    std::vector<float> A(size_t(m * k), 1.0f), B(size_t(k * n), 2.0f);
    std::vector<float> C(size_t(m * n), std::numeric_limits<float>::quiet_NaN());
    gemm<float>(h, Op::N, Op::N, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f, C.data(), m);
    for (float c : C) ASSERT_EQ(c, 10.0f);
    // alpha == 0: A and B are not read (NaN there must not leak), C = beta * C.
    std::vector<float> An(size_t(m * k), std::numeric_limits<float>::quiet_NaN());
    gemm<float>(h, Op::N, Op::N, m, n, k, 0.0f, An.data(), m, B.data(), k, 0.5f, C.data(), m);
    for (float c : C) ASSERT_EQ(c, 5.0f);
  }
}

namespace {

// The same gemm through the Lt matmul forced onto the tiled path with both operands packed
// (the reference path for the bitwise comparisons below). Returns false if no such algorithm.
template <class T>
bool gemm_tiled_pack_both(const Handle& h, Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* A,
                          index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  constexpr DType type = sizeof(T) == 4 ? DType::f32 : DType::f64;
  lt::MatmulDesc desc;
  desc.compute = type;
  desc.transa = ta, desc.transb = tb;
  lt::MatrixLayout la{type, ta == Op::N ? m : k, ta == Op::N ? k : m, lda};
  lt::MatrixLayout lb{type, tb == Op::N ? k : n, tb == Op::N ? n : k, ldb};
  lt::MatrixLayout lc{type, m, n, ldc};
  for (const lt::Algorithm& a : lt::heuristics(h, desc, la, lb, lc, lc, {}, 8))
    if (a.id == lt::AlgoId::tiled_pack_both) {
      std::vector<char> ws(a.workspace_bytes + 64);
      lt::matmul(h, desc, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &a, ws.data(), ws.size());
      return true;
    }
  return false;
}
bool sgemm_tiled_pack_both(const Handle& h, Op ta, Op tb, index_t m, index_t n, index_t k, float alpha,
                           const float* A, index_t lda, const float* B, index_t ldb, float beta, float* C, index_t ldc) {
  return gemm_tiled_pack_both<float>(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Small products (rows within one micro-tile or 1.5 on AVX-512, depth <= 32: tile/small_gemm.hpp) read A and C
// in place with the last vector's rows masked: each C element must equal the tiled path's bit
// for bit (the same sum, finished by the same update_c) for every alpha / beta branch (1, 0,
// other), each ISA, f32 and f64, every column-block width up to 64 columns, A transposed within
// and beyond the entries the path copies; and the rows between m and ldc must keep their values.
template <class T>
void small_path_equals_tiled_path() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<T> d(-1, 1);
  const T guard = T(-777);
  for (Isa isa : isas()) {
    Handle h;
    h.set_isa(isa);
    for (auto [m, n, k] : {std::array<index_t, 3>{1, 1, 1}, {3, 64, 5}, {7, 29, 32}, {8, 16, 16}, {16, 17, 8},
                           {13, 1, 31}, {5, 3, 2}, {16, 64, 32}, {24, 11, 12}, {32, 40, 7}, {9, 23, 14},
                           {20, 13, 17}, {40, 9, 20}, {48, 30, 32}, {33, 64, 3}, {64, 8, 8}})
      for (Op ta : {Op::N, Op::T})
        for (Op tb : {Op::N, Op::T})
          for (auto [alpha, beta] : {std::pair<T, T>{1, 0}, {T(1.5), 0}, {1, 1}, {T(-0.5), 1}, {1, T(0.25)},
                                     {T(1.25), T(-2)}}) {
            const index_t lda = (ta == Op::N ? m : k) + 3, ldb = (tb == Op::N ? k : n) + 1, ldc = m + 5;
            std::vector<T> A(size_t(lda * (ta == Op::N ? k : m))), B(size_t(ldb * (tb == Op::N ? n : k)));
            std::vector<T> C0(size_t(ldc * n));
            for (auto* v : {&A, &B, &C0})
              for (auto& x : *v) x = d(rng);
            for (index_t j = 0; j < n; ++j)
              for (index_t i = m; i < ldc; ++i) C0[size_t(i + j * ldc)] = guard;
            std::vector<T> small = C0, tiled = C0;
            gemm<T>(h, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, small.data(), ldc);
            ASSERT_TRUE(gemm_tiled_pack_both<T>(h, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                                                tiled.data(), ldc));
            for (std::size_t e = 0; e < small.size(); ++e)
              ASSERT_EQ(std::memcmp(&small[e], &tiled[e], sizeof(T)), 0)
                  << "m=" << m << " n=" << n << " k=" << k << " ops=" << char(ta) << char(tb) << " alpha=" << alpha
                  << " beta=" << beta << " isa=" << isa_name(isa) << " element " << e << ": " << small[e] << " vs "
                  << tiled[e] << (index_t(e) % ldc >= m ? " (a row beyond m)" : "");
          }
  }
}

}  // namespace

// Tiny products skip the tiled path's blocking and packing (tile/tiny_gemm.hpp) but must give
// its results bit for bit: compared with the Lt matmul forced onto the tiled path, over every
// op pair, ISA, ragged rows/columns, alpha/beta, and with NaN in C when beta == 0.
TEST(GemmEngine, TinyPathEqualsTheTiledPathBitwise) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1, 1);
  for (Isa isa : isas()) {
    for (int threads : {1, 2}) {  // one thread: the tiny path serves up to 8 MR x 24 NR x KC
      Handle h;
      h.set_isa(isa);
      h.set_num_threads(threads);
      for (auto [m, n, k] : {std::array<index_t, 3>{1, 1, 1}, {4, 4, 4}, {8, 8, 8}, {11, 7, 3}, {16, 6, 9},
                             {17, 13, 24}, {24, 24, 24}, {32, 5, 40}, {3, 23, 17}, {32, 32, 32}, {48, 44, 50},
                             {40, 36, 60}, {16, 16, 16}, {8, 30, 90}, {64, 12, 100}, {64, 64, 64}, {60, 90, 130},
                             {128, 100, 120}, {200, 150, 60}})
        for (Op ta : {Op::N, Op::T})
          for (Op tb : {Op::N, Op::T})
            for (float beta : {0.0f, 0.75f}) {
              const index_t lda = (ta == Op::N ? m : k) + 1, ldb = (tb == Op::N ? k : n) + 2, ldc = m + 3;
              std::vector<float> A(size_t(lda * (ta == Op::N ? k : m))), B(size_t(ldb * (tb == Op::N ? n : k)));
              std::vector<float> C0(size_t(ldc * n));
              for (auto* v : {&A, &B, &C0})
                for (auto& x : *v) x = d(rng);
              if (beta == 0.0f)
                for (index_t j = 0; j < n; ++j) C0[size_t(j * ldc)] = std::numeric_limits<float>::quiet_NaN();
              std::vector<float> tiny = C0, tiled = C0;
              const float alpha = 1.25f;
              gemm<float>(h, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, tiny.data(), ldc);
              ASSERT_TRUE(sgemm_tiled_pack_both(h, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                                                tiled.data(), ldc));
              for (std::size_t e = 0; e < tiny.size(); ++e)
                ASSERT_EQ(std::memcmp(&tiny[e], &tiled[e], sizeof(float)), 0)
                    << "m=" << m << " n=" << n << " k=" << k << " ops=" << char(ta) << char(tb) << " beta=" << beta
                    << " isa=" << isa_name(isa) << " threads=" << threads << " element " << e << ": " << tiny[e]
                    << " vs " << tiled[e];
            }
    }
  }
}

TEST(GemmEngine, SmallPathEqualsTheTiledPathBitwise) {
  small_path_equals_tiled_path<float>();
  small_path_equals_tiled_path<double>();
}

// Edge columns are covered exactly by narrower kernels (32x12 -> 32x8 + 32x2 + 32x1 for 11
// columns), so a B read in place is read there too and C is written in place: the bits must
// equal those of the same product with B packed into zero-padded panels (an Lt pack-both
// algorithm), and nothing right of the last column may be written. Every edge width of every
// ISA's tile (NR 4, 6, 12), rows full, half and ragged, depths below and above the chained
// 48, beta 0 (C not read) and not.
TEST(GemmEngine, EdgeColumnsInPlaceEqualPackedBitwise) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-1, 1);
  for (Isa isa : isas()) {
    Handle h;
    h.set_isa(isa);
    for (index_t m : {16, 32, 37})
      for (index_t n = 1; n <= 36; ++n)
        for (index_t k : {5, 64})
          for (float beta : {0.0f, 0.5f}) {
            const index_t lda = m, ldb = k, ldc = m + 1;
            std::vector<float> A(size_t(lda * k)), B(size_t(ldb * n)), C0(size_t(ldc * (n + 1)));
            for (auto* v : {&A, &B, &C0})
              for (auto& x : *v) x = d(rng);
            std::vector<float> in_place = C0, packed = C0;
            const float alpha = 1.0f;
            gemm<float>(h, Op::N, Op::N, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, in_place.data(), ldc);
            ASSERT_TRUE(sgemm_tiled_pack_both(h, Op::N, Op::N, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                                              packed.data(), ldc));
            for (std::size_t e = 0; e < in_place.size(); ++e)
              ASSERT_EQ(std::memcmp(&in_place[e], &packed[e], sizeof(float)), 0)
                  << "m=" << m << " n=" << n << " k=" << k << " beta=" << beta << " isa=" << isa_name(isa)
                  << " element " << e;
            for (index_t i = 0; i < ldc; ++i)
              ASSERT_EQ(in_place[size_t(i + n * ldc)], C0[size_t(i + n * ldc)]) << "column n written, n=" << n;
          }
  }
}

// The one-block path runs products whose rows are whole tall tiles on the kernel's tall partner
// (tile/tiny_gemm.hpp, tiny_gemm_tall: AVX-512's 64x6 f32, 32x6 f64) where op(A) stays in L1.
// The bits must stay those of the wide kernel: against the tiled path with both operands packed,
// on 1 and 2 threads (whose parts can run either kernel), over every last-column width of both
// kernels, depths below and above the edge kernels' chained 48, both ops of A, beta 0 and not.
template <class T>
void tall_tiles_equal_the_tiled_path() {
  std::mt19937 rng(13);
  std::uniform_real_distribution<T> d(-1, 1);
  for (Isa isa : isas())
    for (int threads : {1, 2}) {
      Handle h;
      h.set_isa(isa);
      h.set_num_threads(threads);
      for (index_t m : {32, 64, 128})
        for (index_t k : {5, 47, 48, 64, 100})
          for (index_t n = 1; n <= 40; ++n)
            for (Op ta : {Op::N, Op::T})
              for (T beta : {T(0), T(0.5)}) {
                const index_t lda = (ta == Op::N ? m : k) + 1, ldb = k + 2, ldc = m + 3;
                std::vector<T> A(size_t(lda * (ta == Op::N ? k : m))), B(size_t(ldb * n)), C0(size_t(ldc * n));
                for (auto* v : {&A, &B, &C0})
                  for (auto& x : *v) x = d(rng);
                std::vector<T> one_block = C0, tiled = C0;
                const T alpha = T(1.25);
                gemm<T>(h, ta, Op::N, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, one_block.data(), ldc);
                ASSERT_TRUE(gemm_tiled_pack_both<T>(h, ta, Op::N, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                                                    tiled.data(), ldc));
                for (std::size_t e = 0; e < tiled.size(); ++e)
                  ASSERT_EQ(std::memcmp(&one_block[e], &tiled[e], sizeof(T)), 0)
                      << "m=" << m << " n=" << n << " k=" << k << " op(A)=" << char(ta) << " beta=" << beta
                      << " isa=" << isa_name(isa) << " threads=" << threads << " element " << e;
              }
    }
}

TEST(GemmEngine, TallTilesEqualTheTiledPathBitwise) {
  tall_tiles_equal_the_tiled_path<float>();
  tall_tiles_equal_the_tiled_path<double>();
}

// STRATA_VERBOSE=1 says which way the engine ran a product: the small path (rows within one
// micro-tile, short depth), the one-block path (on one thread a product of one k block), the
// tiled path with its blocks and parts (each part one block when they fit), or C only scaled.
TEST(GemmEngine, VerboseTraceNamesTheRoute) {
  auto trace = [](int threads, index_t m, index_t n, index_t k, float alpha) {
    Handle h;
    h.set_num_threads(threads);
    return test::sgemm_trace(h, Op::N, m, n, k, alpha);
  };
  std::string t = trace(2, 8, 8, 8, 1.0f);  // 8 rows: within MR on every ISA
  EXPECT_NE(t.find("path=small"), std::string::npos) << t;
  t = trace(1, 64, 64, 64, 1.0f);  // 64 rows: beyond MR on every ISA
  EXPECT_NE(t.find("path=one-block"), std::string::npos) << t;
  // op(A) of 16 KB in whole 64-row tiles: AVX-512's tall 64x6 tiles, the wide ones elsewhere
  EXPECT_EQ(t.find("64x6 tiles") != std::string::npos, Handle{}.isa() == Isa::avx512) << t;
  t = trace(1, 64, 64, 192, 1.0f);  // op(A) of 48 KB: beyond L1, the wide tiles
  EXPECT_EQ(t.find("tiles)"), std::string::npos) << t;
  t = trace(1, 8, 8, 33, 1.0f);  // depth beyond the small path's
  EXPECT_NE(t.find("path=one-block"), std::string::npos) << t;
  t = trace(1, 300, 300, 1000, 1.0f);  // depth beyond one k block
  EXPECT_NE(t.find("path=tiled blocks mc="), std::string::npos) << t;
  EXPECT_NE(t.find("parts=1"), std::string::npos) << t;
  EXPECT_EQ(t.find("each part one block"), std::string::npos) << t;
  t = trace(2, 32, 180, 100, 1.0f);  // 1.2 MFLOP: two parts of 32 x 90, one block on every ISA
  EXPECT_NE(t.find("parts=2 (each part one block)"), std::string::npos) << t;
  t = trace(1, 8, 8, 8, 0.0f);
  EXPECT_NE(t.find("path=scale-only"), std::string::npos) << t;
  t = trace(2, 4, 4, 4096, 1.0f);  // few rows and columns over a long depth: dot products on AVX-512
  EXPECT_EQ(t.find("path=dot") != std::string::npos, Handle{}.isa() == Isa::avx512) << t;
}

TEST(GemmEngine, NaNAndInfPropagate) {
  const index_t m = 20, n = 8, k = 4;
  std::vector<double> A(size_t(m * k), 1.0), B(size_t(k * n), 1.0), C(size_t(m * n), 0.0);
  A[3] = std::numeric_limits<double>::infinity();
  B[1] = std::numeric_limits<double>::quiet_NaN();
  gemm<double>(Handle{}, Op::N, Op::N, m, n, k, 1.0, A.data(), m, B.data(), k, 0.0, C.data(), m);
  EXPECT_TRUE(std::isnan(C[0]));          // column 0 sees the NaN in B(1,0)
  EXPECT_TRUE(std::isinf(C[3 + m]));      // row 3 sees Inf in column 1
}

// Whether plan_partition splits an m x n x k product on `threads` threads by columns (in
// panels of nr, one part each thread) for what its parts pack; false for a row split.
namespace {
bool splits_columns(int64_t m, int64_t n, int64_t k, int mr, int nr, int threads, tile::PartPacks packs) {
  const tile::Partition p = tile::plan_partition(m, n, k, mr, nr, threads, tile::GatheredAlone::neither, packs);
  if (p.split_n) {
    EXPECT_EQ(p.unit, nr);
    EXPECT_EQ(p.parts, threads);
  }
  return p.split_n;
}
}  // namespace

// A walk that packs neither operand (the tile-stationary walk) splits its columns where its rows
// would give a part fewer than four tiles (res4_1x1_1024_256 on 64x6: 2 + 2 tiles), else keeps
// the longer side; other walks keep the longer side. Its bits: ConvPrepared's pointwise walks.
TEST(GemmEngine, WalkPackingNeitherOperandSplitsColumnsForFewRowTiles) {
  using tile::PartPacks;
  EXPECT_TRUE(splits_columns(256, 196, 1024, 64, 6, 2, PartPacks::neither));
  EXPECT_FALSE(splits_columns(256, 196, 1024, 64, 6, 2, PartPacks::both));     // packing walks: rows
  EXPECT_FALSE(splits_columns(1024, 196, 256, 64, 6, 2, PartPacks::neither));  // 8 a part
  EXPECT_FALSE(splits_columns(256, 40, 1024, 64, 6, 2, PartPacks::neither));   // few pixels
}

// A prepacked A against a B the policy packs (a prepared filter over an image whose channel
// runs overflow an L1 set) splits the columns, so that no part packs B's other columns, once
// they give each part four tiles; with fewer (res5's 49 pixels on 12-wide tiles) the rows.
TEST(GemmEngine, PrepackedAOverPackedBSplitsColumns) {
  using tile::PartPacks;
  EXPECT_TRUE(splits_columns(512, 196, 1024, 32, 12, 2, PartPacks::b_only));
  EXPECT_FALSE(splits_columns(512, 196, 1024, 32, 12, 2, PartPacks::both));    // both packed: rows
  EXPECT_FALSE(splits_columns(512, 49, 2048, 32, 12, 2, PartPacks::b_only));   // 4 tiles in all
  EXPECT_FALSE(splits_columns(512, 196, 1024, 32, 12, 1, PartPacks::b_only));  // one part
}

// A product that packs both operands takes k blocks twice as long, and row blocks half as tall,
// once its C outgrows L2 (each k block is a pass over C from L3 or memory), not before, and
// not for a depth under two blocks.
namespace {
struct Tile32x12 {  // the tile shape streaming_blocks reads off a kernel
  using T = float;
  static constexpr int mr = 32, nr = 12;
};
}  // namespace

TEST(GemmEngine, PackedProductsWhoseCOutgrowsL2TakeLongerKBlocks) {
  const tile::BlockSizes bs{800, 160, 4092};
  const tile::PackPolicy both;  // packs A and B
  const tile::Partition one;
  const int64_t l2 = int64_t(cpu_features().l2_bytes);
  const int64_t beyond = (int64_t(std::sqrt(double(2 * l2 / 4))) + 31) / 32 * 32;  // C of ~2 x L2
  const tile::BlockSizes big = tile::streaming_blocks<Tile32x12>(beyond, beyond, 1024, bs, both, one, false);
  EXPECT_EQ(big.kc, tile::balanced_depth(1024, 320));
  EXPECT_EQ(big.mc, 384);
  const int64_t within = std::max<int64_t>(32, (int64_t(std::sqrt(double(l2 / 8))) / 32) * 32);  // ~half of L2
  const tile::BlockSizes small = tile::streaming_blocks<Tile32x12>(within, within, 1024, bs, both, one, false);
  EXPECT_EQ(small.kc, tile::balanced_depth(1024, 160));
  EXPECT_EQ(small.mc, 800);
  const tile::BlockSizes shallow = tile::streaming_blocks<Tile32x12>(beyond, beyond, 300, bs, both, one, false);
  EXPECT_EQ(shallow.kc, tile::balanced_depth(300, 160));
  EXPECT_EQ(shallow.mc, 800);
}

// A streamed B: one part takes all rows in one A block (up to three blocks' worth); two parts
// take that block too while each part's slice of B outgrows L2 (re-reading it per smaller
// block would cost more than A's block costs from L3), and blocks within A's L2 budget while
// it fits. The k blocks are the same whatever the parts (they set the bits).
TEST(GemmEngine, StreamedBPartsTakeOneABlockWhileTheirSliceOfBOutgrowsL2) {
  const tile::BlockSizes bs{800, 160, 4092};
  tile::PackPolicy streamed;
  streamed.pack_b = false;
  const int64_t l2 = int64_t(cpu_features().l2_bytes), m = 4000, k = 1024;
  const int64_t wide = 2 * (l2 / (4 * k)) + 64, narrow = l2 / (4 * k);  // each half beyond / within L2
  tile::Partition two;
  two.parts = 2, two.split_n = true, two.unit = 12;
  const tile::BlockSizes one = tile::streaming_blocks<Tile32x12>(m, wide, k, bs, streamed, tile::Partition{}, false);
  EXPECT_EQ(one.mc, 2400);  // three blocks' worth of rows
  const tile::BlockSizes beyond = tile::streaming_blocks<Tile32x12>(m, wide, k, bs, streamed, two, false);
  EXPECT_EQ(beyond.mc, one.mc);
  EXPECT_EQ(beyond.kc, one.kc);
  const tile::BlockSizes within = tile::streaming_blocks<Tile32x12>(m, narrow, k, bs, streamed, two, false);
  EXPECT_LE(within.mc * within.kc, 3 * bs.mc * bs.kc / 2);  // A's L2 budget
  EXPECT_EQ(within.kc, one.kc);
  tile::Partition rows = two;  // a row split: each part reads all of B
  rows.split_n = false, rows.unit = 32;
  EXPECT_EQ(tile::streaming_blocks<Tile32x12>(m, wide / 2 + 32, k, bs, streamed, rows, false).mc, one.mc);
}

// Where streaming B takes more than four A blocks (AMD), a B larger than L2 is still read in
// place: each packed B block would serve a few A blocks at most and the streamed route's longer
// k blocks make fewer passes over C (f32 4096^3 1.04x on 1 thread). Smaller B stays packed.
// The products' bits: 2 threads equal 1, and sampled entries match a double-precision sum.
TEST(GemmEngine, BOutgrowingL2IsReadInPlaceBeyondFourABlocks) {
  Handle h;
  h.set_num_threads(1);
  const index_t m = 8192, k = 512, l2_columns = index_t(cpu_features().l2_bytes) / (4 * k);
  const bool beyond = tile::streamed_b_blocks() > 1;
  const std::string big = test::sgemm_trace(h, Op::N, m, l2_columns + 16, k);
  EXPECT_NE(big.find(beyond ? "B=in-place" : "B=packed"), std::string::npos) << big;
  const std::string small = test::sgemm_trace(h, Op::N, m, l2_columns - 16, k);
  EXPECT_NE(small.find("B=packed"), std::string::npos) << small;
  const index_t n = l2_columns + 16;
  const auto [A, B] = random_operands(m, n, k, 11);
  std::vector<float> out[2];
  for (int threads : {1, 2}) {
    h.set_num_threads(threads);
    out[threads - 1].assign(size_t(m * n), 0.0f);
    gemm<float>(h, Op::N, Op::N, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f, out[threads - 1].data(), m);
  }
  EXPECT_EQ(0, std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)));
  expect_sampled_entries(out[0], A, B, m, n, k, 500);
}

TEST(GemmEngine, BitwiseIdenticalForAnyThreadCount) {
  const index_t m = 517, n = 389, k = 301;
  const auto [A, B] = random_operands(m, n, k, 7);
  // From four parts on the scheduler may split C into a grid of row bands and column groups
  // (4 x 16, 2 x 2 ...): borders stay on micro-tiles, so the bits stay those of one thread.
  EXPECT_TRUE(tile::plan_partition(m, n, k, 32, 12, 4).grid());
  EXPECT_TRUE(tile::plan_partition(m, n, k, 16, 6, 16).grid());
  EXPECT_FALSE(tile::plan_partition(m, n, k, 16, 6, 2).grid());
  for (Op ta : {Op::N, Op::T})
    for (Op tb : {Op::N, Op::T}) {
      std::vector<float> ref;
      for (int threads : {1, 2, 3, 4, 6, 9, 16}) {
        std::vector<float> C(size_t(m * n), 1.0f);
        Handle h;
        h.set_num_threads(threads);
        gemm<float>(h, ta, tb, m, n, k, 1.0f, A.data(), ta == Op::N ? m : k, B.data(), tb == Op::N ? k : n, 0.25f,
                    C.data(), m);
        if (ref.empty()) ref = C;
        else
          ASSERT_EQ(0, std::memcmp(ref.data(), C.data(), C.size() * sizeof(float)))
              << threads << " threads, " << char(ta) << char(tb);
      }
    }
}

// Strips sized by the threads' learnt speeds (core/load_balance.hpp) keep their borders on
// micro-tiles: any speeds give the bits of one thread -- columns split (517 x 389), rows split
// (900 x 100), parts of one block each (128^3), every op pair, f32, f64 and c64, 2 and 3 threads,
// speeds set far apart either way (and learnt on from there by the calls themselves).
template <class T>
void check_any_thread_speeds() {
  for (auto [m, n, k] : {std::tuple<index_t, index_t, index_t>{517, 389, 301}, {900, 100, 200}, {128, 128, 128}}) {
    std::mt19937 rng(5);
    std::vector<T> A(size_t(m * k)), B(size_t(k * n)), C0(size_t(m * n));
    for (auto* v : {&A, &B, &C0})
      for (auto& x : *v) x = random_value<T>(rng);
    for (Op ta : {Op::N, Op::T})
      for (Op tb : {Op::N, Op::T}) {
        auto run = [&](int threads) {
          std::vector<T> C = C0;
          Handle h;
          h.set_num_threads(threads);
          gemm<T>(h, ta, tb, m, n, k, T(1.5), A.data(), ta == Op::N ? m : k, B.data(), tb == Op::N ? k : n, T(0.25),
                  C.data(), m);
          return C;
        };
        const std::vector<T> one = run(1);
        for (std::array<double, 3> speeds :
             {std::array{1.0, 1.0, 1.0}, {0.2, 5.0, 1.0}, {5.0, 0.2, 0.5}, {1.0, 3.0, 0.3}})
          for (int threads : {2, 3}) {
            set_thread_speeds(speeds.data(), 3);
            const std::vector<T> C = run(threads);
            ASSERT_EQ(0, std::memcmp(one.data(), C.data(), C.size() * sizeof(T)))
                << m << "x" << n << "x" << k << " " << char(ta) << char(tb) << " threads " << threads << " speeds "
                << speeds[0] << "," << speeds[1] << "," << speeds[2];
          }
      }
  }
  const double equal[3] = {1, 1, 1};
  set_thread_speeds(equal, 3);
}
TEST(GemmEngine, BitwiseIdenticalForAnyThreadSpeeds) {
  check_any_thread_speeds<float>();
  check_any_thread_speeds<double>();
  check_any_thread_speeds<c64>();
}

// The split follows the speeds: a thread 25 times slower gets one unit of columns (or none),
// and with balancing off the strips are equal again.
TEST(GemmEngine, StripsFollowTheThreadSpeeds) {
  Handle h;
  h.set_num_threads(2);
  const double slow_worker[2] = {5.0, 0.2}, slow_caller[2] = {0.2, 5.0}, equal[2] = {1.0, 1.0};
  set_thread_speeds(slow_worker, 2);
  std::string t = test::sgemm_trace(h, Op::N, 300, 600, 1000);
  const auto from = [](const std::string& s) {
    const auto at = s.find("part 1 from column ");
    return at == std::string::npos ? -1L : std::stol(s.substr(at + 19));
  };
  EXPECT_GE(from(t), 552) << t;  // 600 x 25 / 26 = 577, on a unit of at most 24 columns
  set_thread_speeds(slow_caller, 2);
  t = test::sgemm_trace(h, Op::N, 300, 600, 1000);
  EXPECT_GE(from(t), 0) << t;
  EXPECT_LE(from(t), 48) << t;
  set_thread_speeds(equal, 2);
  t = test::sgemm_trace(h, Op::N, 300, 600, 1000);
  EXPECT_GE(from(t), 276) << t;
  EXPECT_LE(from(t), 324) << t;
  set_load_balancing(false);
  set_thread_speeds(slow_worker, 2);
  t = test::sgemm_trace(h, Op::N, 300, 600, 1000);
  EXPECT_EQ(from(t), -1) << t;  // equal strips, not reported
  set_load_balancing(true);
  set_thread_speeds(equal, 2);
}

// The first column panel of each A block packs A's panels as its tiles read them in place
// (Mainloop::fused_a_packing): the same values as packing first, so the same bits as the
// transposed A (packed first). Against B packed (NT here) and read in place with adjacent
// columns (NN) or with a column stride (NT, B inside a wider matrix), A tight or inside a
// taller matrix, ragged rows, several k and row blocks, f32 and f64, every ISA, 1 and 2 threads.
// Shapes outside the few-column TN rule (transposed_product.hpp: 36 columns, or a depth under
// 1 KB), under which the packed-first product would run as its transpose and pack no A.
// (Column counts outside the few-column TN rule, transposed_product.hpp, under which the
// transposed A's product would run as its transpose.)
template <class T>
void check_fused_a_packing() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> d(-1, 1);
  for (Isa isa : isas())
    for (int threads : {1, 2})
      for (Op tb : {Op::N, Op::T})
        for (auto [m, n, k, pad] : {std::tuple{200, 9, 120, 0}, std::tuple{200, 9, 120, 3}, std::tuple{100, 40, 70, 0},
                                    std::tuple{601, 36, 700, 5}, std::tuple{70, 25, 1100, 0},
                                    std::tuple{1100, 13, 40, 1}}) {
          const index_t ldb = (tb == Op::N ? k : n) + pad, lda = m + 2 * pad;
          std::vector<T> A(size_t(lda * k)), At(size_t(k * m)), B(size_t(ldb * (tb == Op::N ? n : k))),
              C0(size_t(m * n));
          for (auto* v : {&A, &B, &C0})
            for (auto& x : *v) x = T(d(rng));
          for (index_t i = 0; i < m; ++i)
            for (index_t p = 0; p < k; ++p) At[size_t(p + i * k)] = A[size_t(i + p * lda)];
          // beta 0: every A block of the first k block fused; beta 2: none (they read C).
          for (T beta : {T(0), T(2)}) {
            std::vector<T> fused = C0, packed = C0;
            Handle h;
            h.set_isa(isa);
            h.set_num_threads(threads);
            gemm<T>(h, Op::N, tb, m, n, k, T(0.5), A.data(), lda, B.data(), ldb, beta, fused.data(), m);
            gemm<T>(h, Op::T, tb, m, n, k, T(0.5), At.data(), k, B.data(), ldb, beta, packed.data(), m);
            ASSERT_EQ(0, std::memcmp(fused.data(), packed.data(), fused.size() * sizeof(T)))
                << isa_name(isa) << " " << threads << " threads, N" << char(tb) << " " << m << "x" << n << "x" << k
                << " lda " << lda << " ldb " << ldb << " beta " << double(beta);
          }
        }
}
TEST(GemmEngine, APackedByTheFirstColumnPanelEqualsPackedFirstBitwise) {
  check_fused_a_packing<float>();
  check_fused_a_packing<double>();
}

// Triangular output (gemmt, and through it syrk/syr2k on real types): only the uplo triangle
// is read and written — the other holds NaN that must survive and must not leak in — the
// triangle matches a double reference, and the bits do not depend on the thread count (the
// columns are split by triangle area on micro-tile borders). Sizes cross the diagonal at
// every micro-tile offset and k crosses KC.
TEST(GemmEngine, TriangularOutputSkipsTheOtherTriangle) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (Isa isa : isas())
    for (index_t n : {1, 7, 23, 130, 301})
      for (index_t k : {3, 700})
        for (Uplo uplo : {Uplo::upper, Uplo::lower})
          for (Op ta : {Op::N, Op::T}) {
            const Op tb = ta == Op::N ? Op::T : Op::N;
            std::mt19937 rng(unsigned(n * 7 + k));
            const index_t lda = (ta == Op::N ? n : k) + 1, ldc = n + 2;
            std::vector<float> A(size_t(lda * (ta == Op::N ? k : n))), B(A.size());
            for (auto& v : A) v = random_value<float>(rng);
            for (auto& v : B) v = random_value<float>(rng);
            std::vector<float> C0(size_t(ldc * n));
            for (auto& v : C0) v = random_value<float>(rng);
            auto inside = [&](index_t i, index_t j) { return uplo == Uplo::upper ? i <= j : i >= j; };
            for (index_t j = 0; j < n; ++j)
              for (index_t i = 0; i < ldc; ++i)
                if (i >= n || !inside(i, j)) C0[size_t(i + j * ldc)] = nan;
            std::vector<float> first;
            for (int threads : {1, 2, 3}) {
              for (float beta : {0.0f, -0.5f}) {
                std::vector<float> C = C0;
                if (beta == 0.0f)  // not read: NaN inside too
                  for (auto& v : C) v = nan;
                Handle h;
                h.set_isa(isa);
                h.set_num_threads(threads);
                gemmt<float>(h, uplo, ta, tb, n, k, 1.5f, A.data(), lda, B.data(), lda, beta, C.data(), ldc);
                for (index_t j = 0; j < n; ++j)
                  for (index_t i = 0; i < ldc; ++i) {
                    const float got = C[size_t(i + j * ldc)];
                    if (i >= n || !inside(i, j)) {
                      ASSERT_TRUE(std::isnan(got)) << "wrote outside the triangle at " << i << "," << j;
                      continue;
                    }
                    double want = beta == 0.0f ? 0.0 : double(beta) * C0[size_t(i + j * ldc)];
                    for (index_t p = 0; p < k; ++p)
                      want += 1.5 * op_elem(ta, A, lda, i, p).real() * op_elem(tb, B, lda, p, j).real();
                    ASSERT_NEAR(got, want, 1e-5 * double(k) + 1e-5)
                        << isa_name(isa) << " n=" << n << " k=" << k << " threads=" << threads << " at " << i << "," << j;
                  }
                if (beta != 0.0f) continue;
                if (first.empty()) first = C;
                else ASSERT_EQ(0, std::memcmp(first.data(), C.data(), C.size() * sizeof(float))) << threads << " threads";
              }
            }
          }
}

TEST(GemmEngine, RowMajorOrder) {
  // Row-major 2x3 * 3x2.
  const float A[] = {1, 2, 3, 4, 5, 6}, B[] = {1, 0, 0, 1, 1, 1};
  float C[4] = {};
  gemm<float>(Handle{}, Order::row_major, Op::N, Op::N, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f, C, 2);
  EXPECT_EQ(C[0], 4);
  EXPECT_EQ(C[1], 5);
  EXPECT_EQ(C[2], 10);
  EXPECT_EQ(C[3], 11);
}

TEST(GemmEngine, InvalidArgumentsNameTheArgumentAndWriteNothing) {
  std::vector<float> A(100, 1), B(100, 1), C(100, 7);
  auto expect_arg = [&](const char* name, auto&& call) {
    test::expect_argument_error(name, call);
    for (float c : C) ASSERT_EQ(c, 7.0f);
  };
  Handle h;
  expect_arg("m", [&] { gemm<float>(h, Op::N, Op::N, -1, 2, 2, 1, A.data(), 2, B.data(), 2, 0, C.data(), 2); });
  expect_arg("n", [&] { gemm<float>(h, Op::N, Op::N, 2, -1, 2, 1, A.data(), 2, B.data(), 2, 0, C.data(), 2); });
  expect_arg("k", [&] { gemm<float>(h, Op::N, Op::N, 2, 2, -1, 1, A.data(), 2, B.data(), 2, 0, C.data(), 2); });
  expect_arg("lda", [&] { gemm<float>(h, Op::N, Op::N, 4, 2, 2, 1, A.data(), 3, B.data(), 2, 0, C.data(), 4); });
  expect_arg("ldb", [&] { gemm<float>(h, Op::N, Op::T, 2, 4, 2, 1, A.data(), 2, B.data(), 3, 0, C.data(), 2); });
  expect_arg("ldc", [&] { gemm<float>(h, Op::N, Op::N, 4, 2, 2, 1, A.data(), 4, B.data(), 2, 0, C.data(), 3); });
  expect_arg("transa", [&] { gemm<float>(h, Op('X'), Op::N, 2, 2, 2, 1, A.data(), 2, B.data(), 2, 0, C.data(), 2); });
}
