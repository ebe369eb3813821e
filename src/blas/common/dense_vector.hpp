// Level 2 kernels work on unit-stride vectors. DenseVector presents any (x, n, inc) vector,
// negative increments included, as a contiguous array: the original storage when inc == 1,
// otherwise a gathered copy that store() scatters back. Copies of up to 2 KiB live in the
// object itself: a heap allocation per strided vector was a tenth of an 85 x 85 gemv.
#pragma once
#include <cstddef>
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
    if (n <= index_t(kInline)) {
      data_ = reinterpret_cast<T*>(inline_);
    } else {
      buf_.resize(size_t(n));
      data_ = buf_.data();
    }
    if (read) {
      const T* b = vec_base(x, n, inc);
      for (index_t i = 0; i < n; ++i) data_[i] = b[i * inc];
    }
  }
  T* data() { return data_; }
  T& operator[](index_t i) { return data_[i]; }
  void store() {
    if (data_ == x_) return;
    T* b = vec_base(x_, n_, inc_);
    for (index_t i = 0; i < n_; ++i) b[i * inc_] = data_[i];
  }
  DenseVector(const DenseVector&) = delete;  // data_ may point into the object
  DenseVector& operator=(const DenseVector&) = delete;

 private:
  T* x_;
  index_t n_, inc_;
  T* data_ = nullptr;
  static constexpr std::size_t kInline = 2048 / sizeof(T);
  alignas(64) unsigned char inline_[kInline * sizeof(T)];  // T may lack a default constructor
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
