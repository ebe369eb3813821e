// The register level of the tile hierarchy: one MR x NR block of C from a packed A micro-panel
// and a B micro-panel, BLIS style. Written once over a SIMD vector type V; MR = NV * lanes.
//
//   A micro-panel: for each p, MR consecutive elements at a + p * a_ps (packed: a_ps = MR;
//                  read in place from a column-major op(A): a_ps = lda)
//   B micro-panel: element (p, j) at b[p * b_ps + j * b_js]  (packed: b_ps = NR, b_js = 1;
//                  read in place from a column-major op(B): b_ps = 1, b_js = ldb, etc.)
//   C block:       c[i + j * ldc], written as alpha * (A B) + beta * C; beta == 0 never reads C.
#pragma once
#include <algorithm>
#include <cstdint>

#include "strata/tile/blocking.hpp"
#include "strata/tile/fetch_ahead.hpp"
#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

// The largest power of two below `width` (1 for 1): the next kernel width of an edge.
constexpr int narrower_width(int width) {
  int w = 1;
  while (2 * w < width) w *= 2;
  return w;
}

// Calls each(value) once, where value(x, old) is alpha * x + beta * old(), old() loading the C
// vector x goes to: how every floating-point C tile is finished (MicroKernel::store, and the
// small-product path, tile/small_gemm.hpp, with its ragged rows), so that the paths give the same
// bits. beta == 0 never calls old() (C is not read). alpha == 1 (every convolution, most GEMMs)
// skips the multiply by alpha and beta == 1 (the k blocks after the first; trsm's updates) the
// multiply by beta: the same bits (x * 1 is exact), but the multiplies ran on the two FMA pipes
// the next tile's k loop needs, 12 per 16x6 tile, a quarter of a tile's fixed cost at depth 64.
template <class V, class Each>
[[gnu::always_inline]] inline void update_c(typename V::value_type alpha, typename V::value_type beta, Each&& each) {
  using T = typename V::value_type;
  const V va = V::set1(alpha);
  if (beta == T(0)) {
    if (alpha == T(1)) each([](V x, auto&&) __attribute__((always_inline)) { return x; });
    else each([&](V x, auto&&) __attribute__((always_inline)) { return x * va; });
  } else if (beta == T(1)) {
    if (alpha == T(1)) each([](V x, auto&& old) __attribute__((always_inline)) { return x + old(); });
    else each([&](V x, auto&& old) __attribute__((always_inline)) { return fma(x, va, old()); });
  } else {
    const V vb = V::set1(beta);
    each([&](V x, auto&& old) __attribute__((always_inline)) { return fma(x, va, old() * vb); });
  }
}

// The ISA's tall partner of a kernel: twice the rows and half the columns of C per tile (AVX-512:
// 64x6 beside f32's 32x12, 32x6 beside f64's 16x12), fewer loads per FMA where the taller A
// panel stays in L1 (the one-block path, tiny_gemm.hpp). kernel_configs.hpp names the pairs;
// a kernel without one is its own.
template <class Kernel>
struct TallKernelOf {
  using type = Kernel;
};

template <class V, int NV, int NR>
struct MicroKernel {
  using T = typename V::value_type;
  using Vec = V;
  static constexpr int mr = NV * V::lanes, nv = NV;
  static constexpr int nr = NR;
  static_assert(NV >= 1 && NR >= 1, "a micro-tile needs at least one vector and one column");
  static_assert(NV * NR + NV + 1 <= 32, "the micro-tile's accumulators do not fit in the register file");

  // Narrower kernels for edge tiles, reading the same panels (a_ps/b_ps unchanged): a tile
  // with at most half the rows costs half the FMAs instead of a full tile. The column widths
  // fall in powers of two (32x12 -> 32x8, 32x4, 32x2, 32x1; 16x6 -> 16x4, ...), so that every
  // edge width is an exact sum of kernels (exact_edges, cover_narrowest): an edge read in
  // place needs no zero-padded copy of B and writes C directly, with no copied tile. With
  // halving widths (12 -> 6 -> 3 -> 1) the 8 edge columns of a 32^3 product went through a
  // packed 12-wide panel, a 6- and a padded 3-wide kernel and a copied C tile: 760 cycles of
  // its 1900, where one in-place 32x8 kernel takes about 290.
  using HalfRows = MicroKernel<V, (NV > 1 ? NV / 2 : 1), NR>;
  using NarrowCols = MicroKernel<V, NV, narrower_width(NR)>;
  static constexpr bool exact_edges = true;

  // Independent accumulator sets the k loop rotates through. Covering the FMA latency takes
  // about 8 accumulators in flight (4 cycles x 2 FMAs per cycle); the narrow edge kernels
  // (16x2, 16x1 on AVX2; 32x2, 32x1 on AVX-512) have fewer, so their steps alternate between
  // sets, added in a fixed order at the end (the same for every call: results stay
  // deterministic). A 16x1 edge column ran at a quarter of the FMA rate with one set. Full
  // tiles keep one set.
  // Below this depth the extra sets' zeroing and final adds cost more than they hide (32^3:
  // 59 -> 62 GFLOPS with one set there).
  static constexpr int64_t chained_min_depth = 48;
  static constexpr int chains = [] {
    const int per_set = NR * NV, wanted = (8 + per_set - 1) / per_set, fit = (16 - NV - 1) / per_set;
    const int n = wanted < fit ? wanted : (fit > 1 ? fit : 1);
    return n < 4 ? n : 4;  // at most 4: 8x1 with 8 sets spent more on them than it hid (100^3 -1.7%)
  }();

