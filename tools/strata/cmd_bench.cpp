// `strata bench gemm`: the profiler role (cutlass_profiler / benchdnn). For each problem it
// verifies strata and every peer against a reference, then times them interleaved in one
// process and prints GFLOPS, % of the measured peak and the ratio to the best peer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#ifdef STRATA_CLI_BENCH_CONV
#include "bench_conv.hpp"
#endif
#include "bench_level2.hpp"
#include "bench_pool.hpp"
#include "peers/gemm_peers.hpp"
#include "peers/matmul_onednn.hpp"
#include "peers/timing.hpp"
#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/level3.hpp"
#include "strata/blas/lt.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/peak.hpp"
#include "strata/core/status.hpp"
#include "strata/core/timer.hpp"

namespace strata::cli {

namespace {

struct GemmProblem {
  char ta = 'N', tb = 'N';
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string text;
};

// "NN:1024x1024x1024", "TN:16x4096x4096", "NN:batch1000:32x32x32", or just "512x512x512".
GemmProblem parse_problem(const std::string& s) {
  GemmProblem p;
  p.text = s;
  std::string rest = s;
  auto take = [&](char sep) {
    auto pos = rest.find(sep);
    std::string head = rest.substr(0, pos);
    rest = pos == std::string::npos ? "" : rest.substr(pos + 1);
    return head;
  };
  if (rest.size() > 2 && rest[2] == ':') {
    std::string ops = take(':');
    p.ta = ops[0], p.tb = ops[1];
  }
  if (rest.rfind("batch", 0) == 0) p.batch = std::stoll(take(':').substr(5));
  long long m, n, k;
  char x1, x2;
  std::istringstream in(rest);
  if (!(in >> m >> x1 >> n >> x2 >> k) || x1 != 'x' || x2 != 'x' || m < 0 || n < 0 || k < 0 || p.batch < 1 ||
      (p.ta != 'N' && p.ta != 'T') || (p.tb != 'N' && p.tb != 'T'))
    throw_error(Status::invalid_argument, "problem",
                "'" + s + "' is not of the form [NN|NT|TN|TT:][batchB:]MxNxK");
  p.m = m, p.n = n, p.k = k;
  return p;
}

template <class T>
struct Operands {
  int64_t lda, ldb, ldc, a_size, b_size, c_size;
  AlignedVector<T> a, b, c;  // on 64-byte boundaries, as frameworks allocate (AlignedAllocator says why)
  Operands(const GemmProblem& p, std::mt19937& rng) {
    lda = std::max<int64_t>(1, p.ta == 'N' ? p.m : p.k);
    ldb = std::max<int64_t>(1, p.tb == 'N' ? p.k : p.n);
    ldc = std::max<int64_t>(1, p.m);
    a_size = lda * (p.ta == 'N' ? p.k : p.m), b_size = ldb * (p.tb == 'N' ? p.n : p.k), c_size = ldc * p.n;
    std::uniform_real_distribution<double> d(-1, 1);
    a.resize(size_t(a_size * p.batch));
    b.resize(size_t(b_size * p.batch));
    c.assign(size_t(c_size * p.batch), T(0));
    for (auto& v : a) v = T(d(rng));
    for (auto& v : b) v = T(d(rng));
  }
};

// Freivalds-style check of batch item 0: C x against op(A) (op(B) x) in double, with an error
// bound of 4 (k + 2) eps |op(A)| (|op(B)| |x|).
template <class T>
bool verify(const GemmProblem& p, const Operands<T>& o, std::string& why) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> x(size_t(p.n)), bx(size_t(p.k), 0), bxa(size_t(p.k), 0);
  for (auto& v : x) v = d(rng);
  auto A = [&](int64_t i, int64_t l) { return double(p.ta == 'N' ? o.a[size_t(i + l * o.lda)] : o.a[size_t(l + i * o.lda)]); };
  auto B = [&](int64_t l, int64_t j) { return double(p.tb == 'N' ? o.b[size_t(l + j * o.ldb)] : o.b[size_t(j + l * o.ldb)]); };
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t l = 0; l < p.k; ++l) bx[size_t(l)] += B(l, j) * x[size_t(j)], bxa[size_t(l)] += std::fabs(B(l, j) * x[size_t(j)]);
  const double eps = double(std::numeric_limits<T>::epsilon());
  for (int64_t i = 0; i < p.m; ++i) {
    double want = 0, bound = 0, got = 0;
    for (int64_t l = 0; l < p.k; ++l) want += A(i, l) * bx[size_t(l)], bound += std::fabs(A(i, l)) * bxa[size_t(l)];
    for (int64_t j = 0; j < p.n; ++j) got += double(o.c[size_t(i + j * o.ldc)]) * x[size_t(j)];
    if (std::fabs(got - want) > 4.0 * double(p.k + 2) * eps * bound + 1e-12) {
      why = "row " + std::to_string(i) + ": got " + std::to_string(got) + ", want " + std::to_string(want);
      return false;
    }
  }
  return true;
}

