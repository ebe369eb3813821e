// When and how BLAS routines use the thread pool. Work is split so that every output element
// (or every partial sum) is computed by the same instructions in the same order whatever the
// thread count: threads only decide who computes a piece, never what a piece is.
#pragma once
#include <algorithm>
#include <utility>
#include <vector>

#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::blas::detail {

// Below this many element operations a call stays on the caller's thread: waking the pool
// costs more than the work.
inline constexpr index_t parallel_threshold = index_t(1) << 16;

// Threads to use for `work` element operations.
inline int threads_for(const Handle& h, index_t work) {
  return work < parallel_threshold ? 1 : std::max(1, h.num_threads());
}

// Whether a batch of `count` m x n x k products is divided among the handle's threads, each
// entry run whole on one: small products always, larger ones whenever the entries divide among
// the threads within an eighth (each entry then runs start to end on one core, with no fork and
// join per entry: 2 threads, batches of 64^3-192^3, 1.0-2.6x against every entry split among
// both). A few large entries that divide unevenly (3 on 2 threads) keep the threads within
// each entry. Either way each product's bits are those of the single call.
inline bool split_batch_among_threads(const Handle& h, index_t count, index_t m, index_t n, index_t k,
                                      index_t small_product) {
  const int64_t threads = threads_for(h, count * m * n);
  const int64_t per_thread = (count + threads - 1) / threads;
  return count > 1 && threads > 1 && (m * n * k < small_product || 8 * per_thread * threads <= 9 * count);
}

// Runs body(begin, end) over [0, n) split across threads (contiguous ranges).
template <class Body>
void parallel_ranges(const Handle& h, index_t n, index_t work, Body&& body) {
  parallel_for(n, threads_for(h, work), [&](int64_t lo, int64_t hi, int) { body(lo, hi); });
}

// Deterministic reduction: [0, n) is cut into fixed chunks (independent of the thread count),
// each chunk is reduced by `partial(begin, end)`, and the partials are added in chunk order.
inline constexpr index_t reduction_chunk = index_t(1) << 14;

template <class R, class Partial>
R chunked_reduce(const Handle& h, index_t n, Partial&& partial) {
  if (n <= reduction_chunk) return partial(index_t(0), n);
  const index_t chunks = (n + reduction_chunk - 1) / reduction_chunk;
  std::vector<R> parts(static_cast<size_t>(chunks));
  parallel_for(chunks, threads_for(h, n), [&](int64_t lo, int64_t hi, int) {
    for (index_t c = lo; c < hi; ++c)
      parts[size_t(c)] = partial(c * reduction_chunk, std::min(n, (c + 1) * reduction_chunk));
  });
  R sum{};
  for (const R& p : parts) sum += p;
  return sum;
}

// Column-chunked Level 2 work on triangular/symmetric storage. Columns are cut into fixed
// chunks of `column_chunk` (a function of n alone, never of the thread count). A triangle puts
// more work in one end than the other, so the pool's contiguous ranges walk the chunks in a
// balanced order: 0, C-1, 1, C-2, ... (thread 0 then gets as much work as thread 1).
inline constexpr index_t column_chunk = 256;

inline index_t column_chunks(index_t n) { return (n + column_chunk - 1) / column_chunk; }
inline index_t balanced_chunk(index_t q, index_t chunks) { return q % 2 == 0 ? q / 2 : chunks - 1 - q / 2; }

// body(j0, j1) for each chunk of columns; chunks must touch disjoint data.
template <class Body>
void for_column_chunks(const Handle& h, index_t n, index_t work, Body&& body) {
  const index_t chunks = column_chunks(n);
  parallel_for(chunks, chunks > 1 ? threads_for(h, work) : 1, [&](int64_t lo, int64_t hi, int) {
    for (index_t q = lo; q < hi; ++q) {
      const index_t c = balanced_chunk(q, chunks);
      body(c * column_chunk, std::min(n, (c + 1) * column_chunk));
    }
  });
}

// Sums of per-column contributions into y: body(j0, j1, acc) adds the contributions of
// columns [j0, j1) to acc[r] for rows r in rows(j0, j1) = {r0, r1} (half open). Chunk 0
// accumulates straight into y; every other chunk into its own zeroed buffer, added to y
// afterwards in chunk order, so y is bitwise the same for any thread count.
template <class T, class Rows, class Body>
void accumulate_column_chunks(const Handle& h, index_t n, index_t work, T* y, Rows&& rows, Body&& body) {
  const index_t chunks = column_chunks(n);
  if (chunks <= 1) {
    if (n > 0) body(index_t(0), n, y);
    return;
  }
  struct Partial {
    index_t r0 = 0, r1 = 0;
    std::vector<T> sum;
  };
  std::vector<Partial> parts(static_cast<size_t>(chunks));
  for_column_chunks(h, n, work, [&](index_t j0, index_t j1) {
    const index_t c = j0 / column_chunk;
    if (c == 0) return body(j0, j1, y);
    Partial& p = parts[size_t(c)];
    const auto [r0, r1] = rows(j0, j1);
    p.r0 = r0;
    p.r1 = r1;
    p.sum.assign(size_t(std::max<index_t>(0, r1 - r0)), T(0));
    body(j0, j1, p.sum.data() - r0);
  });
  for (index_t c = 1; c < chunks; ++c) {
    const Partial& p = parts[size_t(c)];
    for (index_t r = p.r0; r < p.r1; ++r) y[r] += p.sum[size_t(r - p.r0)];
  }
}

}  // namespace strata::blas::detail