  // acc += A B over kc steps. Strides given as template arguments (non-zero) are used as
  // constants; zero means "use the run-time value".
  // Always inlined, as start and store are: the accumulators stay in registers only while the
  // whole tile is one function (an out-of-line call taking their address keeps them in memory).
  template <int APS, int BPS, int BJS, bool StridedB = false>
  [[gnu::always_inline]] static void accumulate(int64_t kc, const T* __restrict a, int64_t a_ps,
                                                const T* __restrict b, int64_t b_ps, int64_t b_js,
                                                V (&acc)[NR][NV]) {
    with_sets(kc, acc, [&](Sets* more) __attribute__((always_inline)) {
      NoFetch none;
      rotate<APS, BPS, BJS, StridedB>(kc, a, a_ps, b, b_ps, b_js, acc, more, none);
    });
  }

  // body(more) over a depth of `depth` steps: with the extra accumulator sets (zeroed before,
  // added into acc after) where the kernel has them and the depth pays for them, else null.
  template <class Body>
  [[gnu::always_inline]] static void with_sets(int64_t depth, V (&acc)[NR][NV], Body&& body) {
    if constexpr (chains > 1) {
      if (depth >= chained_min_depth) {
        Sets more;
        zero_sets(more);
        body(&more);
        merge_sets(acc, more);
        return;
      }
    }
    body(nullptr);
  }

  // The extra accumulator sets: chains - 1 of them (one unused set when there are none).
  using Sets = V[chains > 1 ? chains - 1 : 1][NR][NV];

  // kc steps of acc += A B; with `more`, step p goes into set p mod chains (0: acc, s + 1:
  // more[s]), so consecutive steps' FMAs are independent. Calls over consecutive pieces of one
  // depth (run_pieces) keep the sets between them. Each step also takes one step of `fetch`
  // (the fetchers below).
  // With StridedB (and B's column stride a run-time value), B's columns are addressed as
  // StridedColumns below.
  template <int APS, int BPS, int BJS, bool StridedB = false, class Fetch>
  [[gnu::always_inline]] static void rotate(int64_t kc, const T* __restrict a, int64_t a_ps, const T* __restrict b,
                                            int64_t b_ps, int64_t b_js, V (&acc)[NR][NV], Sets* more,
                                            Fetch& fetch) {
    if constexpr (APS != 0) a_ps = APS;
    if constexpr (BPS != 0) b_ps = BPS;
    if constexpr (BJS != 0 || !StridedB) {
      if constexpr (BJS != 0) b_js = BJS;
      auto step = [&](V (&t)[NR][NV]) __attribute__((always_inline)) {
        fma_step(t, a, [&](int j) __attribute__((always_inline)) { return b + j * b_js; });
        fetch.step();
        a += a_ps;
        b += b_ps;
      };
      rotate_sets(kc, acc, more, step);
    } else {
      StridedColumns cols(b, b_js);
      auto step = [&](V (&t)[NR][NV]) __attribute__((always_inline)) {
        cols.hide_strides();
        fma_step(t, a, [&](int j) __attribute__((always_inline)) { return cols.at(j); });
        fetch.step();
        a += a_ps;
        cols.advance(b_ps);
      };
      rotate_sets(kc, acc, more, step);
    }
  }

  // B's NR columns a run-time stride apart (read in place), addressed from two bases six
  // columns apart and the byte strides of one, three and five columns: every column is one x86
  // addressing mode (base + stride * 1, 2 or 4), five registers for B in the k loop. Left to
  // itself GCC kept an offset register per column and spilled the rest to the stack, reloaded
  // every step, in run (the one-block path's tiles, A in place: f32 and f64 32^3-128^3 NN, NT
  // and TN 1.01-1.04x with these), run_column and run_pieces (the conv1 stem's 7 x 21-step
  // pieces 1.04x stand-alone; an earlier run_pieces, whose loop GCC laid out differently, had
  // spilled an A vector with them instead: 0.71x).
  struct StridedColumns {
    static_assert(NR <= 12, "two bases of six columns each");
    const char* base0;
    const char* base6;
    std::intptr_t s1, s3, s5;
    [[gnu::always_inline]] StridedColumns(const T* b, int64_t js)
        : base0(reinterpret_cast<const char*>(b)),
          base6(base0 + 6 * js * int64_t(sizeof(T))),
          s1(std::intptr_t(js) * std::intptr_t(sizeof(T))),
          s3(3 * s1),
          s5(5 * s1) {}
    // An empty asm that "changes" the strides each step: GCC can then no longer fold
    // base + c * stride into an induction variable (a register) of its own per column.
    [[gnu::always_inline]] void hide_strides() {
      asm("" : "+r"(s1));
      if constexpr (NR > 3) asm("" : "+r"(s3));
      if constexpr (NR > 5) asm("" : "+r"(s5));
    }
    [[gnu::always_inline]] const T* at(int j) const {
      const char* p = j < 6 ? base0 : base6;
      switch (j % 6) {
        case 0: return reinterpret_cast<const T*>(p);
        case 1: return reinterpret_cast<const T*>(p + s1);
        case 2: return reinterpret_cast<const T*>(p + 2 * s1);
        case 3: return reinterpret_cast<const T*>(p + s3);
        case 4: return reinterpret_cast<const T*>(p + 4 * s1);
        default: return reinterpret_cast<const T*>(p + s5);
      }
    }
    [[gnu::always_inline]] void advance(int64_t elements) {
      base0 += elements * int64_t(sizeof(T));
      if constexpr (NR > 6) base6 += elements * int64_t(sizeof(T));
    }
  };

