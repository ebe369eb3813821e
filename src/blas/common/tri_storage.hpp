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

}  // namespace strata::blas::detail
