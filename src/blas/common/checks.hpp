// Argument checks shared by the Level 2/3 entry points. Each names the reference's parameter
// (lower case), which the ABI layer maps back to the parameter index it reports to xerbla.
#pragma once
#include <algorithm>

#include "strata/blas/types.hpp"
#include "strata/core/status.hpp"

namespace strata::blas::detail {

inline bool valid_op(Op o) { return o == Op::N || o == Op::T || o == Op::C; }

inline void check_op(Op o, const char* name) { check_arg(valid_op(o), name, "must be Op::N, Op::T or Op::C"); }
inline void check_uplo(Uplo u, const char* name = "uplo") {
  check_arg(u == Uplo::upper || u == Uplo::lower, name, "must be Uplo::upper or Uplo::lower");
}
inline void check_diag(Diag d, const char* name = "diag") {
  check_arg(d == Diag::unit || d == Diag::non_unit, name, "must be Diag::unit or Diag::non_unit");
}
inline void check_side(Side s, const char* name = "side") {
  check_arg(s == Side::left || s == Side::right, name, "must be Side::left or Side::right");
}
inline void check_dim(index_t v, const char* name) { check_arg(v >= 0, name, "must be >= 0"); }
inline void check_inc(index_t inc, const char* name) { check_arg(inc != 0, name, "must not be zero"); }
// A leading dimension must cover `rows` stored rows (and be at least 1).
inline void check_ld(index_t ld, index_t rows, const char* name) {
  check_arg(ld >= std::max<index_t>(1, rows), name, "is smaller than the number of stored rows");
}

// A batch given as pointer arrays: the arrays themselves must exist when there are entries.
inline void check_batch_arrays(index_t count, const void* a, const void* b, const void* c) {
  if (count <= 0) return;
  check_arg(a != nullptr, "A", "pointer array must not be null");
  check_arg(b != nullptr, "B", "pointer array must not be null");
  check_arg(c != nullptr, "C", "pointer array must not be null");
}

}  // namespace strata::blas::detail
