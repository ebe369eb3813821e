// Fortran BLAS Level 3 symbols, forwarding to the Fortran-semantics layer (routines.hpp).
#include "routines.hpp"

namespace {
using namespace strata::capi;
using I = int;
}  // namespace

extern "C" {

#define STRATA_F77_LEVEL3_ALL(p, T)                                                                                \
  void p##gemm_(const char* ta, const char* tb, const I* m, const I* n, const I* k, const T* al, const T* a,       \
                const I* lda, const T* b, const I* ldb, const T* be, T* c, const I* ldc) {                         \
    f77::gemm<T>(*ta, *tb, *m, *n, *k, *al, a, *lda, b, *ldb, *be, c, *ldc);                                       \
  }                                                                                                                \
  void p##symm_(const char* sd, const char* ul, const I* m, const I* n, const T* al, const T* a, const I* lda,     \
                const T* b, const I* ldb, const T* be, T* c, const I* ldc) {                                       \
    f77::symm<T, false>(*sd, *ul, *m, *n, *al, a, *lda, b, *ldb, *be, c, *ldc);                                    \
  }                                                                                                                \
  void p##syrk_(const char* ul, const char* tr, const I* n, const I* k, const T* al, const T* a, const I* lda,     \
                const T* be, T* c, const I* ldc) {                                                                 \
    f77::syrk<T>(*ul, *tr, *n, *k, *al, a, *lda, *be, c, *ldc);                                                    \
  }                                                                                                                \
  void p##syr2k_(const char* ul, const char* tr, const I* n, const I* k, const T* al, const T* a, const I* lda,    \
                 const T* b, const I* ldb, const T* be, T* c, const I* ldc) {                                      \
    f77::syr2k<T>(*ul, *tr, *n, *k, *al, a, *lda, b, *ldb, *be, c, *ldc);                                          \
  }                                                                                                                \
  void p##trmm_(const char* sd, const char* ul, const char* ta, const char* di, const I* m, const I* n,            \
                const T* al, const T* a, const I* lda, T* b, const I* ldb) {                                       \
    f77::trxm<T, false>(*sd, *ul, *ta, *di, *m, *n, *al, a, *lda, b, *ldb);                                        \
  }                                                                                                                \
  void p##trsm_(const char* sd, const char* ul, const char* ta, const char* di, const I* m, const I* n,            \
                const T* al, const T* a, const I* lda, T* b, const I* ldb) {                                       \
    f77::trxm<T, true>(*sd, *ul, *ta, *di, *m, *n, *al, a, *lda, b, *ldb);                                         \
  }

#define STRATA_F77_LEVEL3_HERM(p, T, R)                                                                            \
  void p##hemm_(const char* sd, const char* ul, const I* m, const I* n, const T* al, const T* a, const I* lda,     \
                const T* b, const I* ldb, const T* be, T* c, const I* ldc) {                                       \
    f77::symm<T, true>(*sd, *ul, *m, *n, *al, a, *lda, b, *ldb, *be, c, *ldc);                                     \
  }                                                                                                                \
  void p##herk_(const char* ul, const char* tr, const I* n, const I* k, const R* al, const T* a, const I* lda,     \
                const R* be, T* c, const I* ldc) {                                                                 \
    f77::herk<T>(*ul, *tr, *n, *k, *al, a, *lda, *be, c, *ldc);                                                    \
  }                                                                                                                \
  void p##her2k_(const char* ul, const char* tr, const I* n, const I* k, const T* al, const T* a, const I* lda,    \
                 const T* b, const I* ldb, const R* be, T* c, const I* ldc) {                                      \
    f77::her2k<T>(*ul, *tr, *n, *k, *al, a, *lda, b, *ldb, *be, c, *ldc);                                          \
  }

STRATA_F77_LEVEL3_ALL(s, float)
STRATA_F77_LEVEL3_ALL(d, double)
STRATA_F77_LEVEL3_ALL(c, c64)
STRATA_F77_LEVEL3_ALL(z, c128)
STRATA_F77_LEVEL3_HERM(c, c64, float)
STRATA_F77_LEVEL3_HERM(z, c128, double)

}  // extern "C"
