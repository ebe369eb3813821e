// gemm_strided_batched_ex and gemm_batched_ex: every entry of a batch is bitwise the gemm_ex
// call on that entry (gemm_ex itself is tested against references in test_gemm_ex.cpp), on
// every ISA path and thread count, for each input type, both storage orders, strided (with
// gaps, and a stride of 0 repeating an operand) and pointer-array batches, entries divided
// among the threads or not; bad arguments are rejected before any C is written.
#include <gtest/gtest.h>

#include "support/expect_error.hpp"

#include <cstdint>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "strata/blas/gemm_ex.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/log.hpp"
#include "strata/core/status.hpp"

using namespace strata;
using namespace strata::blas;

namespace {

// Random inputs of the stored type: small integers (exact in every type) for the float forms,
// the full range for the integer ones.
void fill(std::mt19937& rng, DType t, std::vector<uint8_t>& bytes) {
  auto* p = bytes.data();
  const size_t n = bytes.size() / dtype_info(t).size;
  for (size_t i = 0; i < n; ++i) {
    const float v = float(int(rng() % 9) - 4) * 0.5f;
    if (t == DType::f32) reinterpret_cast<float*>(p)[i] = v;
    else if (t == DType::bf16) reinterpret_cast<bf16*>(p)[i] = bf16(v);
    else if (t == DType::f16) reinterpret_cast<f16*>(p)[i] = f16(v);
    else p[i] = uint8_t(rng());
  }
}

struct Case {
  DType a_type, b_type;
  bool integer() const { return a_type == DType::u8 || a_type == DType::i8; }
};

// Runs one batch (strided or through pointer arrays) and the same entries one gemm_ex at a time
// on copies of C, and compares every element of C (gaps between entries included) bitwise.
template <class C>
void check_batch(const Handle& h, Case t, Order order, Op ta, Op tb, index_t m, index_t n, index_t k, C alpha, C beta,
                 index_t count, bool arrays, bool repeat_a) {
  std::mt19937 rng(uint32_t(m * 131 + n * 17 + k + count));
  const size_t ea = dtype_info(t.a_type).size, eb = dtype_info(t.b_type).size;
  const bool col = order == Order::col_major;
  const index_t a_rows = (ta == Op::N) == col ? m : k, a_cols = (ta == Op::N) == col ? k : m;
  const index_t b_rows = (tb == Op::N) == col ? k : n, b_cols = (tb == Op::N) == col ? n : k;
  const index_t c_rows = col ? m : n, c_cols = col ? n : m;
  const index_t lda = a_rows + 3, ldb = b_rows + 1, ldc = c_rows + 2;
  const index_t sa = repeat_a ? 0 : lda * a_cols + 5, sb = ldb * b_cols + 9, sc = ldc * c_cols + 4;
  std::vector<uint8_t> A(size_t(sa * (count - 1) + lda * a_cols) * ea), B(size_t(sb * count) * eb);
  fill(rng, t.a_type, A);
  fill(rng, t.b_type, B);
  std::vector<C> Cb(size_t(sc * count));
  for (auto& v : Cb) v = C(int(rng() % 7) - 3);
  std::vector<C> Cs = Cb;
  const uint8_t* a0 = A.data();
  const uint8_t* b0 = B.data();
  auto a_at = [&](index_t i) { return a0 + size_t(i * sa) * ea; };
  auto b_at = [&](index_t i) { return b0 + size_t(i * sb) * eb; };
  // Pointer arrays name the entries in reverse order of memory.
  std::vector<const void*> ap, bp;
  std::vector<C*> cp;
  for (index_t i = count - 1; i >= 0; --i) {
    ap.push_back(a_at(i)), bp.push_back(b_at(i)), cp.push_back(&Cb[size_t(i * sc)]);
  }
  if constexpr (std::is_same_v<C, int32_t>) {
    if (arrays)
      gemm_batched_ex(h, ta, tb, m, n, k, alpha, ap.data(), t.a_type, lda, bp.data(), t.b_type, ldb, beta, cp.data(),
                      ldc, count);
    else
      gemm_strided_batched_ex(h, ta, tb, m, n, k, alpha, a0, t.a_type, lda, sa, b0, t.b_type, ldb, sb, beta,
                              Cb.data(), ldc, sc, count);
    for (index_t i = 0; i < count; ++i)
      gemm_ex(h, ta, tb, m, n, k, alpha, a_at(i), t.a_type, lda, b_at(i), t.b_type, ldb, beta, &Cs[size_t(i * sc)],
              ldc);
  } else {
    if (arrays)
      gemm_batched_ex(h, order, ta, tb, m, n, k, alpha, ap.data(), t.a_type, lda, bp.data(), t.b_type, ldb, beta,
                      cp.data(), ldc, count);
    else
      gemm_strided_batched_ex(h, order, ta, tb, m, n, k, alpha, a0, t.a_type, lda, sa, b0, t.b_type, ldb, sb, beta,
                              Cb.data(), ldc, sc, count);
    for (index_t i = 0; i < count; ++i)
      gemm_ex(h, order, ta, tb, m, n, k, alpha, a_at(i), t.a_type, lda, b_at(i), t.b_type, ldb, beta,
              &Cs[size_t(i * sc)], ldc);
  }
  for (size_t e = 0; e < Cb.size(); ++e)
    ASSERT_EQ(std::memcmp(&Cb[e], &Cs[e], sizeof(C)), 0)
        << dtype_name(t.a_type) << " isa=" << isa_name(h.isa()) << " threads=" << h.num_threads() << " " << m << "x"
        << n << "x" << k << " batch=" << count << (arrays ? " arrays" : " strided") << (repeat_a ? " stride_a=0" : "")
        << (col ? "" : " row-major") << " ta=" << char(ta) << " tb=" << char(tb) << " element " << e
        << " (entry " << e / size_t(sc) << ")";
}

}  // namespace

