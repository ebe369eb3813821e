// BLAS Level 1: vector-vector operations, with the reference semantics to the letter.
//
// * Vectors are (pointer, increment). A negative increment walks the vector backwards from
//   its last stored element, exactly as BLAS does: element i of an n-vector x with incx < 0
//   lives at x[(n - 1 - i) * |incx|].
// * n <= 0 is a quick return everywhere. scal, asum and iamax also return at once for
//   incx <= 0 (as the reference does); nrm2 walks negative increments like the reference
//   since 3.10; the others accept incx == 0.
// * No Level 1 routine rejects arguments, so none throws.
// * Reductions (dot, nrm2, asum, iamax) give bitwise-identical results for any thread count.
//
// Instantiated for T = float, double, c64, c128 unless a routine says otherwise.
#pragma once
#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"

namespace strata::blas {

// --- Givens and modified Givens rotations ----------------------------------------------------

// Constructs a rotation that zeroes b: [c s; -conj(s) c] [a; b] = [r; 0].
// Real T: a := r, b := z (the reference's reconstruction value). Complex T: a := r, b unchanged.
template <class T>
void rotg(const Handle& h, T* a, T* b, real_t<T>* c, T* s);

// Modified Givens (float, double): builds param[0..4] that zeroes the second component of
// (sqrt(d1) x1, sqrt(d2) y1); d1, d2, x1 are updated.
template <class T>
void rotmg(const Handle& h, T* d1, T* d2, T* x1, T y1, T* param);

// Applies a plane rotation with real c and s (complex T: csrot/zdrot).
template <class T>
void rot(const Handle& h, index_t n, T* x, index_t incx, T* y, index_t incy, real_t<T> c, real_t<T> s);

// Applies the modified rotation described by param (float, double).
template <class T>
void rotm(const Handle& h, index_t n, T* x, index_t incx, T* y, index_t incy, const T* param);

// --- Vector updates ---------------------------------------------------------------------------

template <class T>
void swap(const Handle& h, index_t n, T* x, index_t incx, T* y, index_t incy);

// x := alpha * x
template <class T>
void scal(const Handle& h, index_t n, T alpha, T* x, index_t incx);
// x := alpha * x with a real alpha (csscal/zdscal; complex T only).
template <class T>
  requires is_complex_v<T>
void scal(const Handle& h, index_t n, real_t<T> alpha, T* x, index_t incx);

template <class T>
void copy(const Handle& h, index_t n, const T* x, index_t incx, T* y, index_t incy);

// y := alpha * x + y
template <class T>
void axpy(const Handle& h, index_t n, T alpha, const T* x, index_t incx, T* y, index_t incy);

// y := alpha * x + beta * y (extension; beta == 0 means y is not read).
template <class T>
void axpby(const Handle& h, index_t n, T alpha, const T* x, index_t incx, T beta, T* y, index_t incy);

// --- Reductions -------------------------------------------------------------------------------

// sum x_i * y_i (no conjugation; for complex T this is dotu).
template <class T>
T dot(const Handle& h, index_t n, const T* x, index_t incx, const T* y, index_t incy);
// dotu: the unconjugated complex product (complex T only; same as dot).
template <class T>
  requires is_complex_v<T>
T dotu(const Handle& h, index_t n, const T* x, index_t incx, const T* y, index_t incy);
// dotc: sum conj(x_i) * y_i (equals dot for real T).
template <class T>
T dotc(const Handle& h, index_t n, const T* x, index_t incx, const T* y, index_t incy);

// sb + sum x_i*y_i accumulated in double, rounded to float (sdsdot).
float sdsdot(const Handle& h, index_t n, float sb, const float* x, index_t incx, const float* y, index_t incy);
// sum x_i*y_i of float vectors accumulated and returned in double (dsdot).
double dsdot(const Handle& h, index_t n, const float* x, index_t incx, const float* y, index_t incy);

// Euclidean norm without destructive overflow or underflow (Blue's scaled sums, as the
// reference since 3.10). Complex vectors count real and imaginary parts as entries.
template <class T>
real_t<T> nrm2(const Handle& h, index_t n, const T* x, index_t incx);

// sum |Re x_i| + |Im x_i|
template <class T>
real_t<T> asum(const Handle& h, index_t n, const T* x, index_t incx);

// 1-based index of the first element of largest |Re| + |Im| (BLAS and cuBLAS convention);
// 0 when n < 1 or incx <= 0. NaN handling follows the reference (a NaN never compares larger).
template <class T>
index_t iamax(const Handle& h, index_t n, const T* x, index_t incx);

// |Re z| + |Im z| (scabs1/dcabs1)
template <class T>
real_t<T> cabs1(T z);

}  // namespace strata::blas
