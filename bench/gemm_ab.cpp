// sgemm A/B of two builds of libstrata_blas inside one process: both libraries are dlopen'ed
// side by side (RTLD_LOCAL | RTLD_DEEPBIND, so each calls its own code) and batches of calls
// alternate between them, in A B B A order, so clock drift and the other core's load hit both
// alike. Separate processes run one after the other measured ~5% apart on the same build
// here; two copies of one library in this harness agree within ~1%. Code layout still moves a
// build by a few percent (hot loops landing differently), so small differences deserve an A/A
// run (the same library file twice) for scale. bench/compare_builds.sh drives it. At 2 threads
// each library has its own pool, whose spinning workers take the core the other needs: compare
// thread counts with bench/gemm_threads.cpp (one build, one pool) instead.
// Usage: gemm_ab OLD.so NEW.so ROUNDS OPS THREADS M N K [M N K ...]   (OPS: NN, NT, TN or TT)
// AB_TYPE=u8s8s32 (A u8 over its full range), u7s8s32 (A below 128: the byte-quad kernel) or
// s8s8s32 (the same bytes read as s8)
// times the integer gemm_ex instead of sgemm; AB_TYPE=bf16 the bf16 gemm_ex; AB_TYPE=strsm or strmm (side left, lower, no
// transpose: A is M x M, B is M x N; K unused) or ssyrk (upper, no transpose: C is M x M,
// A is M x K; N unused) a Level 3 routine on top of the engine; AB_TYPE=ssymv or ssyr (upper, M x M),
// sgemv_n, sgemv_t or sger (A is M x N) a Level 2 one (K unused); AB_TYPE=sbatch or dbatch
// gemm_strided_batched in f32 or f64 over AB_BATCH entries (default 1000), each its own operands;
// AB_TYPE=bf16batch or u8batch gemm_strided_batched_ex on bf16 or u8 x s8 -> s32 entries likewise.
#include <dlfcn.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"
#include "strata/core/dtype.hpp"
#include "strata/blas/level3.hpp"