TEST(GemmExBatched, EveryEntryIsBitwiseItsGemmEx) {
  const Case cases[] = {{DType::f32, DType::f32}, {DType::bf16, DType::bf16}, {DType::f16, DType::f16},
                        {DType::u8, DType::i8}, {DType::i8, DType::i8}};
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    for (int threads : {1, 2}) {
      Handle h;
      h.set_isa(isa);
      h.set_num_threads(threads);
      for (const Case& t : cases)
        // Small entries (divided among the threads; int8 below AMX's size), a shape with edge
        // tiles large enough for AMX, and three large entries (each split among the threads).
        for (auto [m, n, k, count] : {std::tuple{7, 5, 3, 9}, std::tuple{32, 32, 32, 17}, std::tuple{45, 70, 97, 5},
                                      std::tuple{130, 100, 140, 3}})
          for (bool arrays : {false, true}) {
            const bool repeat_a = !arrays && m == 45;
            const Op ta = m == 32 ? Op::T : Op::N, tb = k == 97 ? Op::T : Op::N;
            if (t.integer()) {
              check_batch<int32_t>(h, t, Order::col_major, ta, tb, m, n, k, 1, 0, count, arrays, repeat_a);
              check_batch<int32_t>(h, t, Order::col_major, tb, ta, m, n, k, 3, -2, count, arrays, repeat_a);
            } else {
              check_batch<float>(h, t, Order::col_major, ta, tb, m, n, k, 1.0f, 1.0f, count, arrays, repeat_a);
              check_batch<float>(h, t, Order::row_major, tb, ta, m, n, k, 0.5f, -2.0f, count, arrays, repeat_a);
            }
            if (::testing::Test::HasFatalFailure()) return;
          }
    }
  }
}

