// Scalar helpers shared by every BLAS routine: conjugation that is a no-op for real types,
// the real part, |Re|+|Im|, and reference-style addressing of strided vectors.
#pragma once
#include <cmath>
#include <complex>
#include <type_traits>

#include "strata/blas/types.hpp"

namespace strata::blas::detail {

template <class T>
inline T conj(T v) {
  if constexpr (is_complex_v<T>) return std::conj(v);
  else return v;
}

// conj(v) when `c`, v otherwise: Op::C versus Op::T in one code path.
template <class T>
inline T conj_if(bool c, T v) {
  if constexpr (is_complex_v<T>) return c ? std::conj(v) : v;
  else return v;
}

template <class T>
inline real_t<T> real_part(T v) {
  if constexpr (is_complex_v<T>) return v.real();
  else return v;
}

template <class T>
inline real_t<T> abs1(T v) {
  if constexpr (is_complex_v<T>) return std::abs(v.real()) + std::abs(v.imag());
  else return std::abs(v);
}

// The first stored element a BLAS loop touches: with inc < 0 element 0 is the last one.
template <class T>
inline T* vec_base(T* x, index_t n, index_t inc) {
  return inc < 0 ? x - (n - 1) * inc : x;
}

}  // namespace strata::blas::detail
