// gemm_ex with bf16/f16 inputs equals the f32 GEMM of the exactly widened inputs (bitwise:
// same kernels, same order), on every ISA path and thread count, except bf16 where the CPU has a
// native dot-product kernel (AVX512_BF16): that one is held to the exact products' sum within
// f32 accumulation error, bitwise the same for any thread count, and its flushing of subnormal
// inputs is pinned. The integer forms are exact; invalid types are rejected.
#include <gtest/gtest.h>

#include <climits>
#include <limits>
#include <cmath>
#include <cstring>
#include <tuple>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/peak.hpp"
#include "strata/core/status.hpp"

using namespace strata;
using namespace strata::blas;

// Whether gemm_ex runs bf16 on AMX's tiles for this ISA path (kernel_registry.cpp).
bool amx_bf16(Isa isa) {
  return isa == Isa::avx512 && cpu_features().amx_bf16 && cpu_features().avx512_bf16 && amx_ready();
}

// Whether gemm_ex runs bf16 on a native kernel for this ISA path: AMX, or the dot-product
// instruction where it measured faster than widening (kernel_registry.cpp).
bool native_bf16(Isa isa) {
  return amx_bf16(isa) || (isa == Isa::avx512 && cpu_features().avx512_bf16 && bf16_dot_speedup() >= 1.25);
}

// Random narrow values in [-2, 2) and their exact widening to f32.
template <class N>
void random_narrow(std::mt19937& rng, std::vector<N>& x, std::vector<float>& widened) {
  std::uniform_real_distribution<float> d(-2, 2);
  widened.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = N(d(rng)), widened[i] = x[i].to_float();
}

template <class N>
void check_narrow(DType t) {
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    if (t == DType::bf16 && native_bf16(isa)) continue;  // Bf16NativeKernel* below
    for (int threads : {1, 2})
      for (Op ta : {Op::N, Op::T})
        for (Op tb : {Op::N, Op::T})
          // Few rows over a long depth and an edge panel (B's column panels widened one by one
          // and read as an f32 B in place: Mainloop::widen_b), in one or more k blocks; a B past
          // L2 (5 MB) widened a line of every column at a time, a k block's tail included.
          for (auto [m, n, k] : {std::tuple{37, 23, 51}, std::tuple{200, 9, 300}, std::tuple{5, 300, 17},
                                 std::tuple{16, 50, 2500}, std::tuple{30, 26, 700}, std::tuple{8, 1200, 2100}}) {
            // B inside a larger matrix (ldb past its depth or width).
            const index_t lda = ta == Op::N ? m : k, ldb = (tb == Op::N ? k : n) + 3;
            std::mt19937 rng(5);
            std::vector<N> A(size_t(m * k)), B(size_t(ldb * (tb == Op::N ? n : k)));
            std::vector<float> Af, Bf;
            random_narrow(rng, A, Af);
            random_narrow(rng, B, Bf);
            // Subnormals, infinities and NaNs (a signalling one too) widen to the decoder's bits
            // on every packing path (F16C's conversion included).
            const uint16_t specials[] = {0x0001, 0x03ff, 0x8001, 0x7c00, 0xfc00, 0x7e00, 0x7d01};
            for (size_t s = 0; s < std::size(specials); ++s)
              for (auto* x : {&A, &B}) {
                auto& v = *x;
                const size_t at = (s * 7919 + 13) % v.size();
                v[at].bits = specials[s];
                (x == &A ? Af : Bf)[at] = v[at].to_float();
              }
            std::vector<float> C1(size_t(m * n), 1.0f), C2 = C1;
            Handle h;
            h.set_isa(isa);
            h.set_num_threads(threads);
            gemm_ex(h, ta, tb, m, n, k, 0.5f, A.data(), t, lda, B.data(), t, ldb, 2.0f, C1.data(), m);
            gemm<float>(h, ta, tb, m, n, k, 0.5f, Af.data(), lda, Bf.data(), ldb, 2.0f, C2.data(), m);
            // Bitwise, except that which NaN payload survives a sum may depend on the
            // instruction's operand order: NaNs need only match NaNs.
            for (size_t i = 0; i < C1.size(); ++i)
              if (std::isnan(C1[i]) || std::isnan(C2[i]))
                ASSERT_TRUE(std::isnan(C1[i]) && std::isnan(C2[i])) << dtype_name(t) << " i=" << i;
              else
                ASSERT_EQ(0, std::memcmp(&C1[i], &C2[i], sizeof(float)))
                    << dtype_name(t) << " isa=" << isa_name(isa) << " m=" << m << " tb=" << int(tb) << " i=" << i;
          }
  }
}

