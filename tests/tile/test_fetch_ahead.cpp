// tile::FetchAhead, the batch's fetch of the next entry's operands: which cache lines it walks
// (each line of each run of each operand, in order, a run that starts or ends mid-line
// included; C for writing), that its progress survives being copied out and back around every tile, and
// how many lines a k step takes. The batched GEMM that uses it is checked bit for bit against
// single calls in tests/blas/level3_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "strata/tile/fetch_ahead.hpp"

using namespace strata::tile;

namespace {

using Line = std::pair<std::uintptr_t, bool>;  // a line's address, fetched for writing

// The lines of `runs` runs of `len` elements, `stride` elements apart from p, computed from
// the addresses alone (a line two runs share is listed, and fetched, for each).
template <class T>
void expect_lines(std::vector<Line>& out, const T* p, int64_t len, int64_t runs, int64_t stride, bool write) {
  for (int64_t r = 0; r < runs; ++r) {
    const auto first = reinterpret_cast<std::uintptr_t>(p + r * stride) / 64 * 64;
    const auto last = reinterpret_cast<std::uintptr_t>(p + r * stride + len - 1) / 64 * 64;
    for (std::uintptr_t at = first; at <= last; at += 64) out.push_back({at, write});
  }
}

// Every line the fetch visits, taking the cursor out and back every `per_tile` lines as the
// kernels do around each tile's k loop.
std::vector<Line> walk(FetchAhead& f, int per_tile) {
  std::vector<Line> seen;
  while (f.pending()) {
    FetchAhead::Cursor c = f.cursor();
    for (int i = 0; i < per_tile && !c.done(); ++i)
      c.one([&](std::uintptr_t at, bool write) { seen.push_back({at, write}); });
    f.resume(c);
  }
  return seen;
}

}  // namespace

TEST(FetchAhead, WalksEveryLineOfEachRunInOrder) {
  // A 10 x 7 inside a 13-row matrix, starting mid-line; B read along rows (a transposed
  // view, 9 x 5 with row stride 11); C 10 x 5 contiguous, fetched for writing.
  std::vector<float> a(13 * 7 + 3), b(11 * 9), c(10 * 5 + 16);
  const float* a0 = a.data() + 3;
  float* c0 = c.data() + 5;
  FetchAhead f;
  f.add(MatrixView<float>{a0, 1, 13}, 10, 7);
  f.add(MatrixView<float>{b.data(), 11, 1}, 9, 5);
  f.add(MatrixView<float>{c0, 1, 10}, 10, 5, true);
  std::vector<Line> want;
  expect_lines(want, a0, 10, 7, 13, false);
  expect_lines(want, b.data(), 5, 9, 11, false);
  expect_lines(want, static_cast<const float*>(c0), 50, 1, 50, true);
  for (int per_tile : {1, 3, 1000}) {
    FetchAhead g = f;
    EXPECT_EQ(walk(g, per_tile), want) << "cursor taken out every " << per_tile << " lines";
  }
}

TEST(FetchAhead, LeavesOutViewsWithNeitherStrideOneAndEmptyOnes) {
  std::vector<double> x(64 * 64);
  FetchAhead f;
  EXPECT_FALSE(f.pending());
  f.add(MatrixView<double>{x.data(), 2, 64}, 8, 8);  // every other row of every column
  f.add(MatrixView<double>{x.data(), 1, 64}, 0, 8);
  EXPECT_FALSE(f.pending());
  f.add(MatrixView<double>{x.data() + 8, 1, 64}, 8, 1);  // one line, after those left out
  std::vector<Line> want;
  expect_lines(want, x.data() + 8, 8, 1, 64, false);
  EXPECT_EQ(walk(f, 2), want);
}

// One line a step where that fetches everything within the steps, else two (fewer steps than
// half the lines leave the rest unfetched: four a step had slowed the kernel's own loads).
TEST(FetchAhead, PaceTakesOneOrTwoLinesAStep) {
  std::vector<float> x(32 * 32 * 3);
  auto three = [&] {
    FetchAhead f;
    for (int part = 0; part < 3; ++part) f.add(MatrixView<float>{x.data() + part * 1024, 1, 32}, 32, 32, part == 2);
    return f;
  };
  // 3 x 64 lines (an upper bound of 3 x 66 with mid-line starts) over a 32^3 product's steps.
  for (int64_t steps : {1000, 150, 60, 10}) {
    FetchAhead f = three();
    f.pace(steps);
    const int expected = steps >= 198 ? 1 : 2;
    EXPECT_EQ(f.per_step(), expected) << steps << " steps";
    int64_t taken = 0;
    FetchAhead::Cursor c = f.cursor();
    while (!c.done() && taken < steps) c.step(), ++taken;
    if (expected * steps >= 198) {
      EXPECT_TRUE(c.done()) << "not all fetched within " << steps << " steps";
    }
  }
}