struct Row {
  std::string problem, dtype, lib;
  int threads;
  double gflops, pct_peak, ratio_to_best_peer;  // ratio only on strata's row (0 elsewhere)
  bool verified;
};

// One library in a comparison: how to run batch item b, its timings, whether it verified;
// `call_batch`, when set, runs the whole batch in one call (a library's batched entry point).
struct Lib {
  std::string name;
  std::function<void(int64_t)> call;
  std::vector<double> times;
  bool ok = true;
  std::function<void()> call_batch = nullptr;

  void run_batch(int64_t batch) const {
    if (call_batch) return call_batch();
    for (int64_t b = 0; b < batch; ++b) call(b);
  }
};

// Timing (1 thread: interleaved, each repetition runs every library once so drift hits all
// alike; more threads: rounds of one block per library, see below), then
// one Row per library with GFLOPS (ops for integer GEMM), % of `peak_per_core` x threads and,
// on strata's row, the ratio to the best verified peer.
void time_and_report(const GemmProblem& p, const char* dt, int threads, int reps, double peak_per_core,
                     std::vector<Lib>& libs, std::vector<Row>& rows) {
  const double flops = 2.0 * double(p.m) * double(p.n) * double(p.k) * double(p.batch);
  // Calls per sample: >= ~2 ms at 100 GFLOPS for tiny problems, but at most ~2 ms of the
  // library's own calls. A fixed cost per call (microseconds in oneDNN's dnnl_primitive_execute)
  // made the flops rule alone take minutes per sample on NN:1x1x1.
  const int by_flops = std::max(1, int(2e8 / std::max(flops, 1.0)));
  std::vector<int> inner;
  for (auto& lib : libs) {
    double one_call = 1e30;
    for (int i = 0; i < 3; ++i) {
      Timer t;
      lib.run_batch(p.batch);
      one_call = std::min(one_call, t.seconds());
    }
    inner.push_back(std::clamp(int(2e-3 / std::max(one_call, 1e-9)) + 1, 1, by_flops));
  }
  auto sample = [&](Lib& lib) {
    const int n = inner[size_t(&lib - libs.data())];
    Timer t;
    for (int i = 0; i < n; ++i) lib.run_batch(p.batch);
    lib.times.push_back(t.seconds() / n);
  };
  if (threads == 1) {
    for (int r = 0; r < reps; ++r)
      for (auto& lib : libs) sample(lib);
  } else {
    // With threads, one block per library (back-to-back calls, as an application makes them),
    // each starting once the previous library's workers have stopped spinning
    // (bench::let_peer_threads_park) and after bench::warm_up of untimed calls: a thread pool
    // woken from sleep needs a few milliseconds to run at speed (2-thread 64^3, one untimed call
    // before each 2 ms sample: 224-261 GFLOPS against 257-296 in a block). The blocks come in
    // rounds (bench::kThreadedRounds).
    const int per_round = (reps + bench::kThreadedRounds - 1) / bench::kThreadedRounds;
    for (int round = 0; round < bench::kThreadedRounds; ++round)
      for (auto& lib : libs) {
        bench::let_peer_threads_park();
        bench::warm_up([&] { lib.run_batch(p.batch); });
        for (int r = 0; r < per_round; ++r) sample(lib);
      }
  }
  double best_peer = 0, strata_gflops = 0;
  std::vector<double> gf;
  auto is_strata = [](const std::string& name) { return name == "strata" || name == "strata+epi"; };
  for (auto& lib : libs) {
    std::sort(lib.times.begin(), lib.times.end());
    double g = flops / lib.times[lib.times.size() / 2] * 1e-9;
    gf.push_back(g);
    if (is_strata(lib.name)) strata_gflops = g;
    else if (lib.ok) best_peer = std::max(best_peer, g);
  }
  const double peak = peak_per_core * threads;
  for (size_t i = 0; i < libs.size(); ++i)
    rows.push_back({p.text, dt, libs[i].name, threads, gf[i], 100.0 * gf[i] / peak,
                    is_strata(libs[i].name) && best_peer > 0 ? strata_gflops / best_peer : 0.0, libs[i].ok});
}

