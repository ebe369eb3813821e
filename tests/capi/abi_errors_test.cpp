// The xerbla contract of the ABI, checked from a program that installs its own xerbla_ and
// cblas_xerbla (as the netlib tests and LAPACK users do): every rejected argument is reported
// with the reference's routine name and parameter position, and nothing is written.
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <string>
#include <vector>

namespace {
std::string g_name;
int g_info = -1;
std::string g_cblas_rout;
int g_cblas_info = -1;
}  // namespace

extern "C" {
void xerbla_(const char* srname, const int* info, size_t len) {
  g_name.assign(srname, len);
  while (!g_name.empty() && g_name.back() == ' ') g_name.pop_back();
  g_info = *info;
}
void cblas_xerbla(int info, const char* rout, const char*, ...) {
  g_cblas_rout = rout;
  g_cblas_info = info;
}
int lsame_(const char*, const char*, size_t, size_t);
void dgemv_(const char*, const int*, const int*, const double*, const double*, const int*, const double*, const int*,
            const double*, double*, const int*, size_t);
void dgbmv_(const char*, const int*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t);
void dtrsv_(const char*, const char*, const char*, const int*, const double*, const int*, double*, const int*, size_t,
            size_t, size_t);
void dger_(const int*, const int*, const double*, const double*, const int*, const double*, const int*, double*,
           const int*);
void zher2_(const char*, const int*, const void*, const void*, const int*, const void*, const int*, void*, const int*,
            size_t);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dsymm_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const double*,
            const int*, const double*, double*, const int*, size_t, size_t);
void zherk_(const char*, const char*, const int*, const int*, const double*, const void*, const int*, const double*,
            void*, const int*, size_t, size_t);
void dtrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const double*, const double*,
            const int*, double*, const int*, size_t, size_t, size_t, size_t);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
void cblas_dgemv(int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
}