  // What a k loop fetches ahead of its reads, a little at each step: data from memory or L3
  // that the hardware prefetcher would find too late. Spread over the steps, not issued in a
  // burst: a burst fills the load queue and the miss buffers the k loop's own loads need.
  struct NoFetch {
    [[gnu::always_inline]] void step() {}
  };
  // A slices `ps` apart from `at` on (the next tile's packed A), every line of one per step.
  struct SliceFetch {
    const T* at;
    int64_t ps;
    [[gnu::always_inline]] void step() {
      fetch_slice(at);
      at += ps;
    }
  };
  // A B column panel read in place: NR columns (or `columns`) `js` apart, each `depth`
  // contiguous values from `at`; one line per step, column by column (each from the line
  // holding its first value), then the last line again (a hit). A step is a prefetch, an add
  // and a compare; the first version (a line of every column in turn, its offset clamped to
  // the column: an index multiply, a min, loads of its fields and a counter kept in memory,
  // about 15 instructions a step beside the k step's 38) left the depth-64 1x1 convolution's
  // column walk 2-3% slower (stand-alone loop, in-process, with and without its operands in
  // cache).
  // AnyColumns: `columns` columns rather than NR (a share of A's next block, Mainloop::NextA;
  // B's panels keep NR a constant).
  template <bool AnyColumns>
  struct ColumnFetch {
    static constexpr std::intptr_t line = 64;
    const char* at;           // the current column's first value
    std::intptr_t js, bytes;  // bytes between columns, bytes of one column
    const char* cur;          // the next line to fetch
    const char* end;          // the end of the current column
    std::intptr_t inc = line; // 0 once every column is fetched
    int j = 0;
    // Into L2 rather than L1 for a B coming from memory: an L1 fetch holds one of L1's few miss
    // buffers for a memory latency, which the panel's own reads then wait for (in-process, 1
    // thread, Zen 4: sgemm 16 x 4000 x 4000 1.20-1.23x). From L3 the L1 hint stays (the NHWC 1x1
    // layers at batch 8 had read 0.93-0.96x with the L2 hint), except for panels whose columns
    // share an L1 set (Mainloop::run_column_in_fitting_widths).
    bool into_l2;
    int cols;
    [[gnu::always_inline]] ColumnFetch(const T* first, int64_t col_stride, int64_t depth, bool l2, int64_t columns = NR)
        : at(reinterpret_cast<const char*>(first)),
          js(std::intptr_t(col_stride) * std::intptr_t(sizeof(T))),
          bytes(std::intptr_t(depth) * std::intptr_t(sizeof(T))),
          cur(line_of(at)),
          end(at + bytes),
          into_l2(l2),
          cols(int(columns)) {}
    [[gnu::always_inline]] static const char* line_of(const char* p) {
      return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t(line - 1));
    }
    [[gnu::always_inline]] void step() {
      if (into_l2) __builtin_prefetch(cur, 0, 2);
      else __builtin_prefetch(cur);
      cur += inc;
      if (cur >= end) [[unlikely]] next_column();
    }
    // Inlined: an out-of-line call in the k loop makes GCC keep the accumulators in memory
    // around it (0.89x).
    [[gnu::always_inline]] void next_column() {
      if (++j == (AnyColumns ? cols : NR)) {
        inc = 0, cur -= line, end = cur + 1;
        return;
      }
      at += js;
      cur = line_of(at);
      end = at + bytes;
    }
  };
  using PanelFetch = ColumnFetch<false>;
  // A stretch of A from `at` on, `bytes` a step (at most two lines: one line named per step up
  // to a line's bytes, the next one too beyond; under a line the same line is named again, a
  // hit, so the stretch is fetched at a lower rate), with __builtin_prefetch's locality (2:
  // into L2).
  template <int Locality>
  struct LineFetch {
    const char* at;
    std::intptr_t bytes;
    [[gnu::always_inline]] void step() {
      __builtin_prefetch(at, 0, Locality);
      if (bytes > 64) __builtin_prefetch(at + 64, 0, Locality);
      at += bytes;
    }
  };
  template <class First, class Second>
  struct BothFetch {
    First first;
    Second second;
    [[gnu::always_inline]] void step() {
      first.step();
      second.step();
    }
  };

  // Prefetches the MR values of one step's A slice at `at`, every line of them: one line per
  // step (half of a 32-float slice) left the Winograd products streaming U from memory 1.7x
  // slower (res5_3x3).
  [[gnu::always_inline]] static void fetch_slice(const T* at) {
#pragma GCC unroll 4
    for (int o = 0; o < int(mr * sizeof(T)); o += 64) __builtin_prefetch(at + o / int(sizeof(T)));
  }

  // One k step into the accumulator set t: A's MR values at a, B's column j at b_at(j).
  template <class BAt>
  [[gnu::always_inline]] static void fma_step(V (&t)[NR][NV], const T* __restrict a, const BAt& b_at) {
    V av[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) av[v] = V::load(a + v * V::lanes);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
      const V bj = V::broadcast(b_at(j));
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) t[j][v] = fma(av[v], bj, t[j][v]);
    }
  }

  // kc calls of step(set): all into acc, or with `more`, call p into set p mod chains.
  // Forced inline like everything here: when GCC's own choice left this loop out of line
  // the accumulators went through memory (16^3-20^3 ran 2.5-4x slower).
  template <class Step>
  [[gnu::always_inline]] static void rotate_sets(int64_t kc, V (&acc)[NR][NV], Sets* more, Step& step) {
    auto one_set = [&]() __attribute__((always_inline)) {
#pragma GCC unroll 4
      for (int64_t p = 0; p < kc; ++p) step(acc);
    };
    if (chains == 1 || !more) return one_set();
    if constexpr (chains > 1) {
      int64_t p = 0;
#pragma GCC unroll 2
      for (; p + chains <= kc; p += chains) {
        step(acc);
#pragma GCC unroll 8
        for (int s = 0; s < chains - 1; ++s) step((*more)[s]);
      }
      if (p < kc) step(acc);
#pragma GCC unroll 8
      for (int s = 0; s < chains - 1; ++s)
        if (p + 1 + s < kc) step((*more)[s]);
    }
  }

  [[gnu::always_inline]] static void zero_sets(Sets& more) {
#pragma GCC unroll 8
    for (int s = 0; s < chains - 1; ++s)
#pragma GCC unroll 16
      for (int j = 0; j < NR; ++j)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) more[s][j][v] = V::zero();
  }

  // acc += every extra set, in a fixed order (the same for every call: results stay
  // deterministic).
  [[gnu::always_inline]] static void merge_sets(V (&acc)[NR][NV], const Sets& more) {
#pragma GCC unroll 8
    for (int s = 0; s < chains - 1; ++s)
#pragma GCC unroll 16
      for (int j = 0; j < NR; ++j)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[j][v] = acc[j][v] + more[s][j][v];
  }

  // Never inlined: one copy per kernel, called by every path (GCC inlining the 16x3 edge kernel
  // into run_narrowest once cost the tiny path 3-4% at 32^3-64^3).
  [[gnu::noinline]] static void run(int64_t kc, const T* __restrict a, int64_t a_ps, const T* __restrict b,
                                    int64_t b_ps, int64_t b_js, T* __restrict c, int64_t ldc, T alpha, T beta,
                                    FetchAhead* ahead = nullptr, bool fetch_c = true) {
    V acc[NR][NV];
    start(acc, c, ldc, fetch_c);
    // With operands to fetch for the next product (a batch's next entry: the tiny path, which
    // reads A and B in place or from its own small copies), a step of it per k step.
    if (ahead && ahead->pending()) {
      FetchAhead::Cursor fetch = ahead->cursor();
      with_sets(kc, acc, [&](Sets* more) __attribute__((always_inline)) {
        if (b_ps == 1) rotate<0, 1, 0, true>(kc, a, a_ps, b, 1, b_js, acc, more, fetch);
        else rotate<0, 0, 0, true>(kc, a, a_ps, b, b_ps, b_js, acc, more, fetch);
      });
      ahead->resume(fetch);
      return store(acc, c, ldc, alpha, beta);
    }
    with_strides(a_ps, b_ps, b_js, [&]<int APS, int BPS, int BJS, bool StridedB>() __attribute__((always_inline)) {
      accumulate<APS, BPS, BJS, StridedB>(kc, a, a_ps, b, b_ps, b_js, acc);
    });
    store(acc, c, ldc, alpha, beta);
  }

  // body.template operator()<APS, BPS, BJS, StridedB>() with the strides accumulate takes as
  // constants for these run-time ones. Packed panels (the common case) get a loop with
  // compile-time strides: every load is a constant displacement from two pointers, with no
  // stride registers to keep alive. B read in place (NN/TN: contiguous columns) is addressed
  // as StridedColumns.
  template <class Body>
  [[gnu::always_inline]] static void with_strides(int64_t a_ps, int64_t b_ps, int64_t b_js, Body&& body) {
    if (a_ps == mr && b_ps == NR && b_js == 1) body.template operator()<mr, NR, 1, false>();
    else if (a_ps == mr && b_ps == 1) body.template operator()<mr, 1, 0, true>();
    else if (b_ps == 1) body.template operator()<0, 1, 0, true>();
    else body.template operator()<0, 0, 0, true>();
  }

  // `panels` full tiles side by side over one A slice: panel q's B from b + q * NR * b_js into
  // c + q * NR * ldc, each tile as run computes it (no C fetch; the same bits). The one-block
  // path's row of tiles in one call instead of a call through run_narrowest into run per tile,
  // whose twelve arguments and prologue had cost ~3% of a 64^3 product.
  [[gnu::noinline]] static void run_row(int64_t panels, int64_t kc, const T* __restrict a, int64_t a_ps,
                                        const T* __restrict b, int64_t b_ps, int64_t b_js, T* __restrict c,
                                        int64_t ldc, T alpha, T beta) {
    with_strides(a_ps, b_ps, b_js, [&]<int APS, int BPS, int BJS, bool StridedB>() __attribute__((always_inline)) {
      for (int64_t q = 0; q < panels; ++q, b += NR * b_js, c += NR * ldc) {
        V acc[NR][NV];
        start(acc, c, ldc, false);
        accumulate<APS, BPS, BJS, StridedB>(kc, a, a_ps, b, b_ps, b_js, acc);
        store(acc, c, ldc, alpha, beta);
      }
    });
  }

  // `tiles` full tiles down one column panel: tile t from the A panel at a + t * a_panel
  // (packed, a_ps = MR) into c + t * MR, all against the same B panel. One call per column
  // panel instead of per tile: B's addressing is set up once. With `fetch_after`, each k step
  // also prefetches the lines of the next tile's A slice it will read (of fetch_after's during
  // the last tile): for A read from memory (single-set kernels only). With `fetch_b` (B read in
  // place with contiguous columns, b_ps = 1), the k steps also fetch the next column panel,
  // NR columns b_js (or fetch_b_js: B's own stride where the panel read is a copy) apart from
  // fetch_b, a line per step (PanelFetch; single-set kernels too).
  // With `fetch_line_bytes` (two lines at most), the A fetch is a LineFetch instead: tile t names
  // the lines of that many bytes a step from fetch_after + t * a_panel on, into L2 -- a share of
  // a slice spread over several calls (Mainloop::a_stationary).
  // Never inlined, like run: inlined into the BLAS mainloop its k loop ran out of registers
  // for B's column offsets and reloaded them from the stack every step. B in place is
  // addressed as StridedColumns: with an offset register per column GCC still reloaded some
  // from the stack each step (1x1 convolutions 1.00-1.02x in-process with the bases).
  [[gnu::always_inline]] static void run_column(int64_t tiles, int64_t kc, const T* a, int64_t a_panel, const T* b,
                                                int64_t b_ps, int64_t b_js, T* c, int64_t ldc, T alpha, T beta,
                                                const T* fetch_after = nullptr, const T* fetch_b = nullptr,
                                                int64_t fetch_line_bytes = 0, int64_t fetch_b_js = 0,
                                                bool fetch_b_into_l2 = false) {
    run_column_sets<false>(tiles, kc, a, a_panel, b, b_ps, b_js, c, ldc, alpha, beta, fetch_after, fetch_b,
                           fetch_line_bytes, fetch_b_js, fetch_b_into_l2);
  }
  // run_column's tiles against a packed B panel (b_ps NR, b_js 1) whose k steps fetch `cols`
  // columns of `depth` values, `js` apart, from `fetch` into L2, a line a step: a share of A's
  // next block (Mainloop::NextA). One accumulator set, as run_column's full tiles (chains 1):
  // the same bits. A function of its own: as another branch of run_column_sets it had cost the
  // few-row walks of the transposed TN route 9-12% (TN 1024 x 16 x 1024, 2048 x 16 x 2048).
  [[gnu::noinline]] static void run_column_fetching(int64_t tiles, int64_t kc, const T* __restrict a,
                                                    int64_t a_panel, const T* __restrict b, T* __restrict c,
                                                    int64_t ldc, T alpha, T beta, const T* fetch, int64_t js,
                                                    int64_t cols, int64_t depth) {
    static_assert(chains == 1, "run_column's full tiles sum in one set");
    ColumnFetch<true> columns(fetch, js, depth, true, cols);
    column_tiles(tiles, c, ldc, alpha, beta, [&](int64_t t, V (&acc)[NR][NV]) __attribute__((always_inline)) {
      rotate<mr, NR, 1, false>(kc, a + t * a_panel, mr, b, NR, 1, acc, nullptr, columns);
    });
  }
  // run_column in one accumulator set even where the kernel has more (chains), so that a
  // narrower walk over some of a wider kernel's columns sums them as that kernel does, and
  // fetches as it does (Mainloop::run_column_in_fitting_widths).
  [[gnu::always_inline]] static void run_column_one_set(int64_t tiles, int64_t kc, const T* a, int64_t a_panel,
                                                        const T* b, int64_t b_js, T* c, int64_t ldc, T alpha, T beta,
                                                        const T* fetch_b, bool fetch_b_into_l2) {
    run_column_sets<true>(tiles, kc, a, a_panel, b, 1, b_js, c, ldc, alpha, beta, nullptr, fetch_b, 0, 0,
                          fetch_b_into_l2);
  }
  template <bool OneSet>
  [[gnu::noinline]] static void run_column_sets(int64_t tiles, int64_t kc, const T* __restrict a, int64_t a_panel,
                                                const T* __restrict b, int64_t b_ps, int64_t b_js, T* __restrict c,
                                                int64_t ldc, T alpha, T beta, const T* fetch_after,
                                                const T* fetch_b, int64_t fetch_line_bytes, int64_t fetch_b_js,
                                                bool fetch_b_into_l2) {
    auto each = [&]<int BPS, int BJS, bool FetchA, bool FetchB, int Lines = 0>() __attribute__((always_inline)) {
      // Over all the tiles, from where the last left off.
      PanelFetch panel(fetch_b, fetch_b_js ? fetch_b_js : b_js, kc, fetch_b_into_l2);
      column_tiles(tiles, c, ldc, alpha, beta, [&](int64_t t, V (&acc)[NR][NV]) __attribute__((always_inline)) {
        const T* at = a + t * a_panel;
        SliceFetch slice{t + 1 < tiles ? at + a_panel : fetch_after, mr};
        if constexpr (Lines != 0) {
          LineFetch<Lines> lines{reinterpret_cast<const char*>(fetch_after + t * a_panel), fetch_line_bytes};
          if constexpr (FetchB) {
            BothFetch<LineFetch<Lines>&, PanelFetch&> both{lines, panel};
            rotate<mr, BPS, BJS, BPS == 1>(kc, at, mr, b, b_ps, b_js, acc, nullptr, both);
          } else {
            rotate<mr, BPS, BJS, BPS == 1>(kc, at, mr, b, b_ps, b_js, acc, nullptr, lines);
          }
        } else if constexpr (FetchA && FetchB) {
          BothFetch<SliceFetch&, PanelFetch&> both{slice, panel};
          rotate<mr, BPS, BJS, BPS == 1>(kc, at, mr, b, b_ps, b_js, acc, nullptr, both);
        } else if constexpr (FetchA) {
          rotate<mr, BPS, BJS, BPS == 1>(kc, at, mr, b, b_ps, b_js, acc, nullptr, slice);
        } else if constexpr (FetchB) {
          rotate<mr, BPS, BJS, BPS == 1>(kc, at, mr, b, b_ps, b_js, acc, nullptr, panel);
        } else if constexpr (OneSet) {
          NoFetch none;
          rotate<mr, BPS, BJS, BPS == 1>(kc, at, mr, b, b_ps, b_js, acc, nullptr, none);
        } else {
          accumulate<mr, BPS, BJS, BPS == 1>(kc, at, mr, b, b_ps, b_js, acc);
        }
      });
    };
    if constexpr (chains == 1 || OneSet) {
      if (fetch_b && b_ps == 1) {
        if (fetch_after && fetch_line_bytes > 0) return each.template operator()<1, 0, false, true, 2>();
        if (fetch_after) return each.template operator()<1, 0, true, true>();
        return each.template operator()<1, 0, false, true>();
      }
      if (fetch_after && fetch_line_bytes > 0) {
        if (b_ps == NR && b_js == 1) return each.template operator()<NR, 1, false, false, 2>();
        if (b_ps == 1) return each.template operator()<1, 0, false, false, 2>();
      }
      if (fetch_after) {
        if (b_ps == NR && b_js == 1) return each.template operator()<NR, 1, true, false>();
        if (b_ps == 1) return each.template operator()<1, 0, true, false>();
      }
    }
    if (b_ps == NR && b_js == 1) each.template operator()<NR, 1, false, false>();
    else if (b_ps == 1) each.template operator()<1, 0, false, false>();
    else each.template operator()<0, 0, false, false>();
  }

  // Copies each step's A slice (MR values read in place, `lda` apart) into the packed panel
  // at `to`, fetching the slice `ahead` steps on.
  struct CopySlice {
    const T* from;
    T* to;
    int64_t lda, ahead;
    [[gnu::always_inline]] void step() {
      fetch_slice(from + ahead * lda);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) V::load(from + v * V::lanes).store(to + v * V::lanes);
      from += lda;
      to += mr;
    }
  };
  // run_column's tiles with A read in place (lda apart) and packed on the way into `packed`
  // (tile t's panel at packed + t * MR * kc); B as run_column reads it.
  [[gnu::noinline]] static void run_column_packing_a(int64_t tiles, int64_t kc, const T* __restrict a, int64_t lda,
                                                      T* __restrict packed, const T* __restrict b, int64_t b_ps,
                                                      int64_t b_js, T* __restrict c, int64_t ldc, T alpha, T beta) {
    static_assert(chains == 1, "one accumulator set");
    column_tiles(tiles, c, ldc, alpha, beta, [&](int64_t t, V (&acc)[NR][NV]) __attribute__((always_inline)) {
      const T* at = a + t * mr;
      CopySlice copy{at, packed + t * mr * kc, lda, 8};
      if (b_ps == NR && b_js == 1) rotate<0, NR, 1, false>(kc, at, lda, b, b_ps, b_js, acc, nullptr, copy);
      else if (b_ps == 1) rotate<0, 1, 0, true>(kc, at, lda, b, b_ps, b_js, acc, nullptr, copy);
      else rotate<0, 0, 0, false>(kc, at, lda, b, b_ps, b_js, acc, nullptr, copy);
    });
  }

  // `tiles` tiles down one column panel of C from c: each tile's accumulators started (C
  // fetched), body(t, acc) over its depth, then stored.
  template <class Body>
  [[gnu::always_inline]] static void column_tiles(int64_t tiles, T* c, int64_t ldc, T alpha, T beta, Body&& body) {
    for (int64_t t = 0; t < tiles; ++t) {
      V acc[NR][NV];
      T* ct = c + t * mr;
      // Hidden from GCC, which otherwise keeps a pointer per C vector (24) running across the
      // tiles, spilled to the stack and updated there, and loads each back to prefetch and
      // store: 1.02-1.03x on the depth-64 column walk without them.
      asm("" : "+r"(ct));
      start(acc, ct, ldc);
      body(t, acc);
      store(acc, ct, ldc, alpha, beta);
    }
  }

  // The tile over a depth read in `runs` pieces of `len` steps, B in place: piece r reads the
  // packed A panel from step r * len on, and B at pieces[r] + offset with element (p, j) at
  // [p + j * b_js]. What lets a convolution read its input rows where they lie (dnn's
  // row-band implicit GEMM: one piece per filter row, each from wherever that row is kept).
  // Never inlined, like run: inlined into the band loops, its registers were allocated anew
  // with every change around it (an A vector spilled once: the conv1 stem at 0.71x).
  [[gnu::noinline]] static void run_pieces(int64_t runs, int64_t len, const T* __restrict a,
                                           const T* const* pieces, int64_t offset, int64_t b_js,
                                           T* __restrict c, int64_t ldc, T alpha, T beta) {
    V acc[NR][NV];
    // No C prefetch: conv1 at batch 8 writes 26 MB of output to memory, and a tile's 24
    // prefetches for writing, all misses, held the miss buffers its input rows' reads needed
    // (without them 1.05-1.07x at batch 8, 1.12x on 2 threads; batch 1 1.00-1.01x).
    start(acc, c, ldc, false);
    // The accumulator sets rotate over the whole depth, not per piece: conv1's pieces are 21
    // steps, too short to pay for sets of their own, while its ragged 16x3 + 16x1 edge tiles
    // need them (a 16x1 tile on one set runs at a quarter of the FMA rate).
    with_sets(runs * len, acc, [&](Sets* more) __attribute__((always_inline)) {
      NoFetch none;
      for (int64_t r = 0; r < runs; ++r)
        rotate<mr, 1, 0, true>(len, a + r * len * mr, mr, pieces[r] + offset, 1, b_js, acc, more, none);
    });
    store(acc, c, ldc, alpha, beta);
  }

  // The tile over a depth read in `runs` pieces of `len` steps, B in place with each column
  // anywhere: column j of piece r starts at cols[j] + r * piece_stride (element p at [p]), and
  // its A slices at a + r * a_stride (a_stride >= len * MR: pieces may skip part of A's depth,
  // as a convolution's border pixels skip the filter taps over the padding).
  // What lets a convolution tile pixels of several output rows, whose input windows are not
  // evenly spaced (res5's 7-pixel rows: one 12-pixel tile spans two or three of them).
  // Accumulator sets as run_pieces (rotating within each piece).
  // With `fetch_ahead`, each step also prefetches A's slice that many steps on (A read from
  // memory: a filter panel's first tile).
  static void run_columns(int64_t runs, int64_t len, const T* __restrict a, int64_t a_stride, const T* const* cols,
                          int64_t piece_stride, T* __restrict c, int64_t ldc, T alpha, T beta,
                          int64_t fetch_ahead = 0) {
    V acc[NR][NV];
    start(acc, c, ldc);
    const T* b[NR];
    auto pieces = [&]<bool Fetch>(Sets* more) __attribute__((always_inline)) {
      for (int64_t r = 0; r < runs; ++r) {
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) b[j] = cols[j] + r * piece_stride;
        const T* ar = a + r * a_stride;
        if constexpr (Fetch) {
          SliceFetch ahead{ar + fetch_ahead * mr, mr};
          rotate_columns(len, ar, b, acc, more, ahead);
        } else {
          NoFetch none;
          rotate_columns(len, ar, b, acc, more, none);
        }
      }
    };
    with_sets(runs * len, acc, [&](Sets* more) __attribute__((always_inline)) {
      if (fetch_ahead > 0) pieces.template operator()<true>(more);
      else pieces.template operator()<false>(more);
    });
    store(acc, c, ldc, alpha, beta);
  }

  // kc steps of acc += A B with B's columns at b[j] (element p at b[j][p]), sets as in rotate.
  template <class Fetch>
  [[gnu::always_inline]] static void rotate_columns(int64_t kc, const T* __restrict a, const T* const (&b)[NR],
                                                    V (&acc)[NR][NV], Sets* more, Fetch& fetch) {
    int64_t p = 0;
    auto step = [&](V (&t)[NR][NV]) __attribute__((always_inline)) {
      fma_step(t, a, [&](int j) __attribute__((always_inline)) { return b[j] + p; });
      fetch.step();
      a += mr;
      ++p;
    };
    rotate_sets(kc, acc, more, step);
  }

  // Zeroes the accumulators and, with fetch_c, starts fetching the C tile, which is needed only
  // after the k loop (columns of a large C are a page apart and would otherwise miss at the
  // end). Callers whose C is small and close leave it out: the one-block path's C (at most a
  // few hundred KB, usually in L1 or L2, a batch's next C fetched by FetchAhead) paid for the
  // 2 x NR prefetches at every tile start and gained nothing (in-process, f32 32^3-200^3
  // 1.01-1.03x, a batch of 1000 32^3 f32 1.06x, f64 1.02x). A stand-alone 32x8 k loop over 64^3
  // ran at ~100% of the peak without them and 96% with them.
  [[gnu::always_inline]] static void start(V (&acc)[NR][NV], T* c, int64_t ldc, bool fetch_c = true) {
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[j][v] = V::zero();
    if (!fetch_c) return;
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
      __builtin_prefetch(c + j * ldc, 1);
      __builtin_prefetch(c + j * ldc + mr - 1, 1);
    }
  }

  // C := alpha * acc + beta * C (update_c); beta == 0 never reads C.
  [[gnu::always_inline]] static void store(const V (&acc)[NR][NV], T* __restrict c, int64_t ldc, T alpha, T beta) {
    update_c<V>(alpha, beta, [&](auto&& value) __attribute__((always_inline)) {
#pragma GCC unroll 16
      for (int j = 0; j < NR; ++j)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
          T* cp = c + j * ldc + v * V::lanes;
          value(acc[j][v], [cp]() __attribute__((always_inline)) { return V::load(cp); }).store(cp);
        }
    });
  }
};