// Adds oneDNN's matmul primitive (peers/matmul_onednn.hpp) to `libs` as "onednn", built for this
// problem outside the timing, and prints the kernel oneDNN chose (on AMX machines the point of
// this peer is to show whether that is its AMX brgemm). One execution covers the whole batch:
// the primitive takes the batch as a tensor dimension, oneDNN's fastest path for small products.
// A problem oneDNN rejects is reported and the peer skipped for it.
void add_onednn_matmul(bench::OnednnMatmul* mm, bench::MatmulTypes types, const bench::MatmulLayout& layout,
                       const GemmProblem& p, const char* dt, int threads, const void* a, const void* b, void* c,
                       std::vector<Lib>& libs) {
  if (!mm) return;
  mm->set_threads(threads);  // before prepare(): oneDNN blocks the problem for this thread count
  std::string err;
  if (!mm->prepare(types, layout, err)) {
    std::fprintf(stderr, "bench: onednn matmul skipped on %s %s: %s\n", p.text.c_str(), dt, err.c_str());
    return;
  }
  std::printf("# onednn matmul impl for %s %s, %d thread%s: %s\n", p.text.c_str(), dt, threads,
              threads == 1 ? "" : "s", mm->impl());
  Lib lib;
  lib.name = "onednn";
  lib.call_batch = [mm, a, b, c] { mm->run(a, b, c); };
  libs.push_back(std::move(lib));
}

// The bf16 operands (column-major, as BLAS) for oneDNN's row-major-minded matmul: column-major
// C = op(A) op(B) is C^T = op(B)^T op(A)^T with C^T row-major, so src is op(B)^T (n x k), weights
// op(A)^T (k x m) and dst C^T (n x m), all in place. Described the direct way (dst C with strides
// {1, ldc}), oneDNN 2.6.3 has no brgemm for the column-major dst and picks its reference kernel
// ("ref:any"); transposed src or weights are fine for its bf16 brgemm.
bench::MatmulLayout bf16_onednn_layout(const GemmProblem& p, const Operands<float>& o) {
  bench::MatmulLayout l;
  l.m = p.n, l.n = p.m, l.k = p.k, l.batch = p.batch;
  l.a_row = p.tb == 'N' ? o.ldb : 1, l.a_col = p.tb == 'N' ? 1 : o.ldb, l.a_batch = o.b_size;
  l.b_row = p.ta == 'N' ? o.lda : 1, l.b_col = p.ta == 'N' ? 1 : o.lda, l.b_batch = o.a_size;
  l.c_row = o.ldc, l.c_col = 1, l.c_batch = o.c_size;
  return l;
}

template <class T>
blas::lt::Epilogue parse_epilogue(const std::string& text, std::vector<T>& bias, int64_t m);

