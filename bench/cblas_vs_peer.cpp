// BLAS routines beyond gemm through the CBLAS ABI: strata's drop-in libblas.so.3 against another
// CBLAS library (OpenBLAS), both loaded with dlopen side by side and called alternately, 9
// batches each; prints the median GFLOPS of each and the ratio. Level 2: gemv (N, T, strided), trsv,
// trmv, symv, ger, syr, tbsv, cgemv, ctrsv; Level 3: trsm, trmm, syrk, symm, syr2k (f32), cherk and,
// for scale, dgemm, cgemm and zgemm; the `gemm` group: sgemm at fixed shapes `strata bench gemm`
// leaves out (N is ignored): blocks of a larger matrix (leading dimension 1024, as LAPACK and
// Level 3 routines pass them), products of few rows and columns over a long depth (Gram
// matrices, NN and TN) and tiny square products (4^3-64^3: the cost of a call).
// Run it with OPENBLAS_CORETYPE unset and one thread for both (the command is in
// docs/PERFORMANCE.md): cblas_vs_peer N STRATA_LIBBLAS PEER_CBLAS [level1|level2|level3|gemm]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

// CBLAS enumerations.
enum : int { kCol = 102, kN = 111, kT = 112, kC = 113, kUp = 121, kLo = 122, kNonUnit = 131, kLeft = 141, kRight = 142 };

struct Library {
  void* so;
  // The named routine as type F (exits when the library lacks it).
  template <class F>
  F get(const char* name) const {
    void* p = dlsym(so, name);
    if (!p) {
      std::fprintf(stderr, "cblas_vs_peer: no %s\n", name);
      std::exit(1);
    }
    return reinterpret_cast<F>(p);
  }
};

Library load(const char* path) {
  void* so = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!so) {
    std::fprintf(stderr, "cblas_vs_peer: %s\n", dlerror());
    std::exit(1);
  }
  return {so};
}

using Gemv = void (*)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Trsv = void (*)(int, int, int, int, int, const float*, int, float*, int);
using Tbsv = void (*)(int, int, int, int, int, int, const float*, int, float*, int);
using Symv = void (*)(int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Ger = void (*)(int, int, int, float, const float*, int, const float*, int, float*, int);
using Amax = size_t (*)(int, const void*, int);
using Asum = float (*)(int, const float*, int);
using Rot = void (*)(int, float*, int, float*, int, float, float);
using Nrm2 = float (*)(int, const void*, int);
using Syr = void (*)(int, int, int, float, const float*, int, float*, int);
using Cgemv = void (*)(int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*, int);
using Ctrsv = void (*)(int, int, int, int, int, const void*, int, void*, int);
using Chemv = void (*)(int, int, int, const void*, const void*, int, const void*, int, const void*, void*, int);
using Cdot = void (*)(int, const void*, int, const void*, int, void*);
using Trsm = void (*)(int, int, int, int, int, int, int, float, const float*, int, float*, int);
using Syrk = void (*)(int, int, int, int, int, float, const float*, int, float, float*, int);
using Product = void (*)(int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Herk = void (*)(int, int, int, int, int, float, const void*, int, float, void*, int);
using ComplexGemm = void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*,
                             void*, int);
using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                       int);