TEST(GemmEx, Bf16EqualsF32OfWidenedInputs) { check_narrow<bf16>(DType::bf16); }

// The native kernel against the exact sum of products (double): |C - exact| within the f32
// accumulation bound (k + 2) u (|alpha| sum |a b| + |beta c|), u = 2^-24, over edge tiles, odd
// depths, several k blocks and every transpose; 1 and 2 threads bitwise alike. alpha 1 with
// beta 0 or 1 too: the AMX kernel keeps C in its tiles then (else it combines through a buffer).
// (20 x 300 x 1500 is large enough for AMX's B-in-place route to split its panels between two
// threads.) Small NN and TN products that are one block of the mainloop's run on one thread
// without its set-up (Mainloop::run_one_block), on two, where they make 0.5 MFLOP or more (64^3
// to 40 x 20 x 330: ragged rows on copied and half-height tiles, exact column edges), as the
// mainloop's two parts: the bits must agree.
TEST(GemmEx, Bf16NativeKernelIsAccurateAndDeterministic) {
  if (!isa_supported(Isa::avx512) || !native_bf16(Isa::avx512)) GTEST_SKIP() << "no AVX512_BF16 kernel here";
  for (Op ta : {Op::N, Op::T})
    for (Op tb : {Op::N, Op::T})
      for (auto [m, n, k] : {std::tuple{37, 23, 51}, std::tuple{200, 9, 300}, std::tuple{5, 300, 17},
                             std::tuple{64, 48, 2001}, std::tuple{1, 1, 1}, std::tuple{33, 13, 2},
                             std::tuple{96, 25, 16}, std::tuple{70, 130, 33}, std::tuple{20, 70, 45},
                             std::tuple{32, 64, 96}, std::tuple{20, 300, 1500}, std::tuple{64, 64, 64},
                             std::tuple{96, 40, 128}, std::tuple{128, 36, 64}, std::tuple{16, 100, 200},
                             std::tuple{40, 20, 330}}) {
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> d(-2, 2);
        std::vector<bf16> A(size_t(m * k)), B(size_t(k * n));
        for (auto& x : A) x = bf16(d(rng));
        for (auto& x : B) x = bf16(d(rng));
        const index_t lda = ta == Op::N ? m : k, ldb = tb == Op::N ? k : n;
        auto a = [&](index_t i, index_t l) { return double(A[size_t(ta == Op::N ? i + l * lda : l + i * lda)].to_float()); };
        auto b = [&](index_t l, index_t j) { return double(B[size_t(tb == Op::N ? l + j * ldb : j + l * ldb)].to_float()); };
        std::vector<float> C0(size_t(m * n));
        for (auto& x : C0) x = d(rng);
        for (auto [alpha, beta] : {std::pair{0.75f, -1.5f}, std::pair{1.0f, 0.0f}, std::pair{1.0f, 1.0f}}) {
        std::vector<float> C[2] = {C0, C0};
        for (int threads : {1, 2}) {
          Handle h;
          h.set_isa(Isa::avx512);
          h.set_num_threads(threads);
          gemm_ex(h, ta, tb, m, n, k, alpha, A.data(), DType::bf16, lda, B.data(), DType::bf16, ldb, beta,
                  C[threads - 1].data(), m);
        }
        ASSERT_EQ(0, std::memcmp(C[0].data(), C[1].data(), sizeof(float) * C[0].size())) << m << "x" << n << "x" << k;
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < m; ++i) {
            double exact = 0, size = 0;
            for (index_t l = 0; l < k; ++l) exact += a(i, l) * b(l, j), size += std::abs(a(i, l) * b(l, j));
            const double c0 = C0[size_t(i + j * m)];
            const double want = alpha * exact + beta * c0;
            const double bound = double(k + 2) * 0x1p-24 * (std::abs(alpha) * size + std::abs(beta * c0)) + 1e-30;
            ASSERT_LE(std::abs(C[0][size_t(i + j * m)] - want), bound)
                << m << "x" << n << "x" << k << " ta=" << char(ta) << " tb=" << char(tb) << " i=" << i << " j=" << j
                << " alpha=" << alpha << " beta=" << beta;
          }
        }
      }
}