// Depth-step cost, in FMA-issue cycles, of an edge kernel of `nv` vectors by `width` columns
// (two FMAs a cycle, but at least the 4-cycle FMA latency: a narrow tile's chain waits on
// itself), plus one for its call: what the spilling cover weighs.
constexpr int edge_step_cost(int nv, int width) { return (nv * width / 2 > 4 ? nv * width / 2 : 4) + 1; }

// The cheapest cover of nr columns by kernels of width `top` and its narrower powers of two,
// a kernel allowed to run past the last column (write into padding).
constexpr int spilling_cover_cost(int nv, int top, int nr) {
  if (nr <= 0) return 0;
  const int h = narrower_width(top);
  if (h < top && nr <= h) return spilling_cover_cost(nv, h, nr);
  const int whole = edge_step_cost(nv, top);
  if (h < top && nr < top) {
    const int split = edge_step_cost(nv, h) + spilling_cover_cost(nv, h, nr - h);
    return split < whole ? split : whole;
  }
  return whole;
}

// The narrowest kernels that cover an mr x nr tile (mr <= MR, nr <= NR): the half-height
// kernel when the rows fit it; the next narrower kernel when the columns do, recursively.
// Kernels with exact_edges (the floating-point MicroKernel: widths in powers of two) cover the
// columns exactly, widest first (11 = 8 + 2 + 1) -- or, with Spill (the caller's C and B have
// room for whole tiles: a convolution's padded output rows), by whichever kernels cost least,
// one running past the last column where that is cheaper (7 columns as one 8-wide tile, not
// 4 + 2 + 1 latency-bound ones). The others (int8 16x6 -> 16x3 -> 16x1, bf16 32x12 -> 32x8 ->
// 32x4 -> ...) take a few columns beyond the narrower width as that kernel plus the rest
// (16x4 = 16x3 + 16x1; 16x5 stays one 16x6 tile, 16x2 one 16x3: two narrow tiles would cost
// more, since a 16x1 tile is bound by its loads at about two thirds of a 16x3 one; their B is
// always a padded panel). The cost model above, applied to them, lost 2-8% on int8 edges of
// 3, 5 and 9 columns (each taking a copied C tile where an exact one had been).
// Calls run.template operator()<K>(j0) for each kernel K, covering columns [j0, j0 + K::nr).
template <class Kernel, bool Spill = false, class Run>
[[gnu::always_inline]] inline void cover_narrowest(int64_t mr, int64_t nr, Run&& run, int64_t j0 = 0) {
  if constexpr (requires { typename Kernel::HalfRows; typename Kernel::NarrowCols; }) {
    using HalfRows = typename Kernel::HalfRows;
    using Narrow = typename Kernel::NarrowCols;
    if (HalfRows::mr < Kernel::mr && mr <= HalfRows::mr) return cover_narrowest<HalfRows, Spill>(mr, nr, run, j0);
    if (Narrow::nr < Kernel::nr && nr <= Narrow::nr) return cover_narrowest<Narrow, Spill>(mr, nr, run, j0);
    bool split;
    if constexpr (requires { Kernel::exact_edges; }) {
      constexpr int nv = Kernel::nv;
      split = !Spill || edge_step_cost(nv, Narrow::nr) + spilling_cover_cost(nv, Narrow::nr, int(nr - Narrow::nr)) <=
                            edge_step_cost(nv, Kernel::nr);
    } else {
      split = 2 * (nr - Narrow::nr) <= Narrow::nr;
    }
    if (Narrow::nr < Kernel::nr && nr < Kernel::nr && split) {
      run.template operator()<Narrow>(j0);
      return cover_narrowest<Narrow, Spill>(mr, nr - Narrow::nr, run, j0 + Narrow::nr);
    }
  }
  run.template operator()<Kernel>(j0);
}

