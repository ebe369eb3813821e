// Naive references for the BLAS tests: every structured matrix (band, packed, triangular,
// symmetric, Hermitian) is expanded to a plain dense column-major matrix, and the dense
// products are computed with the textbook loops in long double / complex<long double>.
#pragma once
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

namespace strata::testref {

template <class T> struct Wide { using type = long double; };
template <class R> struct Wide<std::complex<R>> { using type = std::complex<long double>; };
template <class T> using wide_t = typename Wide<T>::type;

template <class T> constexpr bool is_cplx = false;
template <class R> constexpr bool is_cplx<std::complex<R>> = true;

template <class T> T cj(T v) { if constexpr (is_cplx<T>) return std::conj(v); else return v; }
template <class T> T op_elem(char op, T v) { return op == 'C' ? cj(v) : v; }

// A dense m x n column-major matrix in wide precision.
template <class T>
struct Dense {
  int64_t m = 0, n = 0;
  std::vector<wide_t<T>> v;
  Dense(int64_t rows, int64_t cols) : m(rows), n(cols), v(size_t(rows * cols)) {}
  wide_t<T>& operator()(int64_t i, int64_t j) { return v[size_t(i + j * m)]; }
  wide_t<T> operator()(int64_t i, int64_t j) const { return v[size_t(i + j * m)]; }
};

template <class T>
wide_t<T> widen(T x) { return wide_t<T>(x); }

// op(A) of a dense matrix: 'N', 'T' or 'C'.
template <class T>
Dense<T> apply_op(char op, const Dense<T>& a) {
  if (op == 'N') return a;
  Dense<T> r(a.n, a.m);
  for (int64_t j = 0; j < a.n; ++j)
    for (int64_t i = 0; i < a.m; ++i) r(j, i) = op == 'C' ? cj(a(i, j)) : a(i, j);
  return r;
}

template <class T>
Dense<T> multiply(const Dense<T>& a, const Dense<T>& b) {
  Dense<T> c(a.m, b.n);
  for (int64_t j = 0; j < b.n; ++j)
    for (int64_t p = 0; p < a.n; ++p)
      for (int64_t i = 0; i < a.m; ++i) c(i, j) += a(i, p) * b(p, j);
  return c;
}

// Reads a stored general matrix.
template <class T>
Dense<T> from_general(const T* a, int64_t m, int64_t n, int64_t lda) {
  Dense<T> d(m, n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) d(i, j) = widen(a[i + j * lda]);
  return d;
}

// Storage kinds of the structured n x n matrices.
enum class Store { full, band, packed };

// Element (i, j) of the `upper` triangle in the given storage, or nullptr when not stored.
template <class T>
const T* stored(Store s, const T* a, int64_t n, int64_t k, int64_t lda, bool upper, int64_t i, int64_t j) {
  if (upper ? i > j : i < j) return nullptr;
  if (s == Store::band && (upper ? j - i > k : i - j > k)) return nullptr;
  switch (s) {
    case Store::full: return a + i + j * lda;
    case Store::band: return upper ? a + (k + i - j) + j * lda : a + (i - j) + j * lda;
    case Store::packed: return upper ? a + j * (j + 1) / 2 + i : a + j * n - j * (j - 1) / 2 + (i - j);
  }
  return nullptr;
}

// The full matrix a structured storage represents: kind 't' triangular (unit: diagonal 1),
// 's' symmetric, 'h' Hermitian (diagonal's imaginary part ignored).
template <class T>
Dense<T> expand(Store s, char kind, const T* a, int64_t n, int64_t k, int64_t lda, bool upper, bool unit = false) {
  Dense<T> d(n, n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      if (const T* p = stored(s, a, n, k, lda, upper, i, j)) {
        d(i, j) = widen(*p);
      } else if (kind != 't') {
        if (const T* q = stored(s, a, n, k, lda, upper, j, i)) d(i, j) = kind == 'h' ? cj(widen(*q)) : widen(*q);
      }
      if (i == j && kind == 'h') d(i, j) = wide_t<T>(std::real(d(i, j)));
      if (i == j && kind == 't' && unit) d(i, j) = 1;
    }
  return d;
}

// Logical element i of a strided vector (BLAS negative-increment rule).
template <class T>
int64_t vidx(int64_t i, int64_t n, int64_t inc) { return inc >= 0 ? i * inc : (n - 1 - i) * -inc; }

template <class T>
std::vector<T> random_values(size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(count);
  for (auto& x : v) {
    if constexpr (is_cplx<T>) x = T(typename T::value_type(u(gen)), typename T::value_type(u(gen)));
    else x = T(u(gen));
  }
  return v;
}

// Relative tolerance for results accumulated over `k` terms.
template <class T>
double tolerance(int64_t k) {
  using R = decltype(std::abs(T()));
  return 16.0 * double(k + 4) * double(std::numeric_limits<R>::epsilon());
}

}  // namespace strata::testref
