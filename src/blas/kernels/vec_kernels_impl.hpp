// The kernel bodies of vec_kernels.hpp. Included by exactly one .cpp per ISA; everything here
// has internal linkage so the differently compiled copies never meet at link time.
#pragma once
#include "../common/scalar.hpp"
#include "vec_kernels.hpp"

namespace strata::blas::detail {
namespace {

template <class T>
void axpy_kernel(index_t n, T alpha, const T* x, T* y) {
  for (index_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <class T>
void scal_kernel(index_t n, T alpha, T* x) {
  for (index_t i = 0; i < n; ++i) x[i] = alpha * x[i];
}

// Lanes independent accumulators (a vector register's worth or more, so the loop body
// vectorises without reassociation), combined pairwise in a fixed order.
template <class T, bool Conj>
T dot_kernel(index_t n, const T* x, const T* y) {
  constexpr int lanes = is_complex_v<T> ? 8 : 16;
  T acc[lanes] = {};
  index_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (int l = 0; l < lanes; ++l) acc[l] += conj_if(Conj, x[i + l]) * y[i + l];
  T tail{};
  for (; i < n; ++i) tail += conj_if(Conj, x[i]) * y[i];
  for (int w = lanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0] + tail;
}

template <class T>
constexpr VecKernels<T> make_kernels() {
  return {&axpy_kernel<T>, &dot_kernel<T, false>, &dot_kernel<T, true>, &scal_kernel<T>};
}

constexpr VecKernelSet make_kernel_set() {
  return {make_kernels<float>(), make_kernels<double>(), make_kernels<c64>(), make_kernels<c128>()};
}

}  // namespace
}  // namespace strata::blas::detail