// bf16 x bf16 -> f32 (gemm_ex) against oneDNN's matmul primitive (the only oneDNN entry that
// takes bf16 and reaches AMX), with % of peak against the faster of the bf16 dot-product peak
// `strata info` measures and the f32 peak (gemm_ex widens bf16 to f32 where the instruction is
// the slower route). Verified against A (B x) in double within f32 accumulation error. With
// `epilogue`, a "strata+epi" row runs the lt matmul on the bf16 inputs with it fused, and
// strata's plain row becomes "strata-plain".
void run_bf16_problem(const GemmProblem& p, int threads, bench::OnednnMatmul* onednn, int reps, double peak_per_core,
                      const std::string& epilogue, std::vector<Row>& rows) {
  // The f32 operands rounded to bf16 (so verify() checks the exact products of the bf16 inputs,
  // accumulated in f32), and their bf16 copies for gemm_ex.
  std::mt19937 rng(42);
  Operands<float> o(p, rng);
  std::vector<bf16> a(o.a.size()), b(o.b.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = bf16(o.a[i]), o.a[i] = a[i].to_float();
  for (size_t i = 0; i < b.size(); ++i) b[i] = bf16(o.b[i]), o.b[i] = b[i].to_float();
  blas::Handle h;
  h.set_num_threads(threads);
  std::vector<Lib> libs;
  libs.push_back({"strata", [&](int64_t i) {
                    blas::gemm_ex(h, blas::Op(p.ta), blas::Op(p.tb), p.m, p.n, p.k, 1.0f, a.data() + i * o.a_size,
                                  DType::bf16, o.lda, b.data() + i * o.b_size, DType::bf16, o.ldb, 0.0f,
                                  o.c.data() + i * o.c_size, o.ldc);
                  }, {}});
  if (p.batch > 1)  // one call for the whole batch, as the oneDNN primitive
    libs[0].call_batch = [&] {
      blas::gemm_strided_batched_ex(h, blas::Op(p.ta), blas::Op(p.tb), p.m, p.n, p.k, 1.0f, a.data(), DType::bf16,
                                    o.lda, o.a_size, b.data(), DType::bf16, o.ldb, o.b_size, 0.0f, o.c.data(), o.ldc,
                                    o.c_size, p.batch);
    };
  std::vector<float> bias;
  blas::lt::MatmulDesc desc;
  blas::lt::MatrixLayout la, lb, lc;
  if (!epilogue.empty()) {
    desc.transa = blas::Op(p.ta), desc.transb = blas::Op(p.tb);
    desc.epilogue = parse_epilogue<float>(epilogue, bias, p.m);
    la = {DType::bf16, p.ta == 'N' ? p.m : p.k, p.ta == 'N' ? p.k : p.m, o.lda};
    lb = {DType::bf16, p.tb == 'N' ? p.k : p.n, p.tb == 'N' ? p.n : p.k, o.ldb};
    lc = {DType::f32, p.m, p.n, o.ldc};
    libs[0].name = "strata-plain";
    libs.push_back({"strata+epi", [&](int64_t i) {
                      const float one = 1, zero = 0;
                      blas::lt::matmul(h, desc, &one, a.data() + i * o.a_size, la, b.data() + i * o.b_size, lb, &zero,
                                       nullptr, lc, o.c.data() + i * o.c_size, lc);
                    }, {}});
  }
  add_onednn_matmul(onednn, bench::MatmulTypes::bf16bf16f32, bf16_onednn_layout(p, o), p, "bf16", threads, b.data(),
                    a.data(), o.c.data(), libs);
  for (auto& lib : libs) {
    std::fill(o.c.begin(), o.c.end(), 0.0f);
    lib.run_batch(p.batch);
    std::string why;
    if (lib.name == "strata+epi") continue;  // the epilogue changes the result by design
    lib.ok = verify(p, o, why);
    if (!lib.ok)
      std::fprintf(stderr, "bench: %s gave a wrong result on %s: %s\n", lib.name.c_str(), p.text.c_str(), why.c_str());
  }
  time_and_report(p, "bf16", threads, reps, peak_per_core, libs, rows);
}

// u8 x s8 -> s32 (gemm_ex's integer form) against oneDNN's matmul primitive ("onednn", which
// reaches AMX) and its dnnl_gemm_u8s8s32 ("onednn-gemm", which does not). oneDNN gets row-major
// operands with its own leading dimensions on the same buffers (the matmul cannot take the
// transposed form bf16 uses: it wants u8 src and s8 weights, not the other way round; with a
// transposed src, TN/TT, oneDNN 2.6.3 leaves AMX for "gemm:jit"); each library's result is
// verified exactly (int64 Freivalds check) in its own layout. A holds 7-bit values (0..127):
// oneDNN's AVX2 path (vpmaddubsw) saturates int16 pair sums on full-range u8 and then fails
// the check, while strata is exact for any input. % of peak is against the int8 peak `strata
// info` gives (VNNI: four times the f32 peak, 64 multiply-adds per vpdpbusd where one f32 FMA
// does 16), or without VNNI twice the f32 peak (one pmaddwd does 16 where an FMA does 8).
void run_int8_problem(const GemmProblem& p, int threads, const std::vector<bench::GemmPeer>& peers,
                      bench::OnednnMatmul* onednn, int reps, double peak_per_core, std::vector<Row>& rows) {
  std::mt19937 rng(42);
  std::vector<uint8_t> a(size_t(p.m * p.k * p.batch));
  std::vector<int8_t> b(size_t(p.k * p.n * p.batch));
  std::vector<int32_t> c(size_t(p.m * p.n * p.batch));
  for (auto& v : a) v = uint8_t(rng() % 128);
  for (auto& v : b) v = int8_t(rng());
  blas::Handle h;
  h.set_num_threads(threads);
  // Element strides of op(A), op(B) and C for column-major (strata) or row-major (oneDNN).
  struct Strides { int64_t ar, ac, br, bc, cr, cc, lda, ldb, ldc; };
  auto strides = [&](bool col) {
    Strides s;
    // At least 1, as BLAS wants even for an empty matrix (gemm_ex rejected 0x10x10 otherwise).
    s.lda = std::max<int64_t>(1, col ? (p.ta == 'N' ? p.m : p.k) : (p.ta == 'N' ? p.k : p.m));
    s.ldb = std::max<int64_t>(1, col ? (p.tb == 'N' ? p.k : p.n) : (p.tb == 'N' ? p.n : p.k));
    s.ldc = std::max<int64_t>(1, col ? p.m : p.n);
    const bool an = (p.ta == 'N') == col, bn = (p.tb == 'N') == col;  // unit row stride of op(A)/op(B)
    s.ar = an ? 1 : s.lda, s.ac = an ? s.lda : 1;
    s.br = bn ? 1 : s.ldb, s.bc = bn ? s.ldb : 1;
    s.cr = col ? 1 : s.ldc, s.cc = col ? s.ldc : 1;
    return s;
  };
  const Strides cs = strides(true), rs = strides(false);
  const int64_t asz = p.m * p.k, bsz = p.k * p.n, csz = p.m * p.n;
  std::vector<Lib> libs;
  libs.push_back({"strata", [&](int64_t i) {
                    blas::gemm_ex(h, blas::Op(p.ta), blas::Op(p.tb), p.m, p.n, p.k, int32_t(1), a.data() + i * asz,
                                  DType::u8, cs.lda, b.data() + i * bsz, DType::i8, cs.ldb, int32_t(0),
                                  c.data() + i * csz, cs.ldc);
                  }, {}});
  if (p.batch > 1)
    libs[0].call_batch = [&] {
      blas::gemm_strided_batched_ex(h, blas::Op(p.ta), blas::Op(p.tb), p.m, p.n, p.k, int32_t(1), a.data(), DType::u8,
                                    cs.lda, asz, b.data(), DType::i8, cs.ldb, bsz, int32_t(0), c.data(), cs.ldc, csz,
                                    p.batch);
    };
  std::vector<const Strides*> layout{&cs};
  const bench::MatmulLayout ml{p.m, p.n, p.k, p.batch, rs.ar, rs.ac, asz, rs.br, rs.bc, bsz, rs.cr, rs.cc, csz};
  add_onednn_matmul(onednn, bench::MatmulTypes::u8s8s32, ml, p, "u8s8s32", threads, a.data(), b.data(), c.data(),
                    libs);
  if (libs.size() > layout.size()) layout.push_back(&rs);
  for (const auto& peer : peers) {
    if (!peer.gemm_u8s8s32) continue;
    const bench::GemmPeer* pp = &peer;
    libs.push_back({peer.name == "onednn" ? "onednn-gemm" : peer.name, [&, pp](int64_t i) {
                      pp->gemm_u8s8s32(const_cast<bench::GemmPeer*>(pp), p.ta, p.tb, p.m, p.n, p.k, a.data() + i * asz,
                                       rs.lda, b.data() + i * bsz, rs.ldb, c.data() + i * csz, rs.ldc);
                    }, {}});
    layout.push_back(&rs);
  }
  for (const auto& peer : peers)
    if (peer.set_threads) peer.set_threads(const_cast<bench::GemmPeer*>(&peer), threads);
  for (size_t li = 0; li < libs.size(); ++li) {
    std::fill(c.begin(), c.end(), 0);
    libs[li].run_batch(p.batch);
    // C x == op(A) (op(B) x) exactly, x in [-8, 8].
    const Strides& st = *layout[li];
    std::vector<int64_t> x(size_t(p.n)), bx(size_t(p.k), 0);
    for (auto& v : x) v = int64_t(rng() % 17) - 8;
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t l = 0; l < p.k; ++l) bx[size_t(l)] += int64_t(b[size_t(l * st.br + j * st.bc)]) * x[size_t(j)];
    for (int64_t i = 0; i < p.m && libs[li].ok; ++i) {
      int64_t want = 0, got = 0;
      for (int64_t l = 0; l < p.k; ++l) want += int64_t(a[size_t(i * st.ar + l * st.ac)]) * bx[size_t(l)];
      for (int64_t j = 0; j < p.n; ++j) got += int64_t(c[size_t(i * st.cr + j * st.cc)]) * x[size_t(j)];
      if (got != want) {
        libs[li].ok = false;
        std::fprintf(stderr, "bench: %s gave a wrong result on %s (row %lld)\n", libs[li].name.c_str(), p.text.c_str(),
                     static_cast<long long>(i));
      }
    }
  }
  time_and_report(p, "u8s8s32", threads, reps, peak_per_core, libs, rows);
}