// bf16 operands A (m x k values) and B (k rows in columns ldb apart, n of them) from one seed,
// with their widened values.
struct Bf16Operands {
  std::vector<bf16> a, b;
  std::vector<float> af, bf;
};
static Bf16Operands bf16_operands(unsigned seed, index_t m, index_t n, index_t k, index_t ldb) {
  std::mt19937 rng(seed);
  Bf16Operands o{std::vector<bf16>(size_t(m * k)), std::vector<bf16>(size_t(ldb * n)), {}, {}};
  random_narrow(rng, o.a, o.af);
  random_narrow(rng, o.b, o.bf);
  return o;
}

// Full 32 x 12 tiles in one k block on packed B: each lane adds its products in depth order, one
// rounding each, as the f32 kernel does (pairs packed with the earlier depth in the high half,
// which the instruction adds first), so normal-range inputs give the widened route's bits.
// B's odd leading dimension keeps it off the in-place route (next test). A transposed B
// (NT) of 1200 columns packs its 12-column panels eight at a time (a block beyond 64 KB:
// Bf16PairOperandOf::pack), the last group of four panels.
// (AMX adds each tile product's pairs in an order of its own: held to the bound above only.)
TEST(GemmEx, Bf16NativeKernelFullTilesMatchTheWidenedRoute) {
  if (!isa_supported(Isa::avx512) || !native_bf16(Isa::avx512)) GTEST_SKIP() << "no AVX512_BF16 kernel here";
  if (amx_bf16(Isa::avx512)) GTEST_SKIP() << "bf16 runs on AMX here";
  for (auto [tb, m, n, k] : {std::tuple{Op::N, 64, 24, 200}, std::tuple{Op::T, 64, 1200, 200}}) {
    const index_t ldb = tb == Op::N ? k + 1 : n + 1;
    const auto [A, B, Af, Bf] = bf16_operands(3, m, tb == Op::N ? n : k, k, ldb);
    for (Op ta : {Op::N, Op::T}) {
      const index_t lda = ta == Op::N ? m : k;
      std::vector<float> C1(size_t(m * n)), C2(C1.size());
      Handle h;
      h.set_isa(Isa::avx512);
      gemm_ex(h, ta, tb, m, n, k, 1.0f, A.data(), DType::bf16, lda, B.data(), DType::bf16, ldb, 0.0f, C1.data(), m);
      gemm<float>(h, ta, tb, m, n, k, 1.0f, Af.data(), lda, Bf.data(), ldb, 0.0f, C2.data(), m);
      ASSERT_EQ(0, std::memcmp(C1.data(), C2.data(), sizeof(float) * C1.size())) << char(ta) << char(tb);
    }
  }
}

