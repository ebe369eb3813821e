#include <cstdio>
#include "strata/blas/level3.hpp"
int main() {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {};
  strata::blas::gemm<float>(strata::blas::Handle{}, strata::blas::Op::N, strata::blas::Op::N, 2, 2, 2, 1.f, a, 2, b, 2, 0.f, c, 2);
  std::printf("%g %g %g %g\n", c[0], c[1], c[2], c[3]);
  return c[3] == 4 ? 0 : 1;
}
