/* LAPACK (Debian's liblapack3) running on the strata BLAS: solves a linear system with
   dgesv_ and factors an SPD matrix with dpotrf_, checks the residuals, and checks that the
   BLAS symbols LAPACK binds to come from the strata drop-in library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b, const int* ldb, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);

enum { N = 37 };

int main(int argc, char** argv) {
  Dl_info where;
  void* dgemm = dlsym(RTLD_DEFAULT, "dgemm_");  /* looked up, so the link needs no -lblas */
  if (!dgemm || !dladdr(dgemm, &where) || (argc > 1 && !strstr(where.dli_fname, argv[1]))) {
    printf("FAIL: dgemm_ does not come from the library under test\n");
    return 1;
  }
  printf("BLAS from %s\n", where.dli_fname);
  static double a[N * N], a0[N * N], b[N], b0[N], s[N * N];
  int ipiv[N], info, n = N, one = 1;
  for (int j = 0; j < N; ++j) {
    for (int i = 0; i < N; ++i) a[i + j * N] = sin(1.0 + i * 7 + j * 3) + (i == j ? N : 0);
    b[j] = cos(j);
  }
  memcpy(a0, a, sizeof a);
  memcpy(b0, b, sizeof b);
  dgesv_(&n, &one, a, &n, ipiv, b, &n, &info);
  double worst = 0;
  for (int i = 0; i < N; ++i) {
    double r = -b0[i];
    for (int j = 0; j < N; ++j) r += a0[i + j * N] * b[j];
    worst = fmax(worst, fabs(r));
  }
  printf("dgesv info=%d max residual=%g\n", info, worst);
  if (info != 0 || worst > 1e-10) return 1;

  /* S = A0^T A0 is SPD; its Cholesky factor must reproduce it. */
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      double v = 0;
      for (int k = 0; k < N; ++k) v += a0[k + i * N] * a0[k + j * N];
      s[i + j * N] = v;
    }
  memcpy(a, s, sizeof s);
  dpotrf_("L", &n, a, &n, &info, 1);
  worst = 0;
  for (int j = 0; j < N; ++j)
    for (int i = j; i < N; ++i) {
      double v = 0;
      for (int k = 0; k <= j; ++k) v += a[i + k * N] * a[j + k * N];
      worst = fmax(worst, fabs(v - s[i + j * N]) / s[j + j * N]);
    }
  printf("dpotrf info=%d max relative error=%g\n", info, worst);
  return info == 0 && worst < 1e-12 ? 0 : 1;
}
