// Shared fixtures of the strata::blas tests: the four scalar types, the ISA paths and thread
// counts every sweep runs under, and the comparison against a wide-precision reference.
#pragma once
#include <gtest/gtest.h>

#include <optional>

#include "reference/blas_dense.hpp"
#include "support/isas.hpp"
#include "strata/blas/handle.hpp"
#include "strata/core/isa.hpp"

namespace strata::blastest {

using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;

// Every ISA this CPU runs, each with 1 and 2 threads.
struct Config {
  Isa isa;
  int threads;
};
inline std::vector<Config> configs() {
  std::vector<Config> out;
  for (Isa i : strata::test::usable_isas())
    for (int t : {1, 2}) out.push_back({i, t});
  return out;
}

struct IsaScope {
  explicit IsaScope(Isa i) { set_isa_override(i); }
  ~IsaScope() { set_isa_override(std::nullopt); }
};

template <class T>
void expect_close(const T& got, const testref::wide_t<T>& want, double scale, double tol, const std::string& what) {
  const double err = double(std::abs(testref::wide_t<T>(got) - want));
  ASSERT_LE(err, tol * std::max(1.0, scale)) << what << ": got " << got << ", want " << T(want);
}

}  // namespace strata::blastest
