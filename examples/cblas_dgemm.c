/* Multiplies two small matrices with cblas_dgemm (row-major) on strata's CBLAS. */
#include <stdio.h>

enum { RowMajor = 101, NoTrans = 111 };
void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc);

int main(void) {
  const double a[2 * 3] = {1, 2, 3, 4, 5, 6};    /* 2 x 3 */
  const double b[3 * 2] = {7, 8, 9, 10, 11, 12}; /* 3 x 2 */
  double c[2 * 2] = {0};
  cblas_dgemm(RowMajor, NoTrans, NoTrans, 2, 2, 3, 1.0, a, 3, b, 2, 0.0, c, 2);
  printf("[%g %g; %g %g]\n", c[0], c[1], c[2], c[3]);
  return !(c[0] == 58 && c[1] == 64 && c[2] == 139 && c[3] == 154);
}