// Whether cover_narrowest's kernels write exactly the mr x nr tile: nothing beyond its last
// column or row, so it can be written in place (no copied tile) and an in-place B is read
// only within its columns.
// With Spill, of the cover that may run past the last column (cover_narrowest<Kernel, true>).
template <class Kernel, bool Spill = false>
[[gnu::always_inline]] inline bool covers_exactly(int64_t mr, int64_t nr) {
  int64_t end = 0, rows = 0;
  cover_narrowest<Kernel, Spill>(mr, nr, [&]<class K>(int64_t j0) { end = j0 + K::nr, rows = K::mr; });
  return end == nr && rows == mr;
}

// Whether the kernels covering a rows x cols tile (cover_narrowest) all keep one accumulator set.
template <class Kernel>
bool covered_in_one_set(int64_t rows, int64_t cols) {
  bool single = true;
  cover_narrowest<Kernel>(rows, cols, [&]<class K>(int64_t) {
    if constexpr (requires { K::chains; }) single = single && K::chains == 1;
  });
  return single;
}

// The width of the column panel from j0 among n columns read in place, for Kernel's tiles over
// m rows: balanced as balanced_panel_width says (a remainder of NR / 3 as two panels of 2/3
// NR) where the kernels that then cover the last columns keep one accumulator set, as the ones
// they replace do, for every tile height present (each column then sums its depth in order
// whichever kernel computes it: the same bits as the tiled path's packed panels); else panels
// of NR and the remainder (the 16-row f32 and 8-row f64 4-column kernels, AVX2's 16x2, rotate
// two sets).
template <class Kernel>
int64_t panel_width(int64_t n, int64_t j0, int64_t m) {
  constexpr int64_t NR = Kernel::nr;
  const int64_t plain = std::min(NR, n - j0), w = balanced_panel_width(n, NR, j0);
  if (w == plain) return w;
  auto same_sums = [&](int64_t rows) {
    return covered_in_one_set<Kernel>(rows, NR / 3) && covered_in_one_set<Kernel>(rows, w);
  };
  const int64_t ragged = m % Kernel::mr;
  return same_sums(std::min<int64_t>(m, Kernel::mr)) && (ragged == 0 || same_sums(ragged)) ? w : plain;
}

