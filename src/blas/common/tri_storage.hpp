// Addressing of triangular, symmetric and Hermitian matrices in the three BLAS storages:
// full (lda), band (k diagonals beside the main one, BLAS band layout) and packed (the
// triangle's columns one after another). In all three, the stored part of a column is
// contiguous, so kernels work on column segments [first(j), last(j)].
#pragma once
#include <algorithm>

#include "strata/blas/types.hpp"

namespace strata::blas::detail {

enum class Storage { full, band, packed };

template <class T>
struct TriStorage {
  T* a;
  index_t n;
  bool upper;
  Storage storage;
  index_t lda = 0;  // full and band
  index_t k = 0;    // band: number of off-diagonals; full/packed: n - 1

  static TriStorage full(T* a, index_t n, bool upper, index_t lda) { return {a, n, upper, Storage::full, lda, n - 1}; }
  static TriStorage band(T* a, index_t n, bool upper, index_t k, index_t lda) { return {a, n, upper, Storage::band, lda, k}; }
  static TriStorage packed(T* a, index_t n, bool upper) { return {a, n, upper, Storage::packed, 0, n - 1}; }

  // First and last row stored in column j (inclusive; the diagonal is always one of them).
  index_t first(index_t j) const { return upper ? std::max<index_t>(0, j - k) : j; }
  index_t last(index_t j) const { return upper ? j : std::min(n - 1, j + k); }
  // Off-diagonal rows stored in column j: [off_first(j), off_last(j)], possibly empty.
  index_t off_first(index_t j) const { return upper ? first(j) : j + 1; }
  index_t off_last(index_t j) const { return upper ? j - 1 : last(j); }

  T* at(index_t i, index_t j) const {
    switch (storage) {
      case Storage::full: return a + i + j * lda;
      case Storage::band: return upper ? a + (k + i - j) + j * lda : a + (i - j) + j * lda;
      case Storage::packed:
        return upper ? a + j * (j + 1) / 2 + i : a + j * n - j * (j - 1) / 2 + (i - j);
    }
    return a;
  }
};

// Columns j..j+3 of a stored triangle: the off-diagonal rows all four store ([lo, hi], where
// kernels take the four columns in one pass), and per column the pieces of its own range
// outside them (the small triangle among the four, band ends), at most two.
struct FourColumns {
  index_t lo, hi;  // shared rows; lo == hi + 1 when there are none

  template <class T>
  FourColumns(const TriStorage<T>& A, index_t j) : lo(A.off_first(j)), hi(A.off_last(j)) {
    for (index_t q = 1; q < 4; ++q) lo = std::max(lo, A.off_first(j + q)), hi = std::min(hi, A.off_last(j + q));
    if (lo > hi) lo = hi + 1;
  }
  bool shared() const { return lo <= hi; }

  // f(first, last) for each piece of column c's off-diagonal range outside [lo, hi].
  template <class T, class F>
  void rest(const TriStorage<T>& A, index_t c, F&& f) const {
    const index_t clo = A.off_first(c), chi = A.off_last(c);
    const index_t a_hi = std::min(lo - 1, chi), b_lo = std::max(hi + 1, clo);
    if (clo <= a_hi) f(clo, a_hi);
    if (b_lo <= chi) f(b_lo, chi);
  }
};

}  // namespace strata::blas::detail
