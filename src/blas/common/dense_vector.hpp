// Level 2 kernels work on unit-stride vectors. DenseVector presents any (x, n, inc) vector,
// negative increments included, as a contiguous array: the original storage when inc == 1,
// otherwise a gathered copy that store() scatters back.
#pragma once
#include <vector>

#include "scalar.hpp"

namespace strata::blas::detail {

template <class T>
class DenseVector {
 public:
  // read == false: the caller overwrites every element before reading (x is not read).
  DenseVector(T* x, index_t n, index_t inc, bool read = true) : x_(x), n_(n), inc_(inc) {
    if (inc == 1 || n <= 0) {
      data_ = x;
      return;
    }
    buf_.resize(size_t(n));
    data_ = buf_.data();
    if (read) {
      const T* b = vec_base(x, n, inc);
      for (index_t i = 0; i < n; ++i) buf_[size_t(i)] = b[i * inc];
    }
  }
  T* data() { return data_; }
  T& operator[](index_t i) { return data_[i]; }
  void store() {
    if (data_ == x_) return;
    T* b = vec_base(x_, n_, inc_);
    for (index_t i = 0; i < n_; ++i) b[i * inc_] = buf_[size_t(i)];
  }

 private:
  T* x_;
  index_t n_, inc_;
  T* data_ = nullptr;
  std::vector<T> buf_;
};

// Read-only view of an input vector.
template <class T>
class DenseInput {
 public:
  DenseInput(const T* x, index_t n, index_t inc) : v_(const_cast<T*>(x), n, inc) {}
  const T* data() { return v_.data(); }
  T operator[](index_t i) { return v_[i]; }

 private:
  DenseVector<T> v_;
};

// y := beta*y in place on a strided vector; beta == 0 writes zeros without reading y.
template <class T>
void scale_vector(index_t n, T beta, T* y, index_t incy) {
  if (beta == T(1) || n <= 0) return;
  T* b = vec_base(y, n, incy);
  if (beta == T(0))
    for (index_t i = 0; i < n; ++i) b[i * incy] = T(0);
  else
    for (index_t i = 0; i < n; ++i) b[i * incy] *= beta;
}

}  // namespace strata::blas::detail