// The small products of one 64-byte depth group with op(A) = A and op(B) = B (m and n up to 32)
// run on AMX tiles shaped to them (tile/amx_small_products.hpp), single calls and batch entries
// alike: against an exact reference (bf16 inputs small multiples of 1/2, so every sum is exact
// in f32; integers with wrap-around), with partial tiles of each kind, depths from one slot to a
// whole group, C combined in the tiles (alpha 1, beta 0 or 1) or through a buffer, gaps between
// entries; and each batch bitwise its single calls, its entries divided among the threads or
// not. (On other CPUs the same shapes run on the other kernels, to the same reference.)
template <class C>
void check_small_against_reference(const Handle& h, Case t, index_t m, index_t n, index_t k, C alpha, C beta) {
  std::mt19937 rng(uint32_t(m * 977 + n * 31 + k));
  const index_t count = 5, lda = m + 3, ldb = k + 1, ldc = m + 2;
  const index_t sa = lda * k + 7, sb = ldb * n + 5, sc = ldc * n + 3;
  const size_t ea = dtype_info(t.a_type).size, eb = dtype_info(t.b_type).size;
  std::vector<uint8_t> A(size_t(sa * count) * ea), B(size_t(sb * count) * eb);
  fill(rng, t.a_type, A);
  fill(rng, t.b_type, B);
  auto value = [&](DType type, const std::vector<uint8_t>& v, index_t at) -> double {
    if (type == DType::bf16) return double(reinterpret_cast<const bf16*>(v.data())[at].to_float());
    if (type == DType::u8) return double(v[size_t(at)]);
    return double(int8_t(v[size_t(at)]));
  };
  std::vector<C> Cb(size_t(sc * count));
  for (auto& v : Cb) v = C(int(rng() % 7) - 3);
  const std::vector<C> C0 = Cb;
  gemm_strided_batched_ex(h, Op::N, Op::N, m, n, k, alpha, A.data(), t.a_type, lda, sa, B.data(), t.b_type, ldb, sb,
                          beta, Cb.data(), ldc, sc, count);  // (the int32 or the f32 overload, as C is)
  for (index_t e = 0; e < count; ++e)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < ldc; ++i) {
        const size_t at = size_t(e * sc + i + j * ldc);
        if (i >= m) {  // the gaps inside C's columns: untouched
          ASSERT_EQ(Cb[at], C0[at]);
          continue;
        }
        double sum = 0;
        for (index_t l = 0; l < k; ++l)
          sum += value(t.a_type, A, e * sa + i + l * lda) * value(t.b_type, B, e * sb + l + j * ldb);
        C want;
        if constexpr (std::is_same_v<C, int32_t>)
          want = int32_t(uint32_t(uint64_t(int64_t(alpha) * int64_t(sum) + int64_t(beta) * int64_t(C0[at]))));
        else
          want = C(double(alpha) * sum + double(beta) * double(C0[at]));
        ASSERT_EQ(Cb[at], want) << dtype_name(t.a_type) << " threads=" << h.num_threads() << " " << m << "x" << n
                                << "x" << k << " alpha=" << alpha << " beta=" << beta << " entry " << e << " (" << i
                                << ", " << j << ")";
      }
}

TEST(GemmExBatched, SmallProductsOnShapedTilesMatchTheReference) {
  const Case cases[] = {{DType::u8, DType::i8}, {DType::i8, DType::i8}, {DType::bf16, DType::bf16}};
  for (int threads : {1, 2}) {
    Handle h;
    h.set_num_threads(threads);
    for (auto [m, n] : {std::pair{32, 32}, std::pair{17, 5}, std::pair{16, 16}, std::pair{1, 32}, std::pair{32, 1},
                        std::pair{20, 30}})
      for (const Case& t : cases) {
        const index_t slot = t.integer() ? 4 : 2, group = t.integer() ? 64 : 32;
        for (index_t k : {slot, group / 2 + slot, group}) {
          const bool arrays = k == slot;
          if (t.integer()) {
            for (auto [alpha, beta] : {std::pair{1, 0}, std::pair{1, 1}, std::pair{3, -2}}) {
              check_small_against_reference<int32_t>(h, t, m, n, k, alpha, beta);
              check_batch<int32_t>(h, t, Order::col_major, Op::N, Op::N, m, n, k, alpha, beta, 13, arrays, false);
            }
          } else {
            for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{1.0f, 1.0f}, std::pair{0.5f, -2.0f}}) {
              check_small_against_reference<float>(h, t, m, n, k, alpha, beta);
              check_batch<float>(h, t, Order::col_major, Op::N, Op::N, m, n, k, alpha, beta, 13, arrays, false);
            }
          }
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
  }
}