// A tile into c by the narrowest kernels that cover it (cover_narrowest); a full tile directly.
// `ahead` and `fetch_c` (whether the tile starts fetching C) go to the kernels that take them
// (the floating-point MicroKernel).
template <class Kernel, class T>
void run_narrowest(int64_t mr, int64_t nr, int64_t kc, const T* at, int64_t a_ps, const T* bt, int64_t b_ps,
                   int64_t b_js, T* c, int64_t ldc, T alpha, T beta, FetchAhead* ahead = nullptr,
                   bool fetch_c = true) {
  auto run = [&]<class K>(const T* b, T* ct) __attribute__((always_inline)) {
    if constexpr (requires { K::run(kc, at, a_ps, b, b_ps, b_js, ct, ldc, alpha, beta, ahead, fetch_c); })
      K::run(kc, at, a_ps, b, b_ps, b_js, ct, ldc, alpha, beta, ahead, fetch_c);
    else
      K::run(kc, at, a_ps, b, b_ps, b_js, ct, ldc, alpha, beta);
  };
  if (mr == Kernel::mr && nr == Kernel::nr) return run.template operator()<Kernel>(bt, c);
  cover_narrowest<Kernel>(mr, nr,
                          [&]<class K>(int64_t j0) { run.template operator()<K>(bt + j0 * b_js, c + j0 * ldc); });
}

