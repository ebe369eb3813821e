// Differential check of CBLAS argument errors: every cblas_* routine that takes arguments
// which can be invalid is called with each one made invalid in turn (column- and row-major),
// once against the reference libblas.so.3 and once against strata's drop-in, each call in its
// own child process (the reference exits from cblas_xerbla). The parameter position and the
// routine name that each library prints must agree.
//
// Usage: capi_cblas_errors_vs_reference REFERENCE_LIB STRATA_LIB [--list]
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace {

enum : int {
  kRowMajor = 101, kColMajor = 102,
  kNoTrans = 111, kTrans = 112,
  kUpper = 121, kLower = 122,
  kNonUnit = 131, kUnit = 132,
  kLeft = 141, kRight = 142,
};

// The arguments of one call: all valid, except the one a case makes invalid.
struct Args {
  int layout = kColMajor, trans = kNoTrans, transb = kNoTrans, uplo = kUpper, side = kLeft, diag = kNonUnit;
  int m = 3, n = 5, k = 4, kl = 1, ku = 1, lda = 8, ldb = 8, ldc = 8, incx = 1, incy = 1;
};

// Which field a case breaks, and the invalid value it gets.
struct Mutation {
  const char* name;
  int Args::*field;
  int bad;
};
const Mutation kMutations[] = {
    {"layout", &Args::layout, 0}, {"trans", &Args::trans, 0}, {"transb", &Args::transb, 0},
    {"uplo", &Args::uplo, 0},     {"side", &Args::side, 0},   {"diag", &Args::diag, 0},
    {"m", &Args::m, -1},          {"n", &Args::n, -1},        {"k", &Args::k, -1},
    {"kl", &Args::kl, -1},        {"ku", &Args::ku, -1},      {"lda", &Args::lda, 1},
    {"ldb", &Args::ldb, 1},       {"ldc", &Args::ldc, 1},     {"incx", &Args::incx, 0},
    {"incy", &Args::incy, 0},
};

void* g_lib = nullptr;

// Calls symbol `name` of the library under test with exactly the argument types given.
template <class... A>
void call(const std::string& name, A... args) {
  void* f = dlsym(g_lib, name.c_str());
  if (!f) {
    std::printf("missing symbol %s\n", name.c_str());
    std::exit(3);
  }
  reinterpret_cast<void (*)(A...)>(f)(args...);
}

// Large zeroed buffers so that a library which misses a check still stays in bounds.
struct Buffers {
  std::vector<std::complex<double>> a = std::vector<std::complex<double>>(4096), b = a, c = a, x = a, y = a;
};

template <class T>
constexpr bool is_complex = !std::is_same_v<T, float> && !std::is_same_v<T, double>;
template <class T> using Real = decltype(std::real(T{}));

// One routine family: its name without the type letter, the fields it reads, and the call.
struct Routine {
  std::string name;  // e.g. "cblas_sgemv"
  std::vector<const char*> fields;
  std::function<void(const Args&, Buffers&)> run;
};

template <class T>
std::vector<Routine> routines_of(char letter) {
  const std::string p = std::string("cblas_") + letter;
  // Scalars: by value for real types, through a pointer for complex ones.
  static const T one_v = T(1);
  auto s = [](void) {
    if constexpr (is_complex<T>) return static_cast<const void*>(&one_v);
    else return T(1);
  };
  auto A = [](Buffers& b) { return static_cast<void*>(b.a.data()); };
  auto B = [](Buffers& b) { return static_cast<void*>(b.b.data()); };
  auto C = [](Buffers& b) { return static_cast<void*>(b.c.data()); };
  auto X = [](Buffers& b) { return static_cast<void*>(b.x.data()); };
  auto Y = [](Buffers& b) { return static_cast<void*>(b.y.data()); };
  const Real<T> r1 = 1;
  std::vector<Routine> r;
  r.push_back({p + "gemv", {"layout", "trans", "m", "n", "lda", "incx", "incy"}, [=](const Args& a, Buffers& b) {
                 call(p + "gemv", a.layout, a.trans, a.m, a.n, s(), A(b), a.lda, X(b), a.incx, s(), Y(b), a.incy);
               }});
  r.push_back({p + "gbmv", {"layout", "trans", "m", "n", "kl", "ku", "lda", "incx", "incy"},
               [=](const Args& a, Buffers& b) {
                 call(p + "gbmv", a.layout, a.trans, a.m, a.n, a.kl, a.ku, s(), A(b), a.lda, X(b), a.incx, s(), Y(b),
                      a.incy);
               }});
  for (const char* t : {"trmv", "trsv"})
    r.push_back({p + t, {"layout", "uplo", "trans", "diag", "n", "lda", "incx"}, [=](const Args& a, Buffers& b) {
                   call(p + t, a.layout, a.uplo, a.trans, a.diag, a.n, A(b), a.lda, X(b), a.incx);
                 }});
  for (const char* t : {"tbmv", "tbsv"})
    r.push_back({p + t, {"layout", "uplo", "trans", "diag", "n", "k", "lda", "incx"}, [=](const Args& a, Buffers& b) {
                   call(p + t, a.layout, a.uplo, a.trans, a.diag, a.n, a.k, A(b), a.lda, X(b), a.incx);
                 }});
  for (const char* t : {"tpmv", "tpsv"})
    r.push_back({p + t, {"layout", "uplo", "trans", "diag", "n", "incx"}, [=](const Args& a, Buffers& b) {
                   call(p + t, a.layout, a.uplo, a.trans, a.diag, a.n, A(b), X(b), a.incx);
                 }});
  // Symmetric (real) or Hermitian (complex) matrix-vector products and updates.
  const std::string sy = is_complex<T> ? "he" : "sy", sb = is_complex<T> ? "hb" : "sb", sp = is_complex<T> ? "hp" : "sp";
  r.push_back({p + sy + "mv", {"layout", "uplo", "n", "lda", "incx", "incy"}, [=](const Args& a, Buffers& b) {
                 call(p + sy + "mv", a.layout, a.uplo, a.n, s(), A(b), a.lda, X(b), a.incx, s(), Y(b), a.incy);
               }});
  r.push_back({p + sb + "mv", {"layout", "uplo", "n", "k", "lda", "incx", "incy"}, [=](const Args& a, Buffers& b) {
                 call(p + sb + "mv", a.layout, a.uplo, a.n, a.k, s(), A(b), a.lda, X(b), a.incx, s(), Y(b), a.incy);
               }});
  r.push_back({p + sp + "mv", {"layout", "uplo", "n", "incx", "incy"}, [=](const Args& a, Buffers& b) {
                 call(p + sp + "mv", a.layout, a.uplo, a.n, s(), A(b), X(b), a.incx, s(), Y(b), a.incy);
               }});
  if constexpr (is_complex<T>) {
    for (const char* t : {"geru", "gerc"})
      r.push_back({p + t, {"layout", "m", "n", "incx", "incy", "lda"}, [=](const Args& a, Buffers& b) {
                     call(p + t, a.layout, a.m, a.n, s(), X(b), a.incx, Y(b), a.incy, A(b), a.lda);
                   }});
    r.push_back({p + "her", {"layout", "uplo", "n", "incx", "lda"}, [=](const Args& a, Buffers& b) {
                   call(p + "her", a.layout, a.uplo, a.n, r1, X(b), a.incx, A(b), a.lda);
                 }});
    r.push_back({p + "hpr", {"layout", "uplo", "n", "incx"}, [=](const Args& a, Buffers& b) {
                   call(p + "hpr", a.layout, a.uplo, a.n, r1, X(b), a.incx, A(b));
                 }});
  } else {
    r.push_back({p + "ger", {"layout", "m", "n", "incx", "incy", "lda"}, [=](const Args& a, Buffers& b) {
                   call(p + "ger", a.layout, a.m, a.n, s(), X(b), a.incx, Y(b), a.incy, A(b), a.lda);
                 }});
    r.push_back({p + "syr", {"layout", "uplo", "n", "incx", "lda"}, [=](const Args& a, Buffers& b) {
                   call(p + "syr", a.layout, a.uplo, a.n, s(), X(b), a.incx, A(b), a.lda);
                 }});
    r.push_back({p + "spr", {"layout", "uplo", "n", "incx"}, [=](const Args& a, Buffers& b) {
                   call(p + "spr", a.layout, a.uplo, a.n, s(), X(b), a.incx, A(b));
                 }});
  }
  r.push_back({p + sy + "r2", {"layout", "uplo", "n", "incx", "incy", "lda"}, [=](const Args& a, Buffers& b) {
                 call(p + sy + "r2", a.layout, a.uplo, a.n, s(), X(b), a.incx, Y(b), a.incy, A(b), a.lda);
               }});
  r.push_back({p + sp + "r2", {"layout", "uplo", "n", "incx", "incy"}, [=](const Args& a, Buffers& b) {
                 call(p + sp + "r2", a.layout, a.uplo, a.n, s(), X(b), a.incx, Y(b), a.incy, A(b));
               }});
  // Level 3.
  r.push_back({p + "gemm", {"layout", "trans", "transb", "m", "n", "k", "lda", "ldb", "ldc"},
               [=](const Args& a, Buffers& b) {
                 call(p + "gemm", a.layout, a.trans, a.transb, a.m, a.n, a.k, s(), A(b), a.lda, B(b), a.ldb, s(), C(b),
                      a.ldc);
               }});
  std::vector<std::string> mm = {"symm"};
  if (is_complex<T>) mm.push_back("hemm");
  for (const std::string& t : mm)
    r.push_back({p + t, {"layout", "side", "uplo", "m", "n", "lda", "ldb", "ldc"}, [=](const Args& a, Buffers& b) {
                   call(p + t, a.layout, a.side, a.uplo, a.m, a.n, s(), A(b), a.lda, B(b), a.ldb, s(), C(b), a.ldc);
                 }});
  r.push_back({p + "syrk", {"layout", "uplo", "trans", "n", "k", "lda", "ldc"}, [=](const Args& a, Buffers& b) {
                 call(p + "syrk", a.layout, a.uplo, a.trans, a.n, a.k, s(), A(b), a.lda, s(), C(b), a.ldc);
               }});
  r.push_back({p + "syr2k", {"layout", "uplo", "trans", "n", "k", "lda", "ldb", "ldc"}, [=](const Args& a, Buffers& b) {
                 call(p + "syr2k", a.layout, a.uplo, a.trans, a.n, a.k, s(), A(b), a.lda, B(b), a.ldb, s(), C(b), a.ldc);
               }});
  if constexpr (is_complex<T>) {
    r.push_back({p + "herk", {"layout", "uplo", "trans", "n", "k", "lda", "ldc"}, [=](const Args& a, Buffers& b) {
                   call(p + "herk", a.layout, a.uplo, a.trans, a.n, a.k, r1, A(b), a.lda, r1, C(b), a.ldc);
                 }});
    r.push_back({p + "her2k", {"layout", "uplo", "trans", "n", "k", "lda", "ldb", "ldc"},
                 [=](const Args& a, Buffers& b) {
                   call(p + "her2k", a.layout, a.uplo, a.trans, a.n, a.k, s(), A(b), a.lda, B(b), a.ldb, r1, C(b),
                        a.ldc);
                 }});
  }
  for (const char* t : {"trmm", "trsm"})
    r.push_back({p + t, {"layout", "side", "uplo", "trans", "diag", "m", "n", "lda", "ldb"},
                 [=](const Args& a, Buffers& b) {
                   call(p + t, a.layout, a.side, a.uplo, a.trans, a.diag, a.m, a.n, s(), A(b), a.lda, B(b), a.ldb);
                 }});
  return r;
}

struct Case {
  std::string label;
  std::function<void(Buffers&)> run;
};

std::vector<Case> all_cases() {
  std::vector<Routine> routines = routines_of<float>('s');
  for (auto add : {routines_of<double>('d'), routines_of<std::complex<float>>('c'),
                   routines_of<std::complex<double>>('z')})
    routines.insert(routines.end(), add.begin(), add.end());
  std::vector<Case> cases;
  for (const Routine& r : routines)
    for (int layout : {kColMajor, kRowMajor})
      for (const char* field : r.fields)
        for (const Mutation& m : kMutations) {
          if (std::string(m.name) != field) continue;
          if (m.field == &Args::layout && layout == kRowMajor) continue;  // one invalid-layout case
          Args args;
          args.layout = layout;
          args.*m.field = m.bad;
          const std::string label =
              r.name + (layout == kRowMajor ? " row-major " : " col-major ") + m.name + "=" + std::to_string(m.bad);
          auto run = r.run;
          cases.push_back({label, [run, args](Buffers& b) { run(args, b); }});
        }
  return cases;
}

// What a library printed about the error: "routine:position", or the raw output.
std::string reported(const std::string& out) {
  static const std::regex cblas_form(R"(Parameter (-?\d+) to routine (\w+)\s+was incorrect)");
  static const std::regex fortran_form(R"(On entry to\s+(\w+)\s+parameter number\s+(-?\d+))");
  std::smatch m;
  if (std::regex_search(out, m, cblas_form)) return m[2].str() + ":" + m[1].str();
  if (std::regex_search(out, m, fortran_form)) return "F77 " + m[1].str() + ":" + m[2].str();
  return out.empty() ? "(nothing reported)" : "(unparsed) " + out;
}

// Runs one case against `lib` in a child process; returns what it printed (stdout + stderr).
std::string run_case(const char* lib, const Case& c) {
  int fd[2];
  if (pipe(fd) != 0) std::exit(4);
  std::fflush(stdout);  // the child must not inherit (and print again) buffered output
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    g_lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!g_lib) {
      std::printf("dlopen failed: %s\n", dlerror());
      _exit(3);
    }
    Buffers b;
    c.run(b);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(0);
  }
  close(fd[1]);
  std::string out;
  char buf[4096];
  ssize_t got;
  while ((got = read(fd[0], buf, sizeof buf)) > 0) out.append(buf, size_t(got));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s REFERENCE_LIB STRATA_LIB [--list]\n", argv[0]);
    return 2;
  }
  const bool list = argc > 3 && std::string(argv[3]) == "--list";
  const std::vector<Case> cases = all_cases();
  int mismatches = 0;
  for (const Case& c : cases) {
    const std::string want = reported(run_case(argv[1], c));
    const std::string got = reported(run_case(argv[2], c));
    if (want != got) ++mismatches;
    if (list || want != got)
      std::printf("%-8s %-44s reference %-22s strata %s\n", want == got ? "ok" : "MISMATCH", c.label.c_str(),
                  want.c_str(), got.c_str());
  }
  std::printf("%zu cases, %d mismatches\n", cases.size(), mismatches);
  return mismatches == 0 ? 0 : 1;
}
