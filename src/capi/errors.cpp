// The error hooks of the ABI: xerbla_, xerbla_array_, lsame_, cblas_xerbla and the CBLAS
// globals. Unlike the reference, nothing here stops the process: the message is printed and
// the failing routine returns without having written anything.
#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "abi.hpp"

extern "C" {

int RowMajorStrg = 0;
int CBLAS_CallFromC = 0;

void xerbla_(const char* srname, const int* info, size_t srname_len) {
  // Called from a cblas_* wrapper: report in CBLAS terms (one more leading argument).
  if (CBLAS_CallFromC) {
    std::string rout = "cblas_";
    for (size_t i = 0; i < srname_len && srname[i] != ' '; ++i)
      rout += char(std::tolower(static_cast<unsigned char>(srname[i])));
    cblas_xerbla(*info + 1, rout.c_str(), "");
    return;
  }
  int len = int(srname_len);
  while (len > 0 && srname[len - 1] == ' ') --len;
  std::fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n", len, srname, *info);
}

void xerbla_array_(const char* srname_array, const int* srname_len, const int* info, size_t) {
  char name[32];
  std::memset(name, ' ', sizeof name);
  const size_t len = size_t(std::clamp(*srname_len, 0, 32));
  std::memcpy(name, srname_array, len);
  xerbla_(name, info, len);
}

int lsame_(const char* ca, const char* cb, size_t, size_t) {
  return std::toupper(static_cast<unsigned char>(*ca)) == std::toupper(static_cast<unsigned char>(*cb));
}

void cblas_xerbla(int info, const char* rout, const char* form, ...) {
  // Row-major calls swap operands before reaching the Fortran layer; undo that in the
  // reported position so it names the caller's argument (the reference's table).
  if (RowMajorStrg) {
    auto has = [&](const char* s) { return std::strstr(rout, s) != nullptr; };
    auto swap_pair = [&](int a, int b) { info = info == a ? b : info == b ? a : info; };
    if (has("gemm")) {
      swap_pair(4, 5);
      swap_pair(9, 11);
    } else if (has("symm") || has("hemm")) {
      swap_pair(4, 5);
    } else if (has("trmm") || has("trsm")) {
      swap_pair(6, 7);
    } else if (has("gemv")) {
      swap_pair(3, 4);
    } else if (has("gbmv")) {
      swap_pair(3, 4);
      swap_pair(5, 6);
    } else if (has("ger")) {
      swap_pair(2, 3);
      swap_pair(6, 8);
    } else if ((has("her2") || has("hpr2")) && !has("her2k")) {
      swap_pair(6, 8);
    }
  }
  if (info) std::fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
  va_list args;
  va_start(args, form);
  std::vfprintf(stderr, form, args);
  va_end(args);
}

}  // extern "C"

namespace strata::capi {

void report_error(char letter, std::string_view routine, std::string_view params, std::string_view argument) {
  int info = 0;
  int position = 1;
  while (!params.empty()) {
    const std::size_t end = std::min(params.find(' '), params.size());
    const std::string_view p = params.substr(0, end);
    params.remove_prefix(std::min(end + 1, params.size()));
    if (p.size() == argument.size() &&
        std::equal(p.begin(), p.end(), argument.begin(), [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      info = position;
      break;
    }
    ++position;
  }
  char name[6];
  std::memset(name, ' ', sizeof name);
  name[0] = letter;
  std::memcpy(name + 1, routine.data(), std::min<size_t>(routine.size(), 5));
  xerbla_(name, &info, sizeof name);
}

void report_failure(char letter, std::string_view routine, const char* what) {
  std::fprintf(stderr, "strata blas: %c%.*s failed: %s\n", letter, int(routine.size()), routine.data(), what);
}

}  // namespace strata::capi