// u8 x s8 products up to 64 x 128 over depths up to 128 (multiples of 4) with op(A) = A and
// op(B) = B run without the tiled engine on AVX-512 VNNI (tile/vnni_small_products.hpp): row
// blocks of 32 in one or two vectors, partial ones masked, columns in blocks of 16 or 8 with a
// partial last block, full-range bytes, padded leading dimensions, alpha/beta (beta 0 never reads C), single
// calls and batches against the exact reference, each batch bitwise its single calls. Where
// the CPU has VNNI without AMX tiles the trace must name the path. (Elsewhere the same shapes
// run on the other kernels, to the same reference.)
TEST(GemmExBatched, VnniSmallProductsMatchTheReference) {
  const Case u8s8{DType::u8, DType::i8};
  const CpuFeatures& f = cpu_features();
  if (f.avx512_vnni && !(f.amx_int8 && amx_ready()) && Handle().isa() == Isa::avx512) {
    std::vector<uint8_t> A(32 * 8, 200);
    std::vector<int8_t> B(8 * 40, -3);
    std::vector<int32_t> C(32 * 40);
    testing::internal::CaptureStderr();
    set_verbose_level(1);
    gemm_ex(Handle{}, Op::N, Op::N, 32, 40, 8, int32_t(1), A.data(), DType::u8, 32, B.data(), DType::i8, 8, int32_t(0),
            C.data(), 32);
    set_verbose_level(0);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("small products on VNNI"), std::string::npos);
    EXPECT_EQ(C, std::vector<int32_t>(C.size(), -200 * 3 * 8));
  }
  for (int threads : {1, 2}) {
    Handle h;
    h.set_num_threads(threads);
    for (auto [m, n] : {std::pair{1, 1}, std::pair{15, 64}, std::pair{16, 17}, std::pair{17, 8}, std::pair{31, 33},
                        std::pair{32, 64}, std::pair{32, 9}, std::pair{33, 128}, std::pair{48, 100}, std::pair{64, 65}})
      for (index_t k : {4, 12, 68, 128})
        for (auto [alpha, beta] : {std::pair{1, 0}, std::pair{-3, 2}}) {
          check_small_against_reference<int32_t>(h, u8s8, m, n, k, alpha, beta);
          check_batch<int32_t>(h, u8s8, Order::col_major, Op::N, Op::N, m, n, k, alpha, beta, 7, k == 12, false);
          if (::testing::Test::HasFatalFailure()) return;
        }
  }
}