// Few rows over a B whose columns hold their depth contiguously (even leading dimension and
// depth) read B's pairs where they lie: each lane adds a pair's later product first (depth 1,
// 0, 3, 2, ...), A's pairs packed to match. Against that order emulated in f32 (products of two
// bf16 are exact), bitwise, over ragged rows and columns (in-place edge kernels), NN and TN, one
// k block; and 2 threads give 1 thread's bits. Pairing A's halves the other way round than B's
// gives products of mismatched depths, far off.
TEST(GemmEx, Bf16FewRowsReadBsPairsInPlaceLaterProductFirst) {
  if (!isa_supported(Isa::avx512) || !native_bf16(Isa::avx512)) GTEST_SKIP() << "no AVX512_BF16 kernel here";
  if (amx_bf16(Isa::avx512)) GTEST_SKIP() << "bf16 runs on AMX here";
  const index_t m = 40, n = 29;
  for (index_t k : {64, 70}) {  // 70: A's last depth-adjacent slots past the 16-value groups
    const index_t ldb = k + 2;
    const auto [A, B, Af, Bf] = bf16_operands(5, m, n, k, ldb);
    for (Op ta : {Op::N, Op::T}) {
      const index_t lda = ta == Op::N ? m : k;
      std::vector<float> opa(size_t(m * k));  // op(A), column-major m x k
      for (index_t p = 0; p < k; ++p)
        for (index_t i = 0; i < m; ++i)
          opa[size_t(i + p * m)] = ta == Op::N ? Af[size_t(i + p * lda)] : Af[size_t(p + i * lda)];
      std::vector<float> C(size_t(m * n), 7.0f), C2(C.size(), 7.0f);
      Handle h;
      h.set_isa(Isa::avx512);
      h.set_num_threads(1);
      gemm_ex(h, ta, Op::N, m, n, k, 1.0f, A.data(), DType::bf16, lda, B.data(), DType::bf16, ldb, 0.0f, C.data(), m);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
          float acc = 0.0f;
          for (index_t q = 0; q < k / 2; ++q) {
            acc += opa[size_t(i + (2 * q + 1) * m)] * Bf[size_t(2 * q + 1 + j * ldb)];
            acc += opa[size_t(i + 2 * q * m)] * Bf[size_t(2 * q + j * ldb)];
          }
          ASSERT_EQ(C[size_t(i + j * m)], acc) << "k=" << k << " ta=" << char(ta) << " i=" << i << " j=" << j;
        }
      h.set_num_threads(2);
      gemm_ex(h, ta, Op::N, m, n, k, 1.0f, A.data(), DType::bf16, lda, B.data(), DType::bf16, ldb, 0.0f, C2.data(), m);
      ASSERT_EQ(0, std::memcmp(C.data(), C2.data(), sizeof(float) * C.size())) << "ta=" << char(ta);
    }
  }
}

// The instruction treats subnormal bf16 inputs as zero (and flushes subnormal f32 results), as
// gemm_ex's documentation says; infinities still propagate.
TEST(GemmEx, Bf16NativeKernelFlushesSubnormalInputsAndKeepsInfinities) {
  if (!isa_supported(Isa::avx512) || !native_bf16(Isa::avx512)) GTEST_SKIP() << "no AVX512_BF16 kernel here";
  const index_t m = 40, n = 13, k = 9;
  std::vector<bf16> A(size_t(m * k), bf16(0.0f)), B(size_t(k * n), bf16(1.0f));
  A[size_t(3 + 4 * m)] = bf16::from_bits(0x0001);  // 2^-133: times B's 2^127 would be 2^-6
  B[size_t(4 + 2 * k)] = bf16(0x1p127f);
  A[size_t(7 + 1 * m)] = bf16(std::numeric_limits<float>::infinity());
  std::vector<float> C(size_t(m * n), 5.0f);
  Handle h;
  h.set_isa(Isa::avx512);
  gemm_ex(h, Op::N, Op::N, m, n, k, 1.0f, A.data(), DType::bf16, m, B.data(), DType::bf16, k, 0.0f, C.data(), m);
  EXPECT_EQ(C[size_t(3 + 2 * m)], 0.0f) << "a subnormal bf16 input counts as zero";
  for (index_t j = 0; j < n; ++j) EXPECT_TRUE(std::isinf(C[size_t(7 + j * m)])) << j;
  EXPECT_EQ(C[size_t(8 + 5 * m)], 0.0f);
}

