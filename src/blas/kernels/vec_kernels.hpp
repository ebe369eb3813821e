// Unit-stride vector kernels behind Level 1 and Level 2, one set per ISA.
//
// The same source (vec_kernels_impl.hpp) is compiled once per ISA with that ISA's flags and
// the compiler's vectoriser does the work; the accumulation order is written out explicitly
// (fixed lanes, fixed pairwise combine), so a kernel's result depends only on n and the data,
// never on threads. Slots are chosen at run time through IsaTable; the generic set always exists.
#pragma once
#include "strata/blas/types.hpp"
#include "strata/core/isa.hpp"

namespace strata::blas::detail {

template <class T>
struct VecKernels {
  void (*axpy)(index_t n, T alpha, const T* x, T* y);  // y += alpha * x
  T (*dotu)(index_t n, const T* x, const T* y);        // sum x_i y_i
  T (*dotc)(index_t n, const T* x, const T* y);        // sum conj(x_i) y_i
  void (*scal)(index_t n, T alpha, T* x);              // x *= alpha
  // y += alpha[0] x[0] + ... + alpha[3] x[3], added in that order (as four axpy calls would):
  // y is loaded and stored once per four columns.
  void (*axpy4)(index_t n, const T* alpha, const T* const* x, T* y);
  // y[c] += alpha[c] x for c < 4, each element as axpy computes it: x is loaded once for four
  // columns (rank-1 updates).
  void (*axpy_columns4)(index_t n, const T* alpha, const T* x, T* const* y);
  // y += alpha * a and returns sum a_i x_i (conj(a_i) for the c form): one pass over a.
  T (*axpy_dotu)(index_t n, T alpha, const T* a, const T* x, T* y);
  T (*axpy_dotc)(index_t n, T alpha, const T* a, const T* x, T* y);
  // Four columns at once: y += sum_c alpha[c] a[c] and dot[c] = sum_i a[c]_i x_i (conj(a) for
  // the c form), one pass over y for four columns.
  void (*axpy_dotu4)(index_t n, const T* alpha, const T* const* a, const T* x, T* y, T* dot);
  void (*axpy_dotc4)(index_t n, const T* alpha, const T* const* a, const T* x, T* y, T* dot);
  // dot[c] = sum a[c]_i x_i (conj(a) for the c form) for c < 4, in dotu's lanes and order:
  // four columns stream at once against one pass over x. (The bits can still differ from
  // dotu's where the compiler fuses multiply-adds in one kernel and not the other, and for
  // complex T, whose dot4 keeps one vector of lane sums per column where dotu keeps two.)
  void (*dotu4)(index_t n, const T* const* a, const T* x, T* dot);
  void (*dotc4)(index_t n, const T* const* a, const T* x, T* dot);
  // inv := the inverse of the n x n `upper`/lower triangle of t (both column-major, ld n; t
  // zero outside its triangle, inv written in full): trsm's diagonal leaves, whose inverses
  // are applied by gemm.
  void (*invert_triangle)(index_t n, bool upper, const T* t, T* inv);
  // Plane rotation (x, y) := (c x + s y, c y - s x) of distinct vectors, complex ones part by
  // part (the real c and s of rot/csrot/zdrot).
  void (*rot)(index_t n, real_t<T> c, real_t<T> s, T* x, T* y);
  // sum |re| + |im| (|x| for real T), in fixed lanes.
  real_t<T> (*asum)(index_t n, const T* x);
  // The first index (0-based) of the largest |re| + |im|, NaNs never largest unless x[0] is
  // one (then 0), as the reference's sequential strict comparison gives.
  index_t (*iamax)(index_t n, const T* x);
};

struct VecKernelSet {
  VecKernels<float> s;
  VecKernels<double> d;
  VecKernels<c64> c;
  VecKernels<c128> z;
};

extern const VecKernelSet vec_kernels_generic;
extern const VecKernelSet vec_kernels_avx2;
extern const VecKernelSet vec_kernels_avx512;

const VecKernelSet& vec_kernel_set(Isa isa);

template <class T>
const VecKernels<T>& vec_kernels(Isa isa) {
  const VecKernelSet& k = vec_kernel_set(isa);
  if constexpr (std::is_same_v<T, float>) return k.s;
  else if constexpr (std::is_same_v<T, double>) return k.d;
  else if constexpr (std::is_same_v<T, c64>) return k.c;
  else return k.z;
}

}  // namespace strata::blas::detail