// "bias+gelu_erf" → an lt epilogue with a per-row bias (owned by `bias`).
template <class T>
blas::lt::Epilogue parse_epilogue(const std::string& text, std::vector<T>& bias, int64_t m) {
  blas::lt::Epilogue e;
  std::stringstream ss(text);
  std::string piece;
  static const std::pair<const char*, blas::lt::Activation> acts[] = {
      {"relu", blas::lt::Activation::relu}, {"gelu_erf", blas::lt::Activation::gelu_erf},
      {"gelu_tanh", blas::lt::Activation::gelu_tanh}, {"silu", blas::lt::Activation::silu},
      {"sigmoid", blas::lt::Activation::sigmoid}, {"tanh", blas::lt::Activation::tanh}};
  while (std::getline(ss, piece, '+')) {
    if (piece == "bias") {
      bias.assign(size_t(std::max<int64_t>(m, 1)), T(0.25));
      e.bias(bias.data());
      continue;
    }
    bool found = false;
    for (auto& [name, act] : acts)
      if (piece == name) e.activation(act), found = true;
    if (!found) throw_error(Status::invalid_argument, "--epilogue", "unknown piece '" + piece + "'");
  }
  return e;
}

template <class T>
void run_problem(const GemmProblem& p, int threads, const std::vector<bench::GemmPeer>& peers, int reps,
                 double peak_per_core, const std::string& epilogue, blas::MathMode math, std::vector<Row>& rows) {
  std::mt19937 rng(42);
  Operands<T> o(p, rng);
  blas::Handle h;
  h.set_num_threads(threads);
  h.set_math_mode(math);
  const char* dt = sizeof(T) == 4 ? "f32" : "f64";

  std::vector<Lib> libs;
  libs.push_back({"strata", [&](int64_t b) {
                    blas::gemm<T>(h, blas::Op(p.ta), blas::Op(p.tb), p.m, p.n, p.k, T(1), o.a.data() + b * o.a_size,
                                  o.lda, o.b.data() + b * o.b_size, o.ldb, T(0), o.c.data() + b * o.c_size, o.ldc);
                  }, {}});
  // A batch goes through strata's batched entry point (one call; the batch is split among
  // threads); the peers loop over their gemm, having no batched entry in their BLAS interface.
  if (p.batch > 1)
    libs[0].call_batch = [&] {
      blas::gemm_strided_batched<T>(h, blas::Op(p.ta), blas::Op(p.tb), p.m, p.n, p.k, T(1), o.a.data(), o.lda,
                                    o.a_size, o.b.data(), o.ldb, o.b_size, T(0), o.c.data(), o.ldc, o.c_size,
                                    p.batch);
    };
  // With --epilogue, strata's row runs the fused lt matmul and "strata-plain" the bare GEMM
  // (its verification is skipped: the epilogue changes the result by design).
  std::vector<T> bias;
  blas::lt::MatmulDesc desc;
  blas::lt::MatrixLayout la, lb, lc;
  if (!epilogue.empty()) {
    desc.compute = sizeof(T) == 4 ? DType::f32 : DType::f64;
    desc.transa = blas::Op(p.ta), desc.transb = blas::Op(p.tb);
    desc.epilogue = parse_epilogue<T>(epilogue, bias, p.m);
    la = {desc.compute, p.ta == 'N' ? p.m : p.k, p.ta == 'N' ? p.k : p.m, o.lda};
    lb = {desc.compute, p.tb == 'N' ? p.k : p.n, p.tb == 'N' ? p.n : p.k, o.ldb};
    lc = {desc.compute, p.m, p.n, o.ldc};
    libs[0].name = "strata-plain";
    libs.push_back({"strata+epi", [&](int64_t b) {
                      const T one = 1, zero = 0;
                      blas::lt::matmul(h, desc, &one, o.a.data() + b * o.a_size, la, o.b.data() + b * o.b_size, lb,
                                       &zero, nullptr, lc, o.c.data() + b * o.c_size, lc);
                    }, {}});
  }
  for (const auto& peer : peers) {
    if constexpr (sizeof(T) == 4) {
      if (!peer.sgemm) continue;
    } else {
      if (!peer.dgemm) continue;
    }
    const bench::GemmPeer* pp = &peer;
    libs.push_back({peer.name, [&, pp](int64_t b) {
                      auto* self = const_cast<bench::GemmPeer*>(pp);
                      if constexpr (sizeof(T) == 4)
                        pp->sgemm(self, p.ta, p.tb, p.m, p.n, p.k, 1.0f, o.a.data() + b * o.a_size, o.lda,
                                  o.b.data() + b * o.b_size, o.ldb, 0.0f, o.c.data() + b * o.c_size, o.ldc);
                      else
                        pp->dgemm(self, p.ta, p.tb, p.m, p.n, p.k, 1.0, o.a.data() + b * o.a_size, o.lda,
                                  o.b.data() + b * o.b_size, o.ldb, 0.0, o.c.data() + b * o.c_size, o.ldc);
                    }, {}});
  }
  for (const auto& peer : peers)
    if (peer.set_threads) peer.set_threads(const_cast<bench::GemmPeer*>(&peer), threads);

  // Verify each library once (also the warm-up).
  for (auto& lib : libs) {
    std::fill(o.c.begin(), o.c.end(), T(0));
    lib.run_batch(p.batch);
    std::string why;
    if (lib.name == "strata+epi") continue;
    lib.ok = verify(p, o, why);
    if (!lib.ok) std::fprintf(stderr, "bench: %s gave a wrong result on %s: %s\n", lib.name.c_str(), p.text.c_str(), why.c_str());
  }
  time_and_report(p, dt, threads, reps, peak_per_core * (sizeof(T) == 4 ? 1.0 : 0.5), libs, rows);
}

