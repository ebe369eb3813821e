// The Level 3 routines other than gemm (trsm, trmm, syrk, symm, syr2k; f32) through the CBLAS
// ABI: strata's drop-in libblas.so.3 against another CBLAS library (OpenBLAS), both loaded with
// dlopen side by side and called alternately, 7 times each; prints the median GFLOPS of each
// and the ratio. Run it with OPENBLAS_CORETYPE unset and one thread for both (the command is
// in docs/PERFORMANCE.md): level3_vs_peer N STRATA_LIBBLAS PEER_CBLAS
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

// CBLAS enumerations.
enum { kColMajor = 102, kNoTrans = 111, kTrans = 112, kUpper = 121, kLower = 122, kNonUnit = 131, kLeft = 141, kRight = 142 };

using TriangularFn = void (*)(int, int, int, int, int, int, int, float, const float*, int, float*, int);
using SyrkFn = void (*)(int, int, int, int, int, float, const float*, int, float, float*, int);
using ProductFn = void (*)(int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);

struct Library {
  TriangularFn trsm, trmm;
  SyrkFn syrk;
  ProductFn symm, syr2k;
};

Library load(const char* path) {
  void* so = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!so) {
    std::fprintf(stderr, "level3_vs_peer: %s\n", dlerror());
    std::exit(1);
  }
  Library lib{reinterpret_cast<TriangularFn>(dlsym(so, "cblas_strsm")),
              reinterpret_cast<TriangularFn>(dlsym(so, "cblas_strmm")), reinterpret_cast<SyrkFn>(dlsym(so, "cblas_ssyrk")),
              reinterpret_cast<ProductFn>(dlsym(so, "cblas_ssymm")), reinterpret_cast<ProductFn>(dlsym(so, "cblas_ssyr2k"))};
  if (!lib.trsm || !lib.trmm || !lib.syrk || !lib.symm || !lib.syr2k) {
    std::fprintf(stderr, "level3_vs_peer: %s lacks a cblas_s* Level 3 routine\n", path);
    std::exit(1);
  }
  return lib;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s N STRATA_LIBBLAS PEER_CBLAS\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const Library libs[2] = {load(argv[2]), load(argv[3])};
  std::vector<float> A(size_t(n) * n), B(A.size()), W(A.size());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < A.size(); ++i) A[i] = dist(rng), B[i] = dist(rng);
  for (int i = 0; i < n; ++i) A[size_t(i) * n + i] = float(n);  // a well-conditioned triangle
  struct Case {
    const char* name;
    double flops;
  };
  const double n3 = double(n) * n * n;
  const Case cases[] = {{"trsm L L N N", n3}, {"trsm R U N N", n3}, {"trmm L L N N", n3}, {"syrk U N", n3},
                        {"syrk L T", n3},     {"symm L U", 2 * n3}, {"syr2k U N", 2 * n3}};
  std::printf("%-14s %6s %12s %12s %8s\n", "routine", "n", "strata GF/s", "peer GF/s", "ratio");
  for (int c = 0; c < 7; ++c) {
    std::vector<double> seconds[2];
    for (int rep = 0; rep < 7; ++rep)
      for (int l = 0; l < 2; ++l) {
        W = B;
        const Library& L = libs[l];
        const auto t0 = std::chrono::steady_clock::now();
        switch (c) {
          case 0: L.trsm(kColMajor, kLeft, kLower, kNoTrans, kNonUnit, n, n, 1.f, A.data(), n, W.data(), n); break;
          case 1: L.trsm(kColMajor, kRight, kUpper, kNoTrans, kNonUnit, n, n, 1.f, A.data(), n, W.data(), n); break;
          case 2: L.trmm(kColMajor, kLeft, kLower, kNoTrans, kNonUnit, n, n, 1.f, A.data(), n, W.data(), n); break;
          case 3: L.syrk(kColMajor, kUpper, kNoTrans, n, n, 1.f, A.data(), n, 0.f, W.data(), n); break;
          case 4: L.syrk(kColMajor, kLower, kTrans, n, n, 1.f, A.data(), n, 0.f, W.data(), n); break;
          case 5: L.symm(kColMajor, kLeft, kUpper, n, n, 1.f, A.data(), n, B.data(), n, 0.f, W.data(), n); break;
          case 6: L.syr2k(kColMajor, kUpper, kNoTrans, n, n, 1.f, A.data(), n, B.data(), n, 0.f, W.data(), n); break;
        }
        seconds[l].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    double gflops[2];
    for (int l = 0; l < 2; ++l) {
      std::sort(seconds[l].begin(), seconds[l].end());
      gflops[l] = cases[c].flops / seconds[l][seconds[l].size() / 2] / 1e9;
    }
    std::printf("%-14s %6d %12.1f %12.1f %8.2f\n", cases[c].name, n, gflops[0], gflops[1], gflops[0] / gflops[1]);
  }
}
