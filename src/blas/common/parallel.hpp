// When and how BLAS routines use the thread pool. Work is split so that every output element
// (or every partial sum) is computed by the same instructions in the same order whatever the
// thread count: threads only decide who computes a piece, never what a piece is.
#pragma once
#include <algorithm>
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

}  // namespace strata::blas::detail