std::vector<std::string> split_list(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& s : in) {
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) out.push_back(item);
  }
  return out;
}

// oneDNN's matmul primitive, the "onednn" peer of the bf16 and u8s8s32 rows: loaded only when
// onednn is asked for and one of those types is benchmarked; null otherwise or when absent.
std::unique_ptr<bench::OnednnMatmul> load_onednn_matmul(const std::vector<std::string>& wanted,
                                                        const std::vector<std::string>& dtypes,
                                                        std::vector<std::string>& missing) {
  auto has = [](const std::vector<std::string>& list, const char* a, const char* b) {
    return std::find(list.begin(), list.end(), a) != list.end() || std::find(list.begin(), list.end(), b) != list.end();
  };
  if (!has(wanted, "onednn", "all") || !has(dtypes, "bf16", "u8s8s32")) return nullptr;
  std::string why_not;
  auto mm = bench::OnednnMatmul::load(why_not);
  if (!mm) missing.push_back("onednn matmul (" + why_not + ")");
  return mm;
}

struct BenchOptions {
  std::vector<std::string> problems, dtypes{"f32"}, peers{"all"};
  std::string file, csv, json, epilogue, math = "deterministic";
  std::vector<int> threads{1};
  int reps = 5;
};

int run_gemm_bench(const BenchOptions& opt) {
  std::vector<GemmProblem> problems;
  for (const auto& s : split_list(opt.problems)) problems.push_back(parse_problem(s));
  if (!opt.file.empty()) {
    std::ifstream in(opt.file);
    if (!in) throw_error(Status::invalid_argument, "--file", "cannot read '" + opt.file + "'");
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '#') problems.push_back(parse_problem(line));
  }
  if (problems.empty()) throw_error(Status::invalid_argument, "--problems", "give at least one problem or --file");
  std::vector<std::string> missing;
  auto wanted = split_list(opt.peers);
  std::vector<bench::GemmPeer> peers;
  if (!(wanted.size() == 1 && wanted[0] == "none")) peers = bench::load_gemm_peers(wanted, missing);
  auto onednn_matmul = load_onednn_matmul(wanted, split_list(opt.dtypes), missing);
  for (const auto& m : missing) std::fprintf(stderr, "bench: peer not available: %s\n", m.c_str());
  const PeakEstimate& pk = measure_peak();
  std::printf("# peak %.1f GFLOPS/core f32 (%s, %.2f GHz measured); OPENBLAS_CORETYPE unset for this run\n",
              pk.peak_gflops_f32, std::string(isa_name(pk.isa)).c_str(), pk.clock_ghz);
  const blas::MathMode math = opt.math == "fast" ? blas::MathMode::fast : blas::MathMode::deterministic;
  if (math == blas::MathMode::fast) std::printf("# strata's f32/f64 calls in math mode fast\n");
  std::printf("%-26s %-7s %3s %-11s %9s %7s %8s\n", "problem", "type", "thr", "library", "GFLOPS", "%peak", "vs best");
  std::vector<Row> rows;
  for (const auto& dt : split_list(opt.dtypes))
    for (int t : opt.threads)
      for (const auto& p : problems) {
        size_t first = rows.size();
        if (dt == "f32") run_problem<float>(p, t, peers, opt.reps, pk.peak_gflops_f32, opt.epilogue, math, rows);
        else if (dt == "f64") run_problem<double>(p, t, peers, opt.reps, pk.peak_gflops_f32, opt.epilogue, math, rows);
        else if (dt == "u8s8s32")
          run_int8_problem(p, t, peers, onednn_matmul.get(), opt.reps,
                           pk.peak_gops_int8 > 0 ? pk.peak_gops_int8 : 2 * pk.peak_gflops_f32, rows);
        else if (dt == "bf16")
          run_bf16_problem(p, t, onednn_matmul.get(), opt.reps, std::max(pk.peak_gflops_bf16, pk.peak_gflops_f32),
                           opt.epilogue, rows);
        else throw_error(Status::invalid_argument, "--dtype", "'" + dt + "' (expected f32, f64, bf16 or u8s8s32)");
        for (size_t i = first; i < rows.size(); ++i) {
          const Row& r = rows[i];
          char ratio[16] = "";
          if (r.ratio_to_best_peer > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", r.ratio_to_best_peer);
          std::printf("%-26s %-7s %3d %-11s %9.1f %6.1f%% %8s%s\n", r.problem.c_str(), r.dtype.c_str(), r.threads,
                      r.lib.c_str(), r.gflops, r.pct_peak, ratio, r.verified ? "" : "  WRONG RESULT");
        }
        std::fflush(stdout);
      }
  if (!opt.csv.empty()) {
    std::ofstream out(opt.csv);
    out << "problem,dtype,threads,library,gflops,pct_peak,ratio_to_best_peer,verified\n";
    for (const auto& r : rows)
      out << r.problem << ',' << r.dtype << ',' << r.threads << ',' << r.lib << ',' << r.gflops << ',' << r.pct_peak
          << ',' << r.ratio_to_best_peer << ',' << (r.verified ? 1 : 0) << '\n';
  }
  if (!opt.json.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"problem", r.problem}, {"dtype", r.dtype}, {"threads", r.threads}, {"library", r.lib},
                   {"gflops", r.gflops}, {"pct_peak", r.pct_peak}, {"ratio_to_best_peer", r.ratio_to_best_peer},
                   {"verified", r.verified}});
    std::ofstream(opt.json) << j.dump(2) << '\n';
  }
  for (const auto& r : rows)
    if (!r.verified) return 1;
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* bench = app.add_subcommand("bench", "Benchmark strata against peer libraries, verified first");
  bench->require_subcommand(1);
  auto opt = std::make_shared<BenchOptions>();
  auto* gemm = bench->add_subcommand("gemm", "GEMM: problems like NN:1024x1024x1024 or NN:batch1000:32x32x32");
  gemm->add_option("-p,--problems", opt->problems, "Problems, comma separated");
  gemm->add_option("-f,--file", opt->file, "File with one problem per line (see bench/problems/)");
  gemm->add_option("--dtype", opt->dtypes, "f32,f64,bf16,u8s8s32")->delimiter(',');
  gemm->add_option("-t,--threads", opt->threads, "Thread counts, e.g. 1,2")->delimiter(',');
  gemm->add_option("--peers", opt->peers, "all, none, or a list of openblas,blis,onednn")->delimiter(',');
  gemm->add_option("-r,--reps", opt->reps, "Timed repetitions per library (median reported)")->check(CLI::PositiveNumber);
  gemm->add_option("--epilogue", opt->epilogue,
                   "Fused epilogue for strata via blas::lt, e.g. bias+gelu_erf (adds a strata-plain row)");
  gemm->add_option("--math", opt->math,
                   "strata's f32/f64 math mode: deterministic (default) or fast (the depth split among threads where "
                   "C's split would leave them idle)")
      ->check(CLI::IsMember({"deterministic", "fast"}));
  gemm->add_option("--csv", opt->csv, "Also write CSV here");
  gemm->add_option("--json", opt->json, "Also write JSON here");
  gemm->callback([opt, &exit_code] { exit_code = run_gemm_bench(*opt); });
  add_bench_level2_command(*bench, exit_code);
  add_bench_pool_command(*bench, exit_code);
#ifdef STRATA_CLI_BENCH_CONV
  add_bench_conv_command(*bench, exit_code);
#endif
}

}  // namespace strata::cli