struct Case {
  const char* name;
  int level;
  double flops;
  std::function<void(const Library&)> run;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s N STRATA_LIBBLAS PEER_CBLAS [level1|level2|level3|gemm]\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const char* group = argc > 4 ? argv[4] : "";
  const int only = std::strcmp(group, "level1") == 0   ? 1
                   : std::strcmp(group, "level2") == 0 ? 2
                   : std::strcmp(group, "level3") == 0 ? 3
                   : std::strcmp(group, "gemm") == 0   ? 4
                                                       : 0;
  const Library libs[2] = {load(argv[2]), load(argv[3])};
  using cf = std::complex<float>;
  const size_t nn = size_t(n) * size_t(n);
  const size_t len = static_cast<size_t>(n);
  std::vector<float> A(nn), B(nn), W(nn), x(len, 1.f), y(len), v(len);
  std::vector<cf> Ac(nn, cf(0.001f, 0.002f)), xc(len, cf(1, 1)), yc(len);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < nn; ++i) A[i] = 1e-3f * dist(rng), B[i] = dist(rng);
  for (int i = 0; i < n; ++i) A[size_t(i) * n + i] = 2.f, Ac[size_t(i) * n + i] = cf(2, 0);  // well-conditioned triangles
  const double n2 = double(n) * n, n3 = n2 * n;
  const float one = 1, zero = 0;
  const cf cone(1, 0), czero(0, 0);
  using cd = std::complex<double>;
  const cd zone(1, 0), zzero(0, 0);
  std::vector<cf> Bc(nn, cf(0.5f, -0.25f)), Wc(nn);
  std::vector<cd> Az(nn, cd(0.001, 0.002)), Bz(nn, cd(0.5, -0.25)), Wz(nn);
  std::vector<double> Ad(A.begin(), A.end()), Bd(B.begin(), B.end()), Wd(nn);
  const std::vector<Case> cases = {
      // Level 1 over n^2 elements (the matrices' storage as vectors).
      {"isamax (n^2)", 1, n2, [&](const Library& l) { volatile size_t r = l.get<Amax>("cblas_isamax")(n * n, B.data(), 1); (void)r; }},
      {"icamax (n^2)", 1, n2, [&](const Library& l) { volatile size_t r = l.get<Amax>("cblas_icamax")(n * n, Bc.data(), 1); (void)r; }},
      {"sasum (n^2)", 1, n2, [&](const Library& l) { volatile float r = l.get<Asum>("cblas_sasum")(n * n, B.data(), 1); (void)r; }},
      {"snrm2 (n^2)", 1, 2 * n2, [&](const Library& l) { volatile float r = l.get<Nrm2>("cblas_snrm2")(n * n, B.data(), 1); (void)r; }},
      {"scnrm2 (n^2)", 1, 4 * n2, [&](const Library& l) { volatile float r = l.get<Nrm2>("cblas_scnrm2")(n * n, Bc.data(), 1); (void)r; }},
      {"srot (n^2)", 1, 6 * n2, [&](const Library& l) { l.get<Rot>("cblas_srot")(n * n, B.data(), 1, W.data(), 1, 0.8f, 0.6f); }},
      {"sgemv N", 2, 2 * n2, [&](const Library& l) { l.get<Gemv>("cblas_sgemv")(kCol, kN, n, n, one, A.data(), n, x.data(), 1, zero, y.data(), 1); }},
      {"sgemv T", 2, 2 * n2, [&](const Library& l) { l.get<Gemv>("cblas_sgemv")(kCol, kT, n, n, one, A.data(), n, x.data(), 1, zero, y.data(), 1); }},
      {"sgemv N inc 3", 2, 2 * n2 / 9, [&](const Library& l) { l.get<Gemv>("cblas_sgemv")(kCol, kN, n / 3, n / 3, one, A.data(), n, x.data(), 3, zero, y.data(), 3); }},
      {"strsv L N N", 2, n2, [&](const Library& l) { v = x; l.get<Trsv>("cblas_strsv")(kCol, kLo, kN, kNonUnit, n, A.data(), n, v.data(), 1); }},
      {"strsv U T N", 2, n2, [&](const Library& l) { v = x; l.get<Trsv>("cblas_strsv")(kCol, kUp, kT, kNonUnit, n, A.data(), n, v.data(), 1); }},
      {"strmv L N N", 2, n2, [&](const Library& l) { v = x; l.get<Trsv>("cblas_strmv")(kCol, kLo, kN, kNonUnit, n, A.data(), n, v.data(), 1); }},
      {"stbsv L N k16", 2, 2.0 * n * 16, [&](const Library& l) { v = x; l.get<Tbsv>("cblas_stbsv")(kCol, kLo, kN, kNonUnit, n, 16, A.data(), 17, v.data(), 1); }},
      {"ssymv U", 2, 2 * n2, [&](const Library& l) { l.get<Symv>("cblas_ssymv")(kCol, kUp, n, one, A.data(), n, x.data(), 1, zero, y.data(), 1); }},
      {"sger", 2, 2 * n2, [&](const Library& l) { l.get<Ger>("cblas_sger")(kCol, n, n, 1e-9f, x.data(), 1, x.data(), 1, W.data(), n); }},
      {"ssyr U", 2, n2, [&](const Library& l) { l.get<Syr>("cblas_ssyr")(kCol, kUp, n, 1e-9f, x.data(), 1, W.data(), n); }},
      {"cgemv N", 2, 8 * n2, [&](const Library& l) { l.get<Cgemv>("cblas_cgemv")(kCol, kN, n, n, &cone, Ac.data(), n, xc.data(), 1, &czero, yc.data(), 1); }},
      {"ctrsv L N N", 2, 4 * n2, [&](const Library& l) { yc = xc; l.get<Ctrsv>("cblas_ctrsv")(kCol, kLo, kN, kNonUnit, n, Ac.data(), n, yc.data(), 1); }},
      {"cgemv C", 2, 8 * n2, [&](const Library& l) { l.get<Cgemv>("cblas_cgemv")(kCol, kC, n, n, &cone, Ac.data(), n, xc.data(), 1, &czero, yc.data(), 1); }},
      {"chemv U", 2, 8 * n2, [&](const Library& l) { l.get<Chemv>("cblas_chemv")(kCol, kUp, n, &cone, Ac.data(), n, xc.data(), 1, &czero, yc.data(), 1); }},
      {"ctrsv U C N", 2, 4 * n2, [&](const Library& l) { yc = xc; l.get<Ctrsv>("cblas_ctrsv")(kCol, kUp, kC, kNonUnit, n, Ac.data(), n, yc.data(), 1); }},
      {"cdotc (n^2)", 2, 8 * n2, [&](const Library& l) { cf r; l.get<Cdot>("cblas_cdotc_sub")(n * n, Ac.data(), 1, Bc.data(), 1, &r); }},
      {"strsm L L N N", 3, n3, [&](const Library& l) { W = B; l.get<Trsm>("cblas_strsm")(kCol, kLeft, kLo, kN, kNonUnit, n, n, one, A.data(), n, W.data(), n); }},
      {"strsm R U N N", 3, n3, [&](const Library& l) { W = B; l.get<Trsm>("cblas_strsm")(kCol, kRight, kUp, kN, kNonUnit, n, n, one, A.data(), n, W.data(), n); }},
      {"strmm L L N N", 3, n3, [&](const Library& l) { W = B; l.get<Trsm>("cblas_strmm")(kCol, kLeft, kLo, kN, kNonUnit, n, n, one, A.data(), n, W.data(), n); }},
      {"ssyrk U N", 3, n3, [&](const Library& l) { l.get<Syrk>("cblas_ssyrk")(kCol, kUp, kN, n, n, one, B.data(), n, zero, W.data(), n); }},
      {"ssyrk L T", 3, n3, [&](const Library& l) { l.get<Syrk>("cblas_ssyrk")(kCol, kLo, kT, n, n, one, B.data(), n, zero, W.data(), n); }},
      {"ssymm L U", 3, 2 * n3, [&](const Library& l) { l.get<Product>("cblas_ssymm")(kCol, kLeft, kUp, n, n, one, A.data(), n, B.data(), n, zero, W.data(), n); }},
      {"ssyr2k U N", 3, 2 * n3, [&](const Library& l) { l.get<Product>("cblas_ssyr2k")(kCol, kUp, kN, n, n, one, A.data(), n, B.data(), n, zero, W.data(), n); }},
      {"cherk U N", 3, 4 * n3, [&](const Library& l) { l.get<Herk>("cblas_cherk")(kCol, kUp, kN, n, n, 1.f, Bc.data(), n, 0.f, Wc.data(), n); }},
      {"dgemm N N", 3, 2 * n3, [&](const Library& l) { l.get<Dgemm>("cblas_dgemm")(kCol, kN, kN, n, n, n, 1.0, Ad.data(), n, Bd.data(), n, 0.0, Wd.data(), n); }},
      {"cgemm N N", 3, 8 * n3, [&](const Library& l) { l.get<ComplexGemm>("cblas_cgemm")(kCol, kN, kN, n, n, n, &cone, Ac.data(), n, Bc.data(), n, &czero, Wc.data(), n); }},
      {"zgemm N N", 3, 8 * n3, [&](const Library& l) { l.get<ComplexGemm>("cblas_zgemm")(kCol, kN, kN, n, n, n, &zone, Az.data(), n, Bz.data(), n, &zzero, Wz.data(), n); }},
  };
  // The gemm group's operands: the largest product's op(A), op(B) and C at their leading dimension.
  struct Shape {
    int ta, m, n, k, ld;
  };
  const Shape shapes[] = {{kN, 64, 1024, 64, 1024}, {kN, 64, 64, 64, 1024},  {kN, 960, 960, 64, 1024},
                          {kT, 960, 960, 64, 1024}, {kN, 8, 8, 1024, 0},     {kT, 8, 8, 1024, 0},
                          {kN, 4, 4, 4096, 0},      {kT, 12, 12, 512, 0},    {kT, 24, 24, 4096, 0},
                          {kN, 24, 100, 300, 0},    {kN, 1024, 16, 1024, 0}, {kT, 32, 32, 2048, 0},
                          // Tiny square products: mostly the cost of a call (GFLOPS = flops per ns).
                          {kN, 4, 4, 4, 0},         {kN, 8, 8, 8, 0},        {kN, 16, 16, 16, 0},
                          {kN, 32, 32, 32, 0},      {kN, 64, 64, 64, 0}};
  std::vector<float> Ag(size_t(4096) * 1024, 0.5f), Bg(size_t(4096) * 1024, 0.25f), Cg(size_t(1024) * 1024);
  // Looked up once: a dlsym per call (~25 ns) weighed on the tiny products' times.
  const Sgemm sgemm_of[2] = {libs[0].get<Sgemm>("cblas_sgemm"), libs[1].get<Sgemm>("cblas_sgemm")};
  std::vector<Case> all = cases;
  std::vector<std::string> names;
  names.reserve(std::size(shapes));
  for (const Shape& g : shapes) {
    const int lda = std::max(g.ld, g.ta == kN ? g.m : g.k), ldb = std::max(g.ld, g.k), ldc = std::max(g.ld, g.m);
    char name[64];
    std::snprintf(name, sizeof name, "sgemm %c %dx%dx%d%s", g.ta == kN ? 'N' : 'T', g.m, g.n, g.k, g.ld ? " ld1024" : "");
    names.push_back(name);
    all.push_back({names.back().c_str(), 4, 2.0 * g.m * g.n * g.k, [&, g, lda, ldb, ldc](const Library& l) {
                     sgemm_of[&l == &libs[0] ? 0 : 1](kCol, g.ta, kN, g.m, g.n, g.k, one, Ag.data(), lda, Bg.data(),
                                                       ldb, zero, Cg.data(), ldc);
                   }});
  }
  std::printf("%-26s %6s %12s %12s %8s\n", "routine", "n", "strata GF/s", "peer GF/s", "ratio");
  for (const Case& c : all) {
    if (c.level == 4 && only != 4) continue;
    if (only && c.level != only) continue;
    // Calls are timed in batches of about 20 ms (at least one call), so a call of a fraction of
    // a millisecond is measured with the library's data in cache, as in a loop of calls, and
    // the median of 9 batches per library is not one interrupted call.
    const auto t0 = std::chrono::steady_clock::now();
    c.run(libs[0]);
    const double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int batch = std::max(1, int(0.02 / std::max(once, 1e-7)));
    std::vector<double> seconds[2];
    for (int rep = 0; rep < 9; ++rep)
      for (int l = 0; l < 2; ++l) {
        const auto start = std::chrono::steady_clock::now();
        for (int b = 0; b < batch; ++b) c.run(libs[l]);
        seconds[l].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / batch);
      }
    double gflops[2];
    for (int l = 0; l < 2; ++l) {
      std::sort(seconds[l].begin(), seconds[l].end());
      gflops[l] = c.flops / seconds[l][seconds[l].size() / 2] / 1e9;
    }
    std::printf("%-26s %6d %12.2f %12.2f %8.2f\n", c.name, c.level == 4 ? 0 : n, gflops[0], gflops[1],
                gflops[0] / gflops[1]);
  }
}