// Operands inside larger matrices (leading dimensions past their rows), the gaps holding NaN:
// only the operands' own values may reach C. A packer stepping between columns by the row
// count instead of the leading dimension, or filling a half pair slot (odd depth) from past k,
// puts NaN or wrong values in C (the second checked: this test then fails). Every op pair, odd
// depths, partial 16-row groups and 12-column panels; on AMX, products of at most 32 rows read B
// in place (a depth group past k, or a column past n, would bring NaN in).
TEST(GemmEx, Bf16NativeKernelReadsOnlyTheOperandInsideLargerMatrices) {
  if (!isa_supported(Isa::avx512) || !native_bf16(Isa::avx512)) GTEST_SKIP() << "no AVX512_BF16 kernel here";
  const bf16 nan = bf16(std::numeric_limits<float>::quiet_NaN());
  for (Op ta : {Op::N, Op::T})
    for (Op tb : {Op::N, Op::T})
      for (auto [m, n, k] : {std::tuple{37, 23, 51}, std::tuple{5, 14, 34}, std::tuple{70, 9, 17},
                             std::tuple{20, 70, 45}, std::tuple{32, 64, 96}}) {
        const index_t a_rows = ta == Op::N ? m : k, a_cols = ta == Op::N ? k : m;
        const index_t b_rows = tb == Op::N ? k : n, b_cols = tb == Op::N ? n : k;
        const index_t lda = a_rows + 7, ldb = b_rows + 5;
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> d(-2, 2);
        std::vector<bf16> A(size_t(lda * a_cols + 32), nan), B(size_t(ldb * b_cols + 32), nan);
        for (index_t j = 0; j < a_cols; ++j)
          for (index_t i = 0; i < a_rows; ++i) A[size_t(i + j * lda)] = bf16(d(rng));
        for (index_t j = 0; j < b_cols; ++j)
          for (index_t i = 0; i < b_rows; ++i) B[size_t(i + j * ldb)] = bf16(d(rng));
        auto a = [&](index_t i, index_t l) { return double(A[size_t(ta == Op::N ? i + l * lda : l + i * lda)].to_float()); };
        auto b = [&](index_t l, index_t j) { return double(B[size_t(tb == Op::N ? l + j * ldb : j + l * ldb)].to_float()); };
        std::vector<float> C(size_t(m * n), 0.0f);
        Handle h;
        h.set_isa(Isa::avx512);
        gemm_ex(h, ta, tb, m, n, k, 1.0f, A.data(), DType::bf16, lda, B.data(), DType::bf16, ldb, 0.0f, C.data(), m);
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < m; ++i) {
            double exact = 0, size = 0;
            for (index_t l = 0; l < k; ++l) exact += a(i, l) * b(l, j), size += std::abs(a(i, l) * b(l, j));
            ASSERT_LE(std::abs(C[size_t(i + j * m)] - exact), double(k + 2) * 0x1p-24 * size + 1e-30)
                << m << "x" << n << "x" << k << " ta=" << char(ta) << " tb=" << char(tb) << " i=" << i << " j=" << j;
          }
      }
}

