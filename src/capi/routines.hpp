// The Fortran-semantics layer: one template per BLAS routine taking the Fortran arguments by
// value (characters, 32-bit integers, pointers), running the strata C++ routine and reporting
// a rejected argument to xerbla_ with its reference position. The Fortran symbols (f77_*.cpp)
// and the CBLAS wrappers (cblas_*.cpp) both call these.
#pragma once
#include "abi.hpp"
#include "strata/blas/level1.hpp"
#include "strata/blas/level2.hpp"
#include "strata/blas/level3.hpp"

namespace strata::capi::f77 {

using blas::real_t;
using I = int;  // Fortran default INTEGER (LP64)

// ---- Level 2 ----

template <class T>
void gemv(char trans, I m, I n, T alpha, const T* a, I lda, const T* x, I incx, T beta, T* y, I incy) {
  guarded<T>("GEMV", "trans m n alpha a lda x incx beta y incy",
             [&] { blas::gemv<T>(handle(), op_of(trans), m, n, alpha, a, lda, x, incx, beta, y, incy); });
}
template <class T>
void gbmv(char trans, I m, I n, I kl, I ku, T alpha, const T* a, I lda, const T* x, I incx, T beta, T* y, I incy) {
  guarded<T>("GBMV", "trans m n kl ku alpha a lda x incx beta y incy",
             [&] { blas::gbmv<T>(handle(), op_of(trans), m, n, kl, ku, alpha, a, lda, x, incx, beta, y, incy); });
}

// symv/hemv family: Herm selects the Hermitian routine and its name.
template <class T, bool Herm>
void symv(char uplo, I n, T alpha, const T* a, I lda, const T* x, I incx, T beta, T* y, I incy) {
  guarded<T>(Herm ? "HEMV" : "SYMV", "uplo n alpha a lda x incx beta y incy", [&] {
    if constexpr (Herm) blas::hemv<T>(handle(), uplo_of(uplo), n, alpha, a, lda, x, incx, beta, y, incy);
    else blas::symv<T>(handle(), uplo_of(uplo), n, alpha, a, lda, x, incx, beta, y, incy);
  });
}
template <class T, bool Herm>
void sbmv(char uplo, I n, I k, T alpha, const T* a, I lda, const T* x, I incx, T beta, T* y, I incy) {
  guarded<T>(Herm ? "HBMV" : "SBMV", "uplo n k alpha a lda x incx beta y incy", [&] {
    if constexpr (Herm) blas::hbmv<T>(handle(), uplo_of(uplo), n, k, alpha, a, lda, x, incx, beta, y, incy);
    else blas::sbmv<T>(handle(), uplo_of(uplo), n, k, alpha, a, lda, x, incx, beta, y, incy);
  });
}
template <class T, bool Herm>
void spmv(char uplo, I n, T alpha, const T* ap, const T* x, I incx, T beta, T* y, I incy) {
  guarded<T>(Herm ? "HPMV" : "SPMV", "uplo n alpha ap x incx beta y incy", [&] {
    if constexpr (Herm) blas::hpmv<T>(handle(), uplo_of(uplo), n, alpha, ap, x, incx, beta, y, incy);
    else blas::spmv<T>(handle(), uplo_of(uplo), n, alpha, ap, x, incx, beta, y, incy);
  });
}

template <class T>
void trmv(char uplo, char trans, char diag, I n, const T* a, I lda, T* x, I incx) {
  guarded<T>("TRMV", "uplo trans diag n a lda x incx",
             [&] { blas::trmv<T>(handle(), uplo_of(uplo), op_of(trans), diag_of(diag), n, a, lda, x, incx); });
}
template <class T>
void tbmv(char uplo, char trans, char diag, I n, I k, const T* a, I lda, T* x, I incx) {
  guarded<T>("TBMV", "uplo trans diag n k a lda x incx",
             [&] { blas::tbmv<T>(handle(), uplo_of(uplo), op_of(trans), diag_of(diag), n, k, a, lda, x, incx); });
}
template <class T>
void tpmv(char uplo, char trans, char diag, I n, const T* ap, T* x, I incx) {
  guarded<T>("TPMV", "uplo trans diag n ap x incx",
             [&] { blas::tpmv<T>(handle(), uplo_of(uplo), op_of(trans), diag_of(diag), n, ap, x, incx); });
}
template <class T>
void trsv(char uplo, char trans, char diag, I n, const T* a, I lda, T* x, I incx) {
  guarded<T>("TRSV", "uplo trans diag n a lda x incx",
             [&] { blas::trsv<T>(handle(), uplo_of(uplo), op_of(trans), diag_of(diag), n, a, lda, x, incx); });
}
template <class T>
void tbsv(char uplo, char trans, char diag, I n, I k, const T* a, I lda, T* x, I incx) {
  guarded<T>("TBSV", "uplo trans diag n k a lda x incx",
             [&] { blas::tbsv<T>(handle(), uplo_of(uplo), op_of(trans), diag_of(diag), n, k, a, lda, x, incx); });
}
template <class T>
void tpsv(char uplo, char trans, char diag, I n, const T* ap, T* x, I incx) {
  guarded<T>("TPSV", "uplo trans diag n ap x incx",
             [&] { blas::tpsv<T>(handle(), uplo_of(uplo), op_of(trans), diag_of(diag), n, ap, x, incx); });
}

// ger (real), geru, gerc: Conj selects gerc.
template <class T, bool Conj>
void ger(I m, I n, T alpha, const T* x, I incx, const T* y, I incy, T* a, I lda) {
  const char* name = !blas::is_complex_v<T> ? "GER" : Conj ? "GERC" : "GERU";
  guarded<T>(name, "m n alpha x incx y incy a lda", [&] {
    if constexpr (Conj) blas::gerc<T>(handle(), m, n, alpha, x, incx, y, incy, a, lda);
    else if constexpr (blas::is_complex_v<T>) blas::geru<T>(handle(), m, n, alpha, x, incx, y, incy, a, lda);
    else blas::ger<T>(handle(), m, n, alpha, x, incx, y, incy, a, lda);
  });
}

template <class T>
void syr(char uplo, I n, T alpha, const T* x, I incx, T* a, I lda) {
  guarded<T>("SYR", "uplo n alpha x incx a lda",
             [&] { blas::syr<T>(handle(), uplo_of(uplo), n, alpha, x, incx, a, lda); });
}
template <class T>
void spr(char uplo, I n, T alpha, const T* x, I incx, T* ap) {
  guarded<T>("SPR", "uplo n alpha x incx ap",
             [&] { blas::spr<T>(handle(), uplo_of(uplo), n, alpha, x, incx, ap); });
}
template <class T>
void syr2(char uplo, I n, T alpha, const T* x, I incx, const T* y, I incy, T* a, I lda) {
  guarded<T>("SYR2", "uplo n alpha x incx y incy a lda",
             [&] { blas::syr2<T>(handle(), uplo_of(uplo), n, alpha, x, incx, y, incy, a, lda); });
}
template <class T>
void spr2(char uplo, I n, T alpha, const T* x, I incx, const T* y, I incy, T* ap) {
  guarded<T>("SPR2", "uplo n alpha x incx y incy ap",
             [&] { blas::spr2<T>(handle(), uplo_of(uplo), n, alpha, x, incx, y, incy, ap); });
}
template <class T>
void her(char uplo, I n, real_t<T> alpha, const T* x, I incx, T* a, I lda) {
  guarded<T>("HER", "uplo n alpha x incx a lda",
             [&] { blas::her<T>(handle(), uplo_of(uplo), n, alpha, x, incx, a, lda); });
}
template <class T>
void hpr(char uplo, I n, real_t<T> alpha, const T* x, I incx, T* ap) {
  guarded<T>("HPR", "uplo n alpha x incx ap",
             [&] { blas::hpr<T>(handle(), uplo_of(uplo), n, alpha, x, incx, ap); });
}
template <class T>
void her2(char uplo, I n, T alpha, const T* x, I incx, const T* y, I incy, T* a, I lda) {
  guarded<T>("HER2", "uplo n alpha x incx y incy a lda",
             [&] { blas::her2<T>(handle(), uplo_of(uplo), n, alpha, x, incx, y, incy, a, lda); });
}
template <class T>
void hpr2(char uplo, I n, T alpha, const T* x, I incx, const T* y, I incy, T* ap) {
  guarded<T>("HPR2", "uplo n alpha x incx y incy ap",
             [&] { blas::hpr2<T>(handle(), uplo_of(uplo), n, alpha, x, incx, y, incy, ap); });
}

// ---- Level 3 ----

template <class T>
void gemm(char ta, char tb, I m, I n, I k, T alpha, const T* a, I lda, const T* b, I ldb, T beta, T* c, I ldc) {
  guarded<T>("GEMM", "transa transb m n k alpha a lda b ldb beta c ldc",
             [&] { blas::gemm<T>(handle(), op_of(ta), op_of(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
}
template <class T, bool Herm>
void symm(char side, char uplo, I m, I n, T alpha, const T* a, I lda, const T* b, I ldb, T beta, T* c, I ldc) {
  guarded<T>(Herm ? "HEMM" : "SYMM",
             "side uplo m n alpha a lda b ldb beta c ldc", [&] {
               if constexpr (Herm)
                 blas::hemm<T>(handle(), side_of(side), uplo_of(uplo), m, n, alpha, a, lda, b, ldb, beta, c, ldc);
               else
                 blas::symm<T>(handle(), side_of(side), uplo_of(uplo), m, n, alpha, a, lda, b, ldb, beta, c, ldc);
             });
}
template <class T>
void syrk(char uplo, char trans, I n, I k, T alpha, const T* a, I lda, T beta, T* c, I ldc) {
  guarded<T>("SYRK", "uplo trans n k alpha a lda beta c ldc",
             [&] { blas::syrk<T>(handle(), uplo_of(uplo), op_of(trans), n, k, alpha, a, lda, beta, c, ldc); });
}
template <class T>
void herk(char uplo, char trans, I n, I k, real_t<T> alpha, const T* a, I lda, real_t<T> beta, T* c, I ldc) {
  guarded<T>("HERK", "uplo trans n k alpha a lda beta c ldc",
             [&] { blas::herk<T>(handle(), uplo_of(uplo), op_of(trans), n, k, alpha, a, lda, beta, c, ldc); });
}
template <class T>
void syr2k(char uplo, char trans, I n, I k, T alpha, const T* a, I lda, const T* b, I ldb, T beta, T* c, I ldc) {
  guarded<T>("SYR2K", "uplo trans n k alpha a lda b ldb beta c ldc", [&] {
    blas::syr2k<T>(handle(), uplo_of(uplo), op_of(trans), n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}
template <class T>
void her2k(char uplo, char trans, I n, I k, T alpha, const T* a, I lda, const T* b, I ldb, real_t<T> beta, T* c,
           I ldc) {
  guarded<T>("HER2K", "uplo trans n k alpha a lda b ldb beta c ldc", [&] {
    blas::her2k<T>(handle(), uplo_of(uplo), op_of(trans), n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}
template <class T, bool Solve>
void trxm(char side, char uplo, char ta, char diag, I m, I n, T alpha, const T* a, I lda, T* b, I ldb) {
  guarded<T>(Solve ? "TRSM" : "TRMM", "side uplo transa diag m n alpha a lda b ldb",
             [&] {
               auto f = Solve ? &blas::trsm<T> : &blas::trmm<T>;
               f(handle(), side_of(side), uplo_of(uplo), op_of(ta), diag_of(diag), m, n, alpha, a, lda, b, ldb);
             });
}

}  // namespace strata::capi::f77
