// Shared plumbing of the BLAS ABI: the error hooks every routine reports through (xerbla_,
// cblas_xerbla and the CBLAS globals), character arguments to strata enums, and guarded()
// which turns a strata::Error into the reference's xerbla call.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"
#include "strata/core/status.hpp"

extern "C" {
// Interposable: programs (and the netlib tests) install their own.
void xerbla_(const char* srname, const int* info, size_t srname_len);
void cblas_xerbla(int info, const char* rout, const char* form, ...);
// CBLAS state read by cblas_xerbla (the reference's names; test programs read them too).
extern int RowMajorStrg;
extern int CBLAS_CallFromC;
}

namespace strata::capi {

using blas::c128;
using blas::c64;
using blas::Diag;
using blas::Op;
using blas::Side;
using blas::Uplo;

// The ABI runs on the process-wide default handle.
inline const blas::Handle& handle() { return blas::default_handle(); }

// Fortran characters, case-insensitive like LSAME. Anything else maps to an invalid enum
// value, which the C++ checks reject with the argument's name.
inline char upper(char c) { return (c >= 'a' && c <= 'z') ? char(c - 'a' + 'A') : c; }
inline Op op_of(char c) { return Op(upper(c)); }
inline Uplo uplo_of(char c) { return Uplo(upper(c)); }
inline Diag diag_of(char c) { return Diag(upper(c)); }
inline Side side_of(char c) { return Side(upper(c)); }

// The letter a routine's name starts with for type T (S, D, C, Z).
template <class T>
constexpr char type_letter() {
  if constexpr (std::is_same_v<T, float>) return 'S';
  else if constexpr (std::is_same_v<T, double>) return 'D';
  else if constexpr (std::is_same_v<T, c64>) return 'C';
  else return 'Z';
}

// Reports a rejected argument as the reference does: xerbla_(NAME, position), NAME padded
// to six characters; `params` names the routine's parameters in order, separated by spaces (one
// string in read-only data: as a braced list of string_views it was 26 stores on every call,
// a tenth of a 4^3 sgemm through the ABI).
void report_error(char letter, std::string_view routine, std::string_view params,
                  std::string_view argument);
// Exceptions must never cross into C or Fortran callers; anything other than a rejected
// argument is printed and the call returns.
void report_failure(char letter, std::string_view routine, const char* what);

template <class T, class Fn>
void guarded(std::string_view routine, const char* params, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    if (e.status() == Status::invalid_argument) report_error(type_letter<T>(), routine, params, e.argument());
    else report_failure(type_letter<T>(), routine, e.what());
  } catch (const std::exception& e) {
    report_failure(type_letter<T>(), routine, e.what());
  }
}

// RAII for the CBLAS globals around one cblas_* call, as the reference sets them.
class CblasCall {
 public:
  CblasCall() {
    RowMajorStrg = 0;
    CBLAS_CallFromC = 1;
  }
  ~CblasCall() {
    CBLAS_CallFromC = 0;
    RowMajorStrg = 0;
  }
  CblasCall(const CblasCall&) = delete;
  CblasCall& operator=(const CblasCall&) = delete;
};

}  // namespace strata::capi