// B's last byte is the last of a page whose successor is inaccessible: a read past B (a masked
// load done wide, a depth group or a column past the operand read in place, as AMX's few-row
// products do) faults. Every ISA path, both op(B), bf16 and int8, depths and column counts
// that leave partial groups and panels.
TEST(GemmEx, KernelsReadNothingPastTheEndOfB) {
  const long page = sysconf(_SC_PAGESIZE);
  const size_t bytes = size_t(page) * 64;
  void* region = mmap(nullptr, bytes + size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(region) + bytes, size_t(page), PROT_NONE), 0);
  char* end = static_cast<char*>(region) + bytes;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    Handle h;
    h.set_isa(isa);
    for (Op tb : {Op::N, Op::T})
      for (auto [m, n, k] : {std::tuple{20, 70, 45}, std::tuple{5, 300, 17}, std::tuple{32, 64, 96},
                             std::tuple{20, 70, 200}, std::tuple{32, 40, 201}}) {
        const index_t ldb = tb == Op::N ? k : n;
        std::vector<float> C(size_t(m * n));
        std::vector<bf16> A(size_t(m * k), bf16(1.0f));
        bf16* B = reinterpret_cast<bf16*>(end) - k * n;
        std::fill(B, B + k * n, bf16(0.5f));
        gemm_ex(h, Op::N, tb, m, n, k, 1.0f, A.data(), DType::bf16, m, B, DType::bf16, ldb, 0.0f, C.data(), m);
        EXPECT_EQ(C.back(), 0.5f * float(k)) << "bf16 " << m << "x" << n << "x" << k << " isa=" << isa_name(isa);
        std::vector<int32_t> Ci(size_t(m * n));
        std::vector<uint8_t> Au(size_t(m * k), 3);
        int8_t* Bi = reinterpret_cast<int8_t*>(end) - k * n;
        std::fill(Bi, Bi + k * n, int8_t(-2));
        gemm_ex(h, Op::N, tb, m, n, k, int32_t(1), Au.data(), DType::u8, m, Bi, DType::i8, ldb, int32_t(0), Ci.data(),
                m);
        EXPECT_EQ(Ci.back(), -6 * k) << "u8 " << m << "x" << n << "x" << k << " isa=" << isa_name(isa);
      }
  }
  munmap(region, bytes + size_t(page));
}

TEST(GemmEx, F16EqualsF32OfWidenedInputs) { check_narrow<f16>(DType::f16); }

template <class A>
void check_integer(DType a_type, A lo, A hi) {
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    for (int threads : {1, 2})
      for (Op ta : {Op::N, Op::T})
        for (Op tb : {Op::N, Op::T})
          for (auto [m, n, k] :
               {std::tuple{17, 9, 1100}, std::tuple{40, 33, 513}, std::tuple{3, 70, 5}, std::tuple{64, 50, 67},
                std::tuple{32, 40, 200}, std::tuple{24, 200, 2000}, std::tuple{70, 33, 2500},
                std::tuple{100, 20, 300}, std::tuple{48, 30, 1604}, std::tuple{130, 40, 600},
                std::tuple{600, 61, 40}, std::tuple{29, 35, 77}}) {
            // B inside a larger matrix (4 past its depth or width): an NN product with whole
            // quads and rows within one A block reads B's columns in place (QuadColumnsOperand),
            // k blocks included; 130 x 40 x 600 runs four full row tiles on three full column
            // panels of it (the in-place kernel's column bases) and the edges. A transposed B is
            // packed up to four 12-column panels a pass: per group just before its tiles where
            // one A block holds all rows (n 200 = four groups and 8 columns, 70 = 48 + 22), for
            // the whole block at once past 16 row tiles (600 x 61: a last group of 13 columns).
            // Edge widths: every one of the narrower kernels' covers (n mod 12 and mod 6 from 1
            // to 11: 35 is 24 + 8 + 3, and 30 + 4 + 1 on AVX2's 6-wide tile).
            const index_t lda = ta == Op::N ? m : k, ldb = (tb == Op::N ? k : n) + 4;
            std::mt19937 rng(9);
            std::vector<A> Av(size_t(m * k));
            std::vector<int8_t> Bv(size_t(ldb * (tb == Op::N ? n : k)));
            // Half the entries at the extremes, to test exactness of the f32 path.
            for (auto& v : Av) v = rng() % 2 ? (rng() % 2 ? lo : hi) : A(int(lo) + int(rng() % (int(hi) - int(lo) + 1)));
            for (auto& v : Bv) v = rng() % 2 ? (rng() % 2 ? int8_t(-128) : int8_t(127)) : int8_t(int(rng() % 256) - 128);
            std::vector<int32_t> C(size_t(m * n));
            for (auto& v : C) v = int32_t(rng() % 2001) - 1000;
            const std::vector<int32_t> C0 = C;
            // alpha 1 with beta 0 or 1 too: the AMX kernel keeps C in its tiles then (over two
            // k blocks at 70 x 33 x 2500: AMX's int8 kc is 2048 on a 2 MB L2; 100 x 20 x 300
            // reads a small B in place past 64 rows).
            for (auto [alpha, beta] : {std::pair{3, -2}, std::pair{1, 0}, std::pair{1, 1}}) {
              C = C0;
              Handle h;
              h.set_isa(isa);
              h.set_num_threads(threads);
              gemm_ex(h, ta, tb, m, n, k, alpha, Av.data(), a_type, lda, Bv.data(), DType::i8, ldb, beta, C.data(), m);
              for (index_t j = 0; j < n; ++j)
                for (index_t i = 0; i < m; ++i) {
                  int64_t acc = 0;
                  for (index_t l = 0; l < k; ++l)
                    acc += int64_t(ta == Op::N ? Av[size_t(i + l * lda)] : Av[size_t(l + i * lda)]) *
                           int64_t(tb == Op::N ? Bv[size_t(l + j * ldb)] : Bv[size_t(j + l * ldb)]);
                  const int64_t want = alpha * acc + beta * int64_t(C0[size_t(i + j * m)]);
                  ASSERT_EQ(C[size_t(i + j * m)], int32_t(uint32_t(uint64_t(want))))
                      << dtype_name(a_type) << " isa=" << isa_name(isa) << " i=" << i << " j=" << j << " k=" << k
                      << " alpha=" << alpha << " beta=" << beta;
                }
            }
          }
  }
}

