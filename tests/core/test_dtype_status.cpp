#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "strata/core/dtype.hpp"
#include "strata/core/env.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/status.hpp"
#include "strata/core/timer.hpp"

using namespace strata;

TEST(DType, SizesMatchTheCppTypes) {
  EXPECT_EQ(dtype_size(dtype_of_v<double>), sizeof(double));
  EXPECT_EQ(dtype_size(dtype_of_v<float>), sizeof(float));
  EXPECT_EQ(dtype_size(dtype_of_v<f16>), sizeof(f16));
  EXPECT_EQ(dtype_size(dtype_of_v<bf16>), sizeof(bf16));
  EXPECT_EQ(dtype_size(dtype_of_v<f8e4m3>), 1u);
  EXPECT_EQ(dtype_size(dtype_of_v<f8e5m2>), 1u);
  EXPECT_EQ(dtype_size(dtype_of_v<int8_t>), 1u);
  EXPECT_EQ(dtype_size(dtype_of_v<uint8_t>), 1u);
  EXPECT_EQ(dtype_size(dtype_of_v<int32_t>), 4u);
  EXPECT_EQ(dtype_size(dtype_of_v<std::complex<float>>), 8u);
  EXPECT_EQ(dtype_size(dtype_of_v<std::complex<double>>), 16u);
}

TEST(DType, NamesRoundTripAndAliasesParse) {
  for (DType t : all_dtypes) {
    auto parsed = parse_dtype(dtype_name(t));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_EQ(parse_dtype("float32"), DType::f32);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("s8"), DType::i8);
  EXPECT_FALSE(parse_dtype("f128").has_value());
}

TEST(DType, Traits) {
  EXPECT_TRUE(dtype_info(DType::c64).is_complex);
  EXPECT_TRUE(dtype_info(DType::c64).is_floating);
  EXPECT_TRUE(dtype_info(DType::i32).is_integer);
  EXPECT_FALSE(dtype_info(DType::u8).is_signed);
  EXPECT_FALSE(dtype_info(DType::bf16).is_integer);
}

TEST(Status, ErrorNamesTheArgument) {
  try {
    check_arg(false, "lda", "must be >= max(1, m)");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_EQ(e.argument(), "lda");
    EXPECT_NE(std::string(e.what()).find("'lda'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("must be >= max(1, m)"), std::string::npos);
  }
  EXPECT_STREQ(status_name(Status::not_supported), "not_supported");
}

TEST(Env, IntegersAreParsedStrictly) {
  setenv("STRATA_TEST_INT", "12", 1);
  EXPECT_EQ(env_int("STRATA_TEST_INT", 3), 12);
  setenv("STRATA_TEST_INT", "12x", 1);
  EXPECT_THROW(env_int("STRATA_TEST_INT", 3), Error);
  unsetenv("STRATA_TEST_INT");
  EXPECT_EQ(env_int("STRATA_TEST_INT", 3), 3);
}

TEST(Memory, AlignedAllocation) {
  for (std::size_t align : {16u, 64u, 4096u}) {
    auto p = make_aligned<float>(1001, align);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % align, 0u);
  }
  EXPECT_THROW(aligned_alloc_bytes(10, 48), Error);
}

// AlignedVector's storage starts on a cache line at every size, including after growth and for
// sizes glibc would serve 16 bytes past a page; copies and moves keep it.
TEST(Memory, AlignedVectorStartsOnACacheLine) {
  for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(1000), std::size_t(1) << 20}) {
    AlignedVector<float> v(n, 1.5f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u) << n;
    v.resize(3 * n + 5, 2.f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u) << n;
    EXPECT_EQ(v[0], 1.5f);
    EXPECT_EQ(v.back(), 2.f);
    const AlignedVector<float> copy = v;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % 64, 0u) << n;
    EXPECT_EQ(copy, v);
  }
  AlignedVector<std::uint16_t> narrow(4097);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(narrow.data()) % 64, 0u);
}

// Long-lived buffers of 2 MiB and more start on a huge-page boundary (so transparent huge pages
// can back them) and keep any stricter alignment asked for; the whole buffer is usable.
TEST(Memory, LargeLongLivedBuffersStartOnHugePageBoundaries) {
  if (env_int("STRATA_HUGE_PAGES", 1) == 0) GTEST_SKIP() << "STRATA_HUGE_PAGES=0";
  constexpr std::size_t huge = std::size_t(2) << 20;
  for (std::size_t bytes : {huge, huge + 4096, 5 * huge + 3}) {
    auto p = make_aligned_long_lived<unsigned char>(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % huge, 0u) << bytes;
    std::memset(p.get(), 0x5a, bytes);
    EXPECT_EQ(p[bytes - 1], 0x5a);
  }
  auto small = make_aligned_long_lived<unsigned char>(huge - 1, 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.get()) % 4096, 0u);
  EXPECT_THROW(aligned_alloc_long_lived(10, 48), Error);
}

TEST(Timer, IsMonotonic) {
  int64_t a = now_ns(), b = now_ns();
  EXPECT_LE(a, b);
  Timer t;
  EXPECT_GE(t.seconds(), 0.0);
}