// The last entry's A and B each end where an inaccessible page begins: a read past either (a
// column of A loaded whole, a depth of B past k) faults. Partial tiles and depths, bf16 and int8.
TEST(GemmExBatched, SmallEntriesReadNothingPastTheirOperands) {
  const long page = sysconf(_SC_PAGESIZE);
  const size_t bytes = size_t(page) * 4;
  auto guarded = [&](char*& region) {  // the end of `bytes` readable bytes, an inaccessible page after
    region = static_cast<char*>(
        mmap(nullptr, bytes + size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_EQ(mprotect(region + bytes, size_t(page), PROT_NONE), 0);
    return region + bytes;
  };
  char *ra, *rb;
  char* a_end = guarded(ra);
  char* b_end = guarded(rb);
  const index_t m = 17, n = 5, count = 3;
  for (index_t k : {20, 18}) {
    const bool integer = k == 20;
    const size_t e = integer ? 1 : 2;
    char* A = a_end - size_t(m * k * count) * e;
    char* B = b_end - size_t(k * n * count) * e;
    if (integer) {
      std::fill(A, a_end, char(3)), std::fill(B, b_end, char(-2));
      std::vector<int32_t> C(size_t(m * n * count));
      gemm_strided_batched_ex(Handle{}, Op::N, Op::N, m, n, k, int32_t(1), A, DType::u8, m, m * k, B, DType::i8, k,
                              k * n, int32_t(0), C.data(), m, m * n, count);
      EXPECT_EQ(C, std::vector<int32_t>(C.size(), int32_t(-6 * k)));
    } else {
      std::fill(reinterpret_cast<bf16*>(A), reinterpret_cast<bf16*>(a_end), bf16(1.0f));
      std::fill(reinterpret_cast<bf16*>(B), reinterpret_cast<bf16*>(b_end), bf16(0.5f));
      std::vector<float> C(size_t(m * n * count));
      gemm_strided_batched_ex(Handle{}, Op::N, Op::N, m, n, k, 1.0f, A, DType::bf16, m, m * k, B, DType::bf16, k, k * n,
                              0.0f, C.data(), m, m * n, count);
      EXPECT_EQ(C, std::vector<float>(C.size(), 0.5f * float(k)));
    }
  }
  munmap(ra, bytes + size_t(page));
  munmap(rb, bytes + size_t(page));
}

// alpha 0 or depth 0: every entry's C := beta C (int32 with wrap-around), A and B not read; C's
// gaps between entries untouched.
TEST(GemmExBatched, WithoutAProductEveryEntryIsScaled) {
  for (auto [alpha, k] : {std::pair{0, 4}, std::pair{1, 0}}) {
    std::vector<int32_t> C = {1, 2, 3, 4, 5, 6, 7, 8, INT32_MIN, 9};
    gemm_strided_batched_ex(Handle{}, Op::N, Op::N, 2, 2, k, alpha, nullptr, DType::u8, 2, 0, nullptr, DType::i8,
                            std::max(k, 1), 0, -2, C.data(), 2, 5, 2);
    EXPECT_EQ(C, (std::vector<int32_t>{-2, -4, -6, -8, 5, -12, -14, -16, 0, 9}));
    std::vector<float> F = {1, 2, 3, 4, 5};
    float* Fp[2] = {&F[0], &F[3]};
    const void* none[2] = {nullptr, nullptr};  // the arrays must exist; their entries are not read
    gemm_batched_ex(Handle{}, Op::N, Op::N, 1, 2, k, float(alpha), none, DType::bf16, 1, none, DType::bf16,
                    std::max(k, 1), 0.5f, Fp, 1, 2);
    EXPECT_EQ(F, (std::vector<float>{0.5f, 1, 3, 2, 2.5f}));
  }
}

// A bad argument names itself and leaves every C as it was: a null entry late in the arrays is
// found before the first entry is computed.
TEST(GemmExBatched, RejectsBadArgumentsBeforeWritingAnyC) {
  std::vector<float> A(16, 1.0f), B(16, 1.0f), C(16, 7.0f);
  const void* ap[3] = {A.data(), A.data(), A.data()};
  const void* bp[3] = {B.data(), B.data(), nullptr};
  float* cp[3] = {C.data(), C.data() + 4, C.data() + 8};
  auto expect_error = [&](const char* argument, auto&& call) {
    test::expect_argument_error(argument, call);
    EXPECT_EQ(C, std::vector<float>(16, 7.0f)) << argument;
  };
  expect_error("B", [&] {
    gemm_batched_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1.0f, ap, DType::f32, 2, bp, DType::f32, 2, 0.0f, cp, 2, 3);
  });
  expect_error("A", [&] {
    gemm_batched_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1.0f, nullptr, DType::f32, 2, bp, DType::f32, 2, 0.0f, cp, 2, 3);
  });
  expect_error("batch_count", [&] {
    gemm_strided_batched_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1.0f, A.data(), DType::f32, 2, 4, B.data(), DType::f32,
                            2, 4, 0.0f, C.data(), 2, 4, -1);
  });
  expect_error("ldc", [&] {
    gemm_strided_batched_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1.0f, A.data(), DType::f32, 2, 4, B.data(), DType::f32,
                            2, 4, 0.0f, C.data(), 1, 4, 2);
  });
  expect_error("b_type", [&] {
    gemm_strided_batched_ex(Handle{}, Op::N, Op::N, 2, 2, 2, int32_t(1), A.data(), DType::u8, 2, 4, B.data(),
                            DType::u8, 2, 4, int32_t(0), reinterpret_cast<int32_t*>(C.data()), 2, 4, 2);
  });
  // An empty batch reads nothing, null arrays included.
  gemm_batched_ex(Handle{}, Op::N, Op::N, 2, 2, 2, 1.0f, nullptr, DType::f32, 2, nullptr, DType::f32, 2, 0.0f, nullptr,
                  2, 0);
}