TEST(GemmEx, U8xS8ToS32IsExact) { check_integer<uint8_t>(DType::u8, 0, 255); }
// 7-bit u8 A takes the byte-quad kernel (vpmaddubsw) where the ISA has one: exact as well.
TEST(GemmEx, SevenBitU8xS8ToS32IsExact) { check_integer<uint8_t>(DType::u8, 0, 127); }
TEST(GemmEx, S8xS8ToS32IsExact) { check_integer<int8_t>(DType::i8, -128, 127); }

// One row of otherwise 7-bit A holds 255, 255 at adjacent depths: the byte-quad kernel would
// saturate there (255 * 127 * 2 > 2^15), so the range scan must see it wherever it lies (inside
// its 8-byte words or in a row's tail), for either orientation of A.
TEST(GemmEx, SevenBitScanSeesAnyHighByte) {
  const index_t m = 21, n = 5, k = 10;
  for (Op ta : {Op::N, Op::T})
    for (index_t row : {0, 3, 20}) {
      const index_t lda = ta == Op::N ? m : k;
      std::vector<uint8_t> A(size_t(m * k), 1);
      auto at = [&](index_t i, index_t l) -> uint8_t& { return A[size_t(ta == Op::N ? i + l * lda : l + i * lda)]; };
      at(row, 4) = at(row, 5) = 255;
      const std::vector<int8_t> B(size_t(k * n), 127);
      std::vector<int32_t> C(size_t(m * n));
      gemm_ex(Handle{}, ta, Op::N, m, n, k, int32_t(1), A.data(), DType::u8, lda, B.data(), DType::i8, k, int32_t(0),
              C.data(), m);
      for (index_t i = 0; i < m; ++i)
        ASSERT_EQ(C[size_t(i)], i == row ? (8 + 2 * 255) * 127 : 10 * 127) << "row " << row << " i " << i;
    }
}

