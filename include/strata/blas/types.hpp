// Enumerations shared by the whole BLAS API (cuBLAS-style C++ names for the BLAS characters).
#pragma once
#include <complex>
#include <cstdint>

namespace strata::blas {

using index_t = int64_t;  // sizes, leading dimensions and increments
using c64 = std::complex<float>;
using c128 = std::complex<double>;

enum class Op : char { N = 'N', T = 'T', C = 'C' };  // op(X) = X, X^T, X^H
enum class Uplo : char { upper = 'U', lower = 'L' };
enum class Side : char { left = 'L', right = 'R' };
enum class Diag : char { non_unit = 'N', unit = 'U' };
// Storage order of the matrices of one call. BLAS is column-major; row_major is the explicit
// fix beside it (the GEMM family), never a replacement.
enum class Order : char { col_major = 'C', row_major = 'R' };

// The real type behind a scalar (float for c64): nrm2/asum results, rot's c and s,
// herk's alpha and beta.
template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using real_t = typename real_of<T>::type;

template <class T> inline constexpr bool is_complex_v = false;
template <class R> inline constexpr bool is_complex_v<std::complex<R>> = true;

}  // namespace strata::blas