// A micro-tile of C of rows x cols (at most MR x NR). run(c, ldc) writes a whole MR x NR tile,
// so a ragged one runs on a copy of its valid part (edge: MR x NR, leading dimension MR) that
// is copied back: the same arithmetic as run gives in place, and nothing outside C is touched.
// beta == 0 never reads C.
// The copies run over a fixed MR with a condition, not to `rows`: GCC turns a variable-length
// copy loop into an inline `rep movs`, whose start-up cost (~30 cycles per column) dominated
// tiny GEMMs (8x8x8: a third of the call).
// Always inlined: out of line, it read the caller's closure for `run`, built just before the
// call with 8-byte stores, with 32-byte loads GCC's vectorizer merged, which cannot forward
// from those stores: the stall at its entry, once per tile, was 13% of the NHWC stem layer at
// batch 8 (10.3 against 8.8 ms) when a second instantiation changed GCC's inlining.
template <int MR, int NR, class T, class Run>
[[gnu::always_inline]] inline void ragged_tile(int64_t rows, int64_t cols, T* c, int64_t ldc, T beta, T* edge,
                                               Run&& run) {
  if (rows == MR && cols == NR) return run(c, ldc);
  if (beta != T(0))
    for (int64_t j = 0; j < cols; ++j)
#pragma GCC unroll 32
      for (int64_t i = 0; i < MR; ++i)
        if (i < rows) edge[i + j * MR] = c[i + j * ldc];
  run(edge, int64_t(MR));
  for (int64_t j = 0; j < cols; ++j)
#pragma GCC unroll 32
    for (int64_t i = 0; i < MR; ++i)
      if (i < rows) c[i + j * ldc] = edge[i + j * MR];
}

STRATA_TILE_NS_END