// Integer operands inside larger matrices (leading dimensions past their rows), the gaps
// holding 100: a packer stepping between columns by the row count, or reading depth or
// columns past the operand (the AMX packers' masked loads), puts them into C. Every ISA path,
// op pair, both A types; depths not a multiple of 4 or 64, column counts not a multiple of 8.
TEST(GemmEx, IntegerKernelsReadOnlyTheOperandInsideLargerMatrices) {
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    for (DType a_type : {DType::u8, DType::i8})
      for (Op ta : {Op::N, Op::T})
        for (Op tb : {Op::N, Op::T})
          // (From the fourth on large enough for the AMX kernel where there is one; the last two
          // have at most 32 rows, so it reads B in place, a depth group or column past B's own
          // bringing the gaps' values in.)
          for (auto [m, n, k] : {std::tuple{37, 23, 71}, std::tuple{5, 14, 34}, std::tuple{70, 9, 130},
                                 std::tuple{70, 45, 130}, std::tuple{33, 37, 201}, std::tuple{20, 70, 200},
                                 std::tuple{32, 64, 128}}) {
            const index_t a_rows = ta == Op::N ? m : k, a_cols = ta == Op::N ? k : m;
            const index_t b_rows = tb == Op::N ? k : n, b_cols = tb == Op::N ? n : k;
            const index_t lda = a_rows + 7, ldb = b_rows + 5;
            std::mt19937 rng(13);
            std::vector<uint8_t> A(size_t(lda * a_cols + 64), 100);
            std::vector<int8_t> B(size_t(ldb * b_cols + 64), 100);
            for (index_t j = 0; j < a_cols; ++j)
              for (index_t i = 0; i < a_rows; ++i)
                A[size_t(i + j * lda)] = uint8_t(a_type == DType::u8 ? rng() % 256 : rng() % 256 - 128);
            for (index_t j = 0; j < b_cols; ++j)
              for (index_t i = 0; i < b_rows; ++i) B[size_t(i + j * ldb)] = int8_t(int(rng() % 256) - 128);
            auto a = [&](index_t i, index_t l) {
              const uint8_t x = A[size_t(ta == Op::N ? i + l * lda : l + i * lda)];
              return a_type == DType::u8 ? int64_t(x) : int64_t(int8_t(x));
            };
            auto b = [&](index_t l, index_t j) { return int64_t(B[size_t(tb == Op::N ? l + j * ldb : j + l * ldb)]); };
            std::vector<int32_t> C(size_t(m * n), 0);
            Handle h;
            h.set_isa(isa);
            gemm_ex(h, ta, tb, m, n, k, int32_t(1), A.data(), a_type, lda, B.data(), DType::i8, ldb, int32_t(0),
                    C.data(), m);
            for (index_t j = 0; j < n; ++j)
              for (index_t i = 0; i < m; ++i) {
                int64_t want = 0;
                for (index_t l = 0; l < k; ++l) want += a(i, l) * b(l, j);
                ASSERT_EQ(C[size_t(i + j * m)], want) << dtype_name(a_type) << " isa=" << isa_name(isa) << " " << m
                                                      << "x" << n << "x" << k << " ta=" << char(ta)
                                                      << " tb=" << char(tb) << " i=" << i << " j=" << j;
              }
          }
  }
}

TEST(GemmEx, IntegerBetaZeroDoesNotReadC) {
  const int8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
  int32_t C[4] = {INT32_MIN, INT32_MAX, 77, -5};
  gemm_ex(Handle{}, Op::N, Op::N, 2, 2, 2, int32_t(1), a, DType::i8, 2, b, DType::i8, 2, int32_t(0), C, 2);
  EXPECT_EQ(C[0], 1);
  EXPECT_EQ(C[3], 4);
}

TEST(GemmEx, RejectsBadTypes) {
  float C[4] = {};
  int32_t Ci[4] = {};
  int8_t a[4] = {}, b[4] = {};
  try {
    gemm_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1.0f, a, DType::i8, 2, b, DType::i8, 2, 0.0f, C, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "a_type");
  }
  uint8_t ua[4] = {};
  try {
    gemm_ex(Handle{}, Op::N, Op::N, 2, 2, 2, int32_t(1), a, DType::i8, 2, ua, DType::u8, 2, int32_t(0), Ci, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "b_type");
  }
  bf16 x[4];
  f16 y[4];
  try {
    gemm_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1.0f, x, DType::bf16, 2, y, DType::f16, 2, 0.0f, C, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "b_type");
  }
}