namespace {

using strata::DType;
using strata::blas::Handle;
using strata::blas::Diag;
using strata::blas::Op;
using strata::blas::Side;
using strata::blas::Uplo;

// The entry points used, by their mangled names (the libraries are not linked).
struct Library {
  Handle& (*handle)();
  void (*set_threads)(Handle*, int);
  void (*gemm)(const Handle&, Op, Op, long, long, long, float, const void*, DType, long, const void*, DType, long,
               float, float*, long);
  void (*gemm_i32)(const Handle&, Op, Op, long, long, long, int32_t, const void*, DType, long, const void*, DType,
                   long, int32_t, int32_t*, long);
  using Triangular = void (*)(const Handle&, Side, Uplo, Op, Diag, long, long, float, const float*, long, float*, long);
  Triangular trsm, trmm;
  void (*syrk)(const Handle&, Uplo, Op, long, long, float, const float*, long, float, float*, long);
  void (*symv)(const Handle&, Uplo, long, float, const float*, long, const float*, long, float, float*, long);
  void (*gemv)(const Handle&, Op, long, long, float, const float*, long, const float*, long, float, float*, long);
  void (*ger)(const Handle&, long, long, float, const float*, long, const float*, long, float*, long);
  void (*syr)(const Handle&, Uplo, long, float, const float*, long, float*, long);
  void (*batched)(const Handle&, Op, Op, long, long, long, float, const float*, long, long, const float*, long, long,
                  float, float*, long, long, long);
  void (*batched_ex)(const Handle&, Op, Op, long, long, long, float, const void*, DType, long, long, const void*, DType,
                     long, long, float, float*, long, long, long);
  void (*batched_i32)(const Handle&, Op, Op, long, long, long, int32_t, const void*, DType, long, long, const void*,
                      DType, long, long, int32_t, int32_t*, long, long, long);
  void (*dbatched)(const Handle&, Op, Op, long, long, long, double, const double*, long, long, const double*, long,
                   long, double, double*, long, long, long);
};

Library load(const char* path, int threads) {
  void* so = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!so) {
    std::fprintf(stderr, "gemm_ab: %s\n", dlerror());
    std::exit(1);
  }
  Library lib;
  lib.handle = reinterpret_cast<Handle& (*)()>(dlsym(so, "_ZN6strata4blas14default_handleEv"));
  lib.set_threads = reinterpret_cast<void (*)(Handle*, int)>(dlsym(so, "_ZN6strata4blas6Handle15set_num_threadsEi"));
  lib.gemm = reinterpret_cast<decltype(lib.gemm)>(
      dlsym(so, "_ZN6strata4blas7gemm_exERKNS0_6HandleENS0_2OpES4_lllfPKvNS_5DTypeElS6_S7_lfPfl"));
  lib.gemm_i32 = reinterpret_cast<decltype(lib.gemm_i32)>(
      dlsym(so, "_ZN6strata4blas7gemm_exERKNS0_6HandleENS0_2OpES4_llliPKvNS_5DTypeElS6_S7_liPil"));
  lib.trsm = reinterpret_cast<Library::Triangular>(
      dlsym(so, "_ZN6strata4blas4trsmIfEEvRKNS0_6HandleENS0_4SideENS0_4UploENS0_2OpENS0_4DiagEllT_PKS9_lPS9_l"));
  lib.trmm = reinterpret_cast<Library::Triangular>(
      dlsym(so, "_ZN6strata4blas4trmmIfEEvRKNS0_6HandleENS0_4SideENS0_4UploENS0_2OpENS0_4DiagEllT_PKS9_lPS9_l"));
  lib.syrk = reinterpret_cast<decltype(lib.syrk)>(
      dlsym(so, "_ZN6strata4blas4syrkIfEEvRKNS0_6HandleENS0_4UploENS0_2OpEllT_PKS7_lS7_PS7_l"));
  lib.symv = reinterpret_cast<decltype(lib.symv)>(
      dlsym(so, "_ZN6strata4blas4symvIfEEvRKNS0_6HandleENS0_4UploElT_PKS6_lS8_lS6_PS6_l"));
  lib.gemv = reinterpret_cast<decltype(lib.gemv)>(
      dlsym(so, "_ZN6strata4blas4gemvIfEEvRKNS0_6HandleENS0_2OpEllT_PKS6_lS8_lS6_PS6_l"));
  lib.ger = reinterpret_cast<decltype(lib.ger)>(dlsym(so, "_ZN6strata4blas3gerIfEEvRKNS0_6HandleEllT_PKS5_lS7_lPS5_l"));
  lib.syr = reinterpret_cast<decltype(lib.syr)>(dlsym(so, "_ZN6strata4blas3syrIfEEvRKNS0_6HandleENS0_4UploElT_PKS6_lPS6_l"));
  lib.batched = reinterpret_cast<decltype(lib.batched)>(
      dlsym(so, "_ZN6strata4blas20gemm_strided_batchedIfEEvRKNS0_6HandleENS0_2OpES5_lllT_PKS6_llS8_llS6_PS6_lll"));
  lib.dbatched = reinterpret_cast<decltype(lib.dbatched)>(
      dlsym(so, "_ZN6strata4blas20gemm_strided_batchedIdEEvRKNS0_6HandleENS0_2OpES5_lllT_PKS6_llS8_llS6_PS6_lll"));
  lib.batched_ex = reinterpret_cast<decltype(lib.batched_ex)>(
      dlsym(so, "_ZN6strata4blas23gemm_strided_batched_exERKNS0_6HandleENS0_2OpES4_lllfPKvNS_5DTypeEllS6_S7_llfPflll"));
  lib.batched_i32 = reinterpret_cast<decltype(lib.batched_i32)>(
      dlsym(so, "_ZN6strata4blas23gemm_strided_batched_exERKNS0_6HandleENS0_2OpES4_llliPKvNS_5DTypeEllS6_S7_lliPilll"));
  if (!lib.batched_ex || !lib.batched_i32 || !lib.batched || !lib.dbatched || !lib.syr || !lib.ger || !lib.handle || !lib.set_threads || !lib.gemm || !lib.gemm_i32 || !lib.trsm || !lib.trmm || !lib.syrk ||
      !lib.symv || !lib.gemv) {
    std::fprintf(stderr, "gemm_ab: %s lacks the entry points this harness calls\n", path);
    std::exit(1);
  }
  lib.set_threads(&lib.handle(), threads);
  return lib;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 9 || (argc - 6) % 3 != 0) {
    std::fprintf(stderr, "usage: %s OLD.so NEW.so ROUNDS OPS THREADS M N K [M N K ...]\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[5]);
  // AB_NEW_ENV ("NAME=VALUE NAME=VALUE"): settings for the new library only (block-size
  // overrides such as STRATA_GEMM_KC, read once per library at its first call of a type): with the
  // same file as both libraries, a tuning A/B free of code-layout differences.
  const Library libs[2] = {load(argv[1], threads), load(argv[2], threads)};
  // One call of each element type, so that each library's kernels have read their block sizes.
  auto warm_up = [](const Library& lib) {
    float a[4] = {1, 1, 1, 1}, b[4] = {1, 1, 1, 1}, c[4];
    lib.gemm(lib.handle(), Op::N, Op::N, 2, 2, 2, 1.f, a, DType::f32, 2, b, DType::f32, 2, 0.f, c, 2);
    const uint16_t one_bf16[4] = {0x3f80, 0x3f80, 0x3f80, 0x3f80};
    lib.gemm(lib.handle(), Op::N, Op::N, 2, 2, 2, 1.f, one_bf16, DType::bf16, 2, one_bf16, DType::bf16, 2, 0.f, c, 2);
    const uint8_t ua[4] = {1, 1, 1, 1};
    const int8_t sa[4] = {1, 1, 1, 1}, sb[4] = {1, 1, 1, 1};
    int32_t ci[4];
    lib.gemm_i32(lib.handle(), Op::N, Op::N, 2, 2, 2, 1, ua, DType::u8, 2, sb, DType::i8, 2, 0, ci, 2);
    lib.gemm_i32(lib.handle(), Op::N, Op::N, 2, 2, 2, 1, sa, DType::i8, 2, sb, DType::i8, 2, 0, ci, 2);
  };
  warm_up(libs[0]);
  if (const char* settings = std::getenv("AB_NEW_ENV")) {
    std::string all = settings;
    std::size_t pos = 0;
    while (pos < all.size()) {
      std::size_t end = all.find(' ', pos);
      if (end == std::string::npos) end = all.size();
      const std::string item = all.substr(pos, end - pos);
      const std::size_t eq = item.find('=');
      if (eq != std::string::npos) setenv(item.substr(0, eq).c_str(), item.substr(eq + 1).c_str(), 1);
      pos = end + 1;
    }
  }
  warm_up(libs[1]);
  const int rounds = std::max(1, std::atoi(argv[3]));
  const Op ta = argv[4][0] == 'T' ? Op::T : Op::N, tb = argv[4][1] == 'T' ? Op::T : Op::N;
  const std::string type = std::getenv("AB_TYPE") ? std::getenv("AB_TYPE") : "f32";
  const bool integer = type == "u8s8s32" || type == "u7s8s32" || type == "s8s8s32";
  const bool level3 = type == "strsm" || type == "strmm" || type == "ssyrk";
  // AB_SIDE=right: trsm/trmm with the triangle on the right, X * op(A) with op(A) = A^T upper
  // (the lower triangle built below; square shapes only: A is m x m).
  const bool right = std::getenv("AB_SIDE") && std::string(std::getenv("AB_SIDE")) == "right";
  const bool level2 = type == "ssymv" || type == "sgemv_n" || type == "sgemv_t" || type == "sger" || type == "ssyr";
  const bool batched = type == "sbatch" || type == "dbatch" || type == "bf16batch" || type == "u8batch";
  const long entries = batched ? std::max(1L, std::atol(std::getenv("AB_BATCH") ? std::getenv("AB_BATCH") : "1000")) : 1;
  if (!integer && !level3 && !level2 && !batched && type != "f32" && type != "bf16") {
    std::fprintf(stderr, "gemm_ab: AB_TYPE must be f32, bf16, sbatch, dbatch, bf16batch, u8batch, u8s8s32, u7s8s32, s8s8s32, strsm, strmm, ssyrk, ssymv, ssyr, sgemv_n, sgemv_t or sger\n");
    return 2;
  }
  std::printf("# %s\n%-5s %-18s %10s %10s %8s\n", type.c_str(), "ops", "shape", "old G/s", "new G/s", "new/old");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int s = 6; s + 2 < argc; s += 3) {
    const long m = std::atol(argv[s]), n = std::atol(argv[s + 1]), k = std::atol(argv[s + 2]);
    std::vector<float> a(std::size_t(m * k)), b(std::size_t(k * n)), c(std::size_t(m * n));
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    // AB_LD: a larger leading dimension for A, B and C of the f32 gemm (operands inside a bigger
    // matrix, as Level 3 routines and LAPACK pass them; 1024 puts columns a page apart).
    const long ld_min = type == "f32" && std::getenv("AB_LD") ? std::atol(std::getenv("AB_LD")) : 0;
    const long lda = std::max(ld_min, ta == Op::N ? m : k), ldb = std::max(ld_min, tb == Op::N ? k : n);
    // AB_LDC: C's leading dimension at least that, for every type but the batches (C's columns
    // off the power-of-two strides that put them all in one L1 set).
    const long ldc_min = !batched && std::getenv("AB_LDC") ? std::atol(std::getenv("AB_LDC")) : 0;
    const long ldc = std::max({ld_min, m, ldc_min});
    c.resize(std::size_t(ldc * n));
    if (ld_min) {
      a.resize(std::size_t(lda * (ta == Op::N ? k : m)));
      b.resize(std::size_t(ldb * (tb == Op::N ? n : k)));
      c.resize(std::size_t(ldc * n));
      for (float& v : a) v = dist(rng);
      for (float& v : b) v = dist(rng);
    }
    double flop = 2.0 * double(m) * double(n) * double(k);
    if (batched) {  // every entry its own operands, one after the other
      flop *= double(entries);
      a.resize(std::size_t(m * k * entries));
      b.resize(std::size_t(k * n * entries));
      c.resize(std::size_t(m * n * entries));
      for (float& v : a) v = dist(rng);
      for (float& v : b) v = dist(rng);
    }
    std::vector<uint8_t> a8(a.size());
    std::vector<int8_t> b8(b.size());
    std::vector<int32_t> c32(c.size());
    std::vector<uint16_t> a16(a.size()), b16(b.size());  // bf16 bits (AB_TYPE=bf16): the floats' top halves
    for (std::size_t i = 0; i < a.size(); ++i) a16[i] = uint16_t(std::bit_cast<uint32_t>(a[i]) >> 16);
    for (std::size_t i = 0; i < b.size(); ++i) b16[i] = uint16_t(std::bit_cast<uint32_t>(b[i]) >> 16);
    const int a_top = type == "u7s8s32" ? 127 : 255;
    for (std::size_t i = 0; i < a.size(); ++i) a8[i] = uint8_t(std::uniform_int_distribution<int>(0, a_top)(rng));
    for (std::size_t i = 0; i < b.size(); ++i) b8[i] = int8_t(std::uniform_int_distribution<int>(-128, 127)(rng));
    c32.resize(c.size());
    std::vector<double> ad, bd, cd;  // AB_TYPE=dbatch: the same values in f64
    if (type == "dbatch") ad.assign(a.begin(), a.end()), bd.assign(b.begin(), b.end()), cd.assign(c.size(), 0.0);
    std::vector<float> tri, rhs;
    if (type == "strsm" || type == "strmm") {  // a well-conditioned lower triangle, M x N right-hand sides
      flop = double(m) * double(m) * double(n);
      tri.assign(std::size_t(m * m), 0.f);
      for (long j = 0; j < m; ++j)
        for (long i = j; i < m; ++i) tri[std::size_t(i + j * m)] = i == j ? 2.f : 1e-3f * dist(rng);
      rhs.resize(std::size_t(m * n));
      for (float& v : rhs) v = dist(rng);
      c.resize(rhs.size());
    } else if (type == "ssyrk") {
      flop = double(m) * double(m) * double(k);
      c.resize(std::size_t(m * m));
    } else if (level2) {  // A M x M (symv) or M x N, x and y as long as they need
      const long cols = type == "ssymv" || type == "ssyr" ? m : n;
      flop = 2.0 * double(m) * double(cols);
      a.resize(std::size_t(m * cols));
      for (float& v : a) v = dist(rng);
      b.assign(std::size_t(std::max(m, cols)), 0.5f);
      c.assign(b.size(), 0.f);
    }
    const int batch = std::max(3, int((level2 ? 5e5 : 5e6) / flop));  // calls per turn: a few ms at least
    std::vector<double> seconds[2];
    for (int r = 0; r < rounds; ++r)
      for (int turn = 0; turn < 2; ++turn) {
        const int l = (r & 1) ? 1 - turn : turn;  // A B, then B A
        for (int i = 0; i < batch; ++i) {
          if (!rhs.empty()) std::copy(rhs.begin(), rhs.end(), c.begin());  // trsm/trmm overwrite B
          const auto t0 = std::chrono::steady_clock::now();
          if (type == "strsm" || type == "strmm")
            (type == "strsm" ? libs[l].trsm : libs[l].trmm)(libs[l].handle(), right ? Side::right : Side::left,
                                                            Uplo::lower, right ? Op::T : Op::N,
                                                            Diag::non_unit, m, n, 1.f, tri.data(), m, c.data(), m);
          else if (type == "ssymv")
            libs[l].symv(libs[l].handle(), Uplo::upper, m, 1.f, a.data(), m, b.data(), 1, 0.f, c.data(), 1);
          else if (type == "ssyr")
            libs[l].syr(libs[l].handle(), Uplo::upper, m, 1e-3f, b.data(), 1, a.data(), m);
          else if (type == "sger")
            libs[l].ger(libs[l].handle(), m, n, 1e-3f, b.data(), 1, b.data(), 1, a.data(), m);
          else if (level2)
            libs[l].gemv(libs[l].handle(), type == "sgemv_t" ? Op::T : Op::N, m, n, 1.f, a.data(), m, b.data(), 1, 0.f,
                         c.data(), 1);
          else if (type == "dbatch")
            libs[l].dbatched(libs[l].handle(), ta, tb, m, n, k, 1.0, ad.data(), lda, m * k, bd.data(), ldb, k * n, 0.0,
                             cd.data(), ldc, m * n, entries);
          else if (type == "bf16batch")
            libs[l].batched_ex(libs[l].handle(), ta, tb, m, n, k, 1.f, a16.data(), DType::bf16, lda, m * k, b16.data(),
                               DType::bf16, ldb, k * n, 0.f, c.data(), ldc, m * n, entries);
          else if (type == "u8batch")
            libs[l].batched_i32(libs[l].handle(), ta, tb, m, n, k, 1, a8.data(), DType::u8, lda, m * k, b8.data(),
                                DType::i8, ldb, k * n, 0, c32.data(), ldc, m * n, entries);
          else if (batched)
            libs[l].batched(libs[l].handle(), ta, tb, m, n, k, 1.f, a.data(), lda, m * k, b.data(), ldb, k * n, 0.f,
                            c.data(), ldc, m * n, entries);
          else if (type == "ssyrk")
            libs[l].syrk(libs[l].handle(), Uplo::upper, Op::N, m, k, 1.f, a.data(), m, 0.f, c.data(), m);
          else if (type == "bf16")
            libs[l].gemm(libs[l].handle(), ta, tb, m, n, k, 1.f, a16.data(), DType::bf16, lda, b16.data(), DType::bf16,
                         ldb, 0.f, c.data(), ldc);
          else if (integer)
            libs[l].gemm_i32(libs[l].handle(), ta, tb, m, n, k, 1, a8.data(),
                             type == "s8s8s32" ? DType::i8 : DType::u8, lda, b8.data(), DType::i8,
                             ldb, 0, c32.data(), ldc);
          else
            libs[l].gemm(libs[l].handle(), ta, tb, m, n, k, 1.f, a.data(), DType::f32, lda, b.data(), DType::f32,
                         ldb, 0.f, c.data(), ldc);
          // The first call of a turn refills caches the other library evicted: not timed.
          if (i > 0) seconds[l].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
      }
    // AB_QUANTILE: which of the sorted times to report (default 0.5, the median). A low one
    // (0.1) compares the fast calls where the host's load comes and goes in phases longer
    // than a round (a VM whose AMX unit another tenant shares ran at 40% or 90% of its peak).
    const double quantile = std::getenv("AB_QUANTILE") ? std::atof(std::getenv("AB_QUANTILE")) : 0.5;
    double gflops[2];
    for (int l = 0; l < 2; ++l) {
      std::sort(seconds[l].begin(), seconds[l].end());
      const std::size_t at = std::min(seconds[l].size() - 1, std::size_t(quantile * double(seconds[l].size())));
      gflops[l] = flop / seconds[l][at] / 1e9;
    }
    char shape[64];
    std::snprintf(shape, sizeof shape, "%ldx%ldx%ld", m, n, k);
    std::printf("%-5s %-18s %10.1f %10.1f %8.3f\n", argv[4], shape, gflops[0], gflops[1], gflops[1] / gflops[0]);
  }
}
