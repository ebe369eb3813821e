// Helpers of the CBLAS layer: the CBLAS enum values, their Fortran characters (row-major
// swaps included), reporting an invalid enum through cblas_xerbla, and the conjugated copies
// that let row-major complex calls run on the column-major routines.
#pragma once
#include <string>
#include <vector>

#include "routines.hpp"

namespace strata::capi::cblas {

enum : int {
  kRowMajor = 101, kColMajor = 102,
  kNoTrans = 111, kTrans = 112, kConjTrans = 113,
  kUpper = 121, kLower = 122,
  kNonUnit = 131, kUnit = 132,
  kLeft = 141, kRight = 142,
};

// 0 marks an invalid value.
inline char trans_char(int t) { return t == kNoTrans ? 'N' : t == kTrans ? 'T' : t == kConjTrans ? 'C' : 0; }
inline char uplo_char(int u, bool row_major) {
  if (u == kUpper) return row_major ? 'L' : 'U';
  if (u == kLower) return row_major ? 'U' : 'L';
  return 0;
}
inline char diag_char(int d) { return d == kNonUnit ? 'N' : d == kUnit ? 'U' : 0; }
inline char side_char(int s, bool row_major) {
  if (s == kLeft) return row_major ? 'R' : 'L';
  if (s == kRight) return row_major ? 'L' : 'R';
  return 0;
}

// "cblas_" + type letter + routine, lower case: the name cblas_xerbla reports.
template <class T>
std::string name_of(const char* routine) {
  std::string s = "cblas_";
  s += char(type_letter<T>() - 'A' + 'a');
  s += routine;
  return s;
}

// Reports an invalid enum argument at CBLAS position `pos`.
template <class T>
void bad_enum(int pos, const char* routine, const char* what, int value) {
  const std::string fmt = std::string("Illegal ") + what + " setting, %d\n";
  cblas_xerbla(pos, name_of<T>(routine).c_str(), fmt.c_str(), value);
}

template <class T>
T conj_value(T v) {
  if constexpr (blas::is_complex_v<T>) return std::conj(v);
  else return v;
}

// The n logical elements of (x, inc), conjugated, as a unit-stride vector.
template <class T>
std::vector<T> conj_copy(const T* x, int n, int inc) {
  std::vector<T> out(size_t(n > 0 ? n : 0));
  const T* base = inc < 0 ? x - std::ptrdiff_t(n - 1) * inc : x;
  for (int i = 0; i < n; ++i) out[size_t(i)] = conj_value(base[std::ptrdiff_t(i) * inc]);
  return out;
}

// Conjugates the n logical elements of (x, inc) in place (one element when inc == 0).
template <class T>
void conj_in_place(T* x, int n, int inc) {
  if (n <= 0) return;
  if (inc == 0) n = 1;
  T* base = inc < 0 ? x - std::ptrdiff_t(n - 1) * inc : x;
  for (int i = 0; i < n; ++i) base[std::ptrdiff_t(i) * inc] = conj_value(base[std::ptrdiff_t(i) * inc]);
}

// CBLAS passes complex arrays and scalars as void*: typed views of them, used by every level.
template <class T> const T* cp(const void* p) { return static_cast<const T*>(p); }
template <class T> T* mp(void* p) { return static_cast<T*>(p); }
// Scalars arrive by value (real) or through a pointer (complex).
template <class T> T val(T v) { return v; }
template <class T> T val(const void* p) { return *static_cast<const T*>(p); }

}  // namespace strata::capi::cblas