namespace {

struct Case {
  const char* what;
  std::function<void(double* out)> call;  // writes (if at all) into out
  const char* name;
  int info;
};

constexpr double kSentinel = 12345.0;

void expect_reported(const Case& c) {
  std::vector<double> out(64, kSentinel);
  g_name.clear();
  g_info = -1;
  c.call(out.data());
  EXPECT_EQ(g_name, c.name) << c.what;
  EXPECT_EQ(g_info, c.info) << c.what;
  for (double v : out) ASSERT_EQ(v, kSentinel) << c.what << ": output written despite the error";
}

TEST(CapiXerbla, FortranRoutinesReportReferencePositions) {
  const double one = 1.0, a[64] = {};
  const std::complex<double> z1 = 1.0, za[32] = {};
  const int i0 = 0, i1 = 1, i2 = 2, im1 = -1, i4 = 4;
  const std::vector<Case> cases = {
      {"gemv trans", [&](double* y) { dgemv_("X", &i2, &i2, &one, a, &i2, a, &i1, &one, y, &i1, 1); }, "DGEMV", 1},
      {"gemv m", [&](double* y) { dgemv_("N", &im1, &i2, &one, a, &i2, a, &i1, &one, y, &i1, 1); }, "DGEMV", 2},
      {"gemv n", [&](double* y) { dgemv_("N", &i2, &im1, &one, a, &i2, a, &i1, &one, y, &i1, 1); }, "DGEMV", 3},
      {"gemv lda", [&](double* y) { dgemv_("N", &i2, &i2, &one, a, &i1, a, &i1, &one, y, &i1, 1); }, "DGEMV", 6},
      {"gemv incx", [&](double* y) { dgemv_("N", &i2, &i2, &one, a, &i2, a, &i0, &one, y, &i1, 1); }, "DGEMV", 8},
      {"gemv incy", [&](double* y) { dgemv_("N", &i2, &i2, &one, a, &i2, a, &i1, &one, y, &i0, 1); }, "DGEMV", 11},
      {"gbmv kl", [&](double* y) { dgbmv_("N", &i2, &i2, &im1, &i1, &one, a, &i4, a, &i1, &one, y, &i1, 1); }, "DGBMV", 4},
      {"gbmv ku", [&](double* y) { dgbmv_("N", &i2, &i2, &i1, &im1, &one, a, &i4, a, &i1, &one, y, &i1, 1); }, "DGBMV", 5},
      {"gbmv lda", [&](double* y) { dgbmv_("N", &i2, &i2, &i1, &i1, &one, a, &i2, a, &i1, &one, y, &i1, 1); }, "DGBMV", 8},
      {"trsv uplo", [&](double* x) { dtrsv_("X", "N", "N", &i2, a, &i2, x, &i1, 1, 1, 1); }, "DTRSV", 1},
      {"trsv trans", [&](double* x) { dtrsv_("U", "X", "N", &i2, a, &i2, x, &i1, 1, 1, 1); }, "DTRSV", 2},
      {"trsv diag", [&](double* x) { dtrsv_("U", "N", "X", &i2, a, &i2, x, &i1, 1, 1, 1); }, "DTRSV", 3},
      {"trsv n", [&](double* x) { dtrsv_("U", "N", "N", &im1, a, &i2, x, &i1, 1, 1, 1); }, "DTRSV", 4},
      {"trsv lda", [&](double* x) { dtrsv_("U", "N", "N", &i2, a, &i1, x, &i1, 1, 1, 1); }, "DTRSV", 6},
      {"trsv incx", [&](double* x) { dtrsv_("U", "N", "N", &i2, a, &i2, x, &i0, 1, 1, 1); }, "DTRSV", 8},
      {"ger m", [&](double* o) { dger_(&im1, &i2, &one, a, &i1, a, &i1, o, &i2); }, "DGER", 1},
      {"ger incy", [&](double* o) { dger_(&i2, &i2, &one, a, &i1, a, &i0, o, &i2); }, "DGER", 7},
      {"ger lda", [&](double* o) { dger_(&i2, &i2, &one, a, &i1, a, &i1, o, &i1); }, "DGER", 9},
      {"her2 incy", [&](double* o) { zher2_("U", &i2, &z1, za, &i1, za, &i0, o, &i2, 1); }, "ZHER2", 7},
      {"gemm transb", [&](double* c) { dgemm_("N", "X", &i2, &i2, &i2, &one, a, &i2, a, &i2, &one, c, &i2, 1, 1); }, "DGEMM", 2},
      {"gemm k", [&](double* c) { dgemm_("N", "N", &i2, &i2, &im1, &one, a, &i2, a, &i2, &one, c, &i2, 1, 1); }, "DGEMM", 5},
      {"gemm ldb", [&](double* c) { dgemm_("N", "N", &i2, &i2, &i2, &one, a, &i2, a, &i1, &one, c, &i2, 1, 1); }, "DGEMM", 10},
      {"gemm ldc", [&](double* c) { dgemm_("N", "N", &i2, &i2, &i2, &one, a, &i2, a, &i2, &one, c, &i1, 1, 1); }, "DGEMM", 13},
      {"symm side", [&](double* c) { dsymm_("X", "U", &i2, &i2, &one, a, &i2, a, &i2, &one, c, &i2, 1, 1); }, "DSYMM", 1},
      {"symm lda (right)", [&](double* c) { dsymm_("R", "U", &i1, &i2, &one, a, &i1, a, &i1, &one, c, &i1, 1, 1); }, "DSYMM", 7},
      {"herk trans T", [&](double* c) { zherk_("U", "T", &i2, &i2, &one, za, &i2, &one, c, &i2, 1, 1); }, "ZHERK", 2},
      {"trsm diag", [&](double* b) { dtrsm_("L", "U", "N", "X", &i2, &i2, &one, a, &i2, b, &i2, 1, 1, 1, 1); }, "DTRSM", 4},
      {"trsm ldb", [&](double* b) { dtrsm_("L", "U", "N", "N", &i2, &i2, &one, a, &i2, b, &i1, 1, 1, 1, 1); }, "DTRSM", 11},
  };
  for (const Case& c : cases) expect_reported(c);
}

TEST(CapiXerbla, CblasEnumsAndRowMajorPositions) {
  const double a[16] = {};
  std::vector<double> c(16, kSentinel);
  g_cblas_info = -1;
  cblas_dgemm(999, 111, 111, 2, 2, 2, 1.0, a, 2, a, 2, 1.0, c.data(), 2);  // bad layout
  EXPECT_EQ(g_cblas_rout, "cblas_dgemm");
  EXPECT_EQ(g_cblas_info, 1);
  cblas_dgemm(102, 111, 999, 2, 2, 2, 1.0, a, 2, a, 2, 1.0, c.data(), 2);  // bad TransB
  EXPECT_EQ(g_cblas_info, 3);
  // Errors found by the Fortran layer arrive at xerbla_ with the Fortran position; a row-major
  // gemv swaps m and n, so a bad M is the Fortran N (3).
  g_info = -1;
  cblas_dgemv(101, 111, -1, 2, 1.0, a, 2, a, 1, 1.0, c.data(), 1);
  EXPECT_EQ(g_name, "DGEMV");
  EXPECT_EQ(g_info, 3);
  for (double v : c) EXPECT_EQ(v, kSentinel);
}

TEST(CapiXerbla, LsameIgnoresCase) {
  EXPECT_TRUE(lsame_("a", "A", 1, 1));
  EXPECT_TRUE(lsame_("N", "n", 1, 1));
  EXPECT_FALSE(lsame_("N", "T", 1, 1));
}

}  // namespace
