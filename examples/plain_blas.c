/* A program that knows nothing about strata: linked with plain -lblas, it calls the Fortran
   dgemv_. Run it with LD_LIBRARY_PATH pointing at strata's drop-in folder and it runs on
   strata; it prints which library served the call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            const double* x, const int* incx, const double* beta, double* y, const int* incy, size_t);

int main(void) {
  const double a[4] = {1, 3, 2, 4}; /* column-major [1 2; 3 4] */
  const double x[2] = {1, 1}, one = 1, zero = 0;
  double y[2];
  const int two = 2, inc = 1;
  dgemv_("N", &two, &two, &one, a, &two, x, &inc, &zero, y, &inc, 1);
  Dl_info where;
  dladdr((void*)&dgemv_, &where);
  printf("y = [%g %g] computed by %s\n", y[0], y[1], where.dli_fname);
  return !(y[0] == 3 && y[1] == 7);
}
