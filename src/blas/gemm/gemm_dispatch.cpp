// Chooses the GEMM kernel for the handle's ISA and runs it. Real types go straight to the
// tile engine; complex types run as one real GEMM on split real/imaginary parts (the 4M
// products stacked, below), which keeps every flop on the fast kernels.
#include "gemm_dispatch.hpp"

#include <algorithm>
#include <complex>
#include <vector>

#include "gemm_kernels.hpp"
#include "strata/core/log.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/timer.hpp"
#include "strata/tile/workspace.hpp"

namespace strata::blas::detail {

namespace {

char op_char(Op o) { return char(o); }

// The engine's route for a trace line: the one-block path, or the tiled path's block sizes and
// parts (and whether those parts were single blocks).
std::string route_text(const tile::GemmRoute& r, const GemmKernelInfo& info) {
  using P = tile::GemmRoute::Path;
  if (r.path == P::scale) return "path=scale-only (alpha or k is zero)";
  if (r.path == P::small) return "path=small (rows within a micro-tile, short depth: operands in place, rows masked)";
  if (r.path == P::one_block)
    return r.tall_mr ? cat("path=one-block (operands in place, one k block, ", r.tall_mr, "x", r.tall_nr, " tiles)")
                     : "path=one-block (operands in place, one k block)";
  if (r.path == P::dot) return "path=dot (few rows and columns: dot products along the depth)";
  if (r.path == P::depth_split)
    return cat("path=depth-split pieces=", r.parts, " (math mode fast: each thread sums a piece of the depth)");
  // The call's own blocks where the engine reported them (streamed operands and the depth's
  // equal k blocks change the kernel's defaults), else the kernel's.
  const bool own = r.kc > 0;
  return cat("path=tiled blocks mc=", own ? r.mc : info.mc, " kc=", own ? r.kc : info.kc, " nc=", own ? r.nc : info.nc,
             " parts=", r.parts, r.one_block_parts ? " (each part one block)" : "",
             r.second_part_at ? cat(" (part 1 from ", r.split_n ? "column " : "row ", r.second_part_at, ")") : "",
             r.b_copied ? " B=in-place (panels copied: columns sharing an L1 set)"
             : r.b_in_place ? " B=in-place"
                            : " B=packed",
             r.a_fetched ? " A=packed (each next block fetched into L2 as the block before it runs)" : "",
             r.transposed ? " (as C^T = op(B)^T op(A)^T: few columns become few rows, op(A) read in place)" : "");
}

// The engine call for a real product: op(A) and op(B) as strides (for real types C and T are
// the same).
template <class T>
GemmCall<T> real_call(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* A,
                      index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  GemmCall<T> call = make_gemm_call<T>(m, n, k, alpha, A, 1, lda, B, 1, ldb, beta, C, ldc, h.num_threads());
  call.split_depth = h.math_mode() == MathMode::fast;
  if (transa != Op::N) call.a_rs = lda, call.a_cs = 1;
  if (transb != Op::N) call.b_rs = ldb, call.b_cs = 1;
  return call;
}

// Runs a call for a trace line: the route the engine took and, at STRATA_VERBOSE=2, the time
// and rate of `flops`.
template <class T>
std::string traced_run(const GemmKernel<T>& kernel, GemmCall<T>& call, double flops, tile::GemmRoute& route) {
  call.route = &route;
  Timer t;
  kernel.run(call);
  const double s = t.seconds();
  return verbose(2) ? cat(" time=", s * 1e3, "ms gflops=", flops / s * 1e-9) : std::string();
}

template <class T>
void run_real(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* A,
              index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc, bool trace = true,
              tile::Triangles triangles = {}) {
  const tile::Triangle triangle = triangles.c;
  const GemmKernel<T> kernel = gemm_kernels<T>().select(h.isa());
  GemmCall<T> call = real_call(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  call.triangle = triangle;
  call.a_triangle = triangles.a, call.b_triangle = triangles.b;
  if (!trace || !verbose(1)) return kernel.run(call);
  tile::GemmRoute route;
  const std::string timing = traced_run(kernel, call, 2.0 * double(m) * double(n) * double(k), route);
  GemmKernelInfo info = kernel.info();
  const tile::Triangle operand = triangles.a != tile::Triangle::none ? triangles.a : triangles.b;
  const char* part = triangle == tile::Triangle::upper   ? " (upper triangle)"
                     : triangle == tile::Triangle::lower ? " (lower triangle)"
                     : operand == tile::Triangle::none   ? ""
                     : triangles.a != tile::Triangle::none
                         ? (operand == tile::Triangle::upper ? " (op(A) upper triangular)" : " (op(A) lower triangular)")
                         : (operand == tile::Triangle::upper ? " (op(B) upper triangular)" : " (op(B) lower triangular)");
  std::string line = cat(sizeof(T) == 4 ? "s" : "d", "gemm", part, " ", op_char(transa), op_char(transb), " m=", m, " n=", n,
                         " k=", k, " kernel='", info.name, "' ", route_text(route, info), " threads=", call.threads,
                         " (best registered kernel for isa=", isa_name(h.isa()), ")", timing);
  verbose_write("blas", line);
}

// Splits op(X) (rows x cols) into real and imaginary column-major planes of leading dimension
// ld, conjugating for Op::C; `negate_im` stores minus the imaginary parts.
// The loops read plain (re, im) pairs and write through restrict pointers so that they
// vectorise: element by element through std::complex, the split and the final combine were
// a sixth of a 256^3 cgemm.
template <class R>
void split(Op op, index_t rows, index_t cols, const std::complex<R>* x, index_t ldx, R* re, R* im, index_t ld,
           bool negate_im = false) {
  const R sign = (op == Op::C) != negate_im ? R(-1) : R(1);
  const R* xr = reinterpret_cast<const R*>(x);  // (re, im) pairs, as std::complex guarantees
  if (op == Op::N) {
    for (index_t j = 0; j < cols; ++j) {
      R* __restrict r = re + j * ld;
      R* __restrict m = im + j * ld;
      const R* __restrict col = xr + 2 * j * ldx;
      for (index_t i = 0; i < rows; ++i) r[i] = col[2 * i], m[i] = sign * col[2 * i + 1];
    }
    return;
  }
  // op(X)(i, j) = X(j, i): in 16 x 16 tiles, so the source lines a tile reads (16 columns of
  // X, 16 entries each) stay in L1 while its 16 output columns take them one entry per line.
  // (Column by column over the whole height, each entry came from another line: the split of
  // B = A^H was a fifth of a 512^2 cherk.)
  constexpr index_t tile = 16;
  for (index_t j0 = 0; j0 < cols; j0 += tile)
    for (index_t i0 = 0; i0 < rows; i0 += tile) {
      const index_t j1 = std::min(cols, j0 + tile), i1 = std::min(rows, i0 + tile);
      for (index_t j = j0; j < j1; ++j) {
        R* __restrict r = re + j * ld;
        R* __restrict m = im + j * ld;
        const R* __restrict row = xr + 2 * j;
        for (index_t i = i0; i < i1; ++i) r[i] = row[2 * i * ldx], m[i] = sign * row[2 * i * ldx + 1];
      }
    }
}

// C = alpha * (cr + i ci) + beta * C, written out in real arithmetic (beta == 0 does not read C),
// on the rows of each column that `triangle` leaves.
template <class R>
void combine(index_t m, index_t n, std::complex<R> alpha, const R* cr, const R* ci, std::complex<R> beta,
             std::complex<R>* C, index_t ldc, tile::Triangle triangle = tile::Triangle::none) {
  const R a_re = alpha.real(), a_im = alpha.imag(), b_re = beta.real(), b_im = beta.imag();
  const bool no_beta = beta == std::complex<R>(0);
  for (index_t j = 0; j < n; ++j) {
    index_t lo, hi;
    tile::triangle_rows(triangle, m, j, lo, hi);
    R* __restrict c = reinterpret_cast<R*>(C + j * ldc);
    const R* __restrict pr = cr + j * m;
    const R* __restrict pi = ci + j * m;
    if (no_beta) {
      for (index_t i = lo; i < hi; ++i) {
        const R x = pr[i], y = pi[i];
        c[2 * i] = a_re * x - a_im * y;
        c[2 * i + 1] = a_re * y + a_im * x;
      }
    } else {
      for (index_t i = lo; i < hi; ++i) {
        const R x = pr[i], y = pi[i], u = c[2 * i], v = c[2 * i + 1];
        c[2 * i] = (a_re * x - a_im * y) + (b_re * u - b_im * v);
        c[2 * i + 1] = (a_re * y + a_im * x) + (b_re * v + b_im * u);
      }
    }
  }
}

template <class R>
void run_complex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, std::complex<R> alpha,
                 const std::complex<R>* A, index_t lda, const std::complex<R>* B, index_t ldb,
                 std::complex<R> beta, std::complex<R>* C, index_t ldc,
                 tile::Triangle triangle = tile::Triangle::none) {
  using Cx = std::complex<R>;
  if (k == 0 || alpha == Cx(0)) {
    for (index_t j = 0; j < n; ++j) {
      index_t lo, hi;
      tile::triangle_rows(triangle, m, j, lo, hi);
      for (index_t i = lo; i < hi; ++i) {
        Cx& c = C[i + j * ldc];
        c = beta == Cx(0) ? Cx(0) : beta * c;
      }
    }
    return;
  }
  // The four real products of the 4M method as one real GEMM of m x 2n x 2k:
  //   [Ar Ai] * [Br  Bi] = [Ar Br - Ai Bi   Ar Bi + Ai Br] = [Re(AB)  Im(AB)]
  //             [-Bi Br]
  // One call packs each operand once and writes C once (four m x n x k calls each streamed
  // their planes and C again: cgemm 1024^3 ran at 0.78x OpenBLAS's complex kernel, 256^3 at
  // 0.59x).
  // The planes go in this thread's staging buffer, kept between calls, up to 64 MiB (cgemm to
  // ~1400^3, zgemm to ~1000^3): a fresh allocation faulted its pages in on every call, ~3 us
  // a page on this VM, which was 45% of a 256^3 cgemm (1.6 of 3.5 ms; 1.8 ms without).
  // Larger calls allocate per call, where the faults weigh less against the flops.
  const std::size_t floats = std::size_t(2 * m * k + 4 * k * n + 2 * m * n);
  constexpr std::size_t kept_bytes = std::size_t(64) << 20;
  AlignedArray<R> owned;
  R* a2;
  if (floats * sizeof(R) <= kept_bytes) {
    a2 = static_cast<R*>(tile::thread_pack_buffer(2).get(floats * sizeof(R)));
  } else {
    owned = make_aligned<R>(floats);
    a2 = owned.get();
  }
  R *b2 = a2 + 2 * m * k, *c2 = b2 + 4 * k * n;
  split(transa, m, k, A, lda, a2, a2 + m * k, m);                     // [Ar Ai], m x 2k
  split(transb, k, n, B, ldb, b2, b2 + k, 2 * k, true);  // [Br; -Bi], first n columns
  // [Bi; Br], the next n columns, from the first ones (contiguous copies, not a second gather).
  for (index_t j = 0; j < n; ++j) {
    const R* __restrict first = b2 + j * 2 * k;
    R* __restrict next = b2 + (n + j) * 2 * k;
    for (index_t i = 0; i < k; ++i) next[i] = -first[k + i], next[k + i] = first[i];
  }
  if (triangle != tile::Triangle::none) {
    // Triangular output: the real and imaginary planes as two triangular real GEMMs (the
    // stacked m x 2n product's triangle would be relative to the whole 2n columns).
    if (verbose(1))
      verbose_write("blas", cat(sizeof(R) == 4 ? "c" : "z", "gemm (", triangle == tile::Triangle::upper ? "upper" : "lower",
                                " triangle) ", op_char(transa), op_char(transb), " n=", n, " k=", k,
                                " method=4M (two triangular real GEMMs of n x n x 2k on split planes)"));
    run_real<R>(h, Op::N, Op::N, m, n, 2 * k, R(1), a2, m, b2, 2 * k, R(0), c2, m, false, {triangle});
    run_real<R>(h, Op::N, Op::N, m, n, 2 * k, R(1), a2, m, b2 + 2 * k * n, 2 * k, R(0), c2 + m * n, m, false,
                {triangle});
    combine(m, n, alpha, c2, c2 + m * n, beta, C, ldc, triangle);
    return;
  }
  if (verbose(1))
    verbose_write("blas", cat(sizeof(R) == 4 ? "c" : "z", "gemm ", op_char(transa), op_char(transb), " m=", m,
                              " n=", n, " k=", k, " method=4M (one real GEMM of m x 2n x 2k on split planes)"));
  // The inner call is part of this decision: it is not traced separately.
  run_real<R>(h, Op::N, Op::N, m, 2 * n, 2 * k, R(1), a2, m, b2, 2 * k, R(0), c2, m, false);
  combine(m, n, alpha, c2, c2 + m * n, beta, C, ldc);
}

}  // namespace

template <class T>
void gemm_dispatch(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* A,
                   index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    // Small products straight to the kernel (no call record; traced ones take the engine's route).
    if (alpha != T(0) && !verbose(1) &&
        gemm_kernels<T>().select(h.isa()).run_small(m, n, k, alpha, A, transa == Op::N ? 1 : lda,
                                                    transa == Op::N ? lda : 1, B, transb == Op::N ? 1 : ldb,
                                                    transb == Op::N ? ldb : 1, beta, C, ldc))
      return;
    run_real<T>(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  } else {
    run_complex<typename T::value_type>(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
}

template <class T>
void gemm_batch_dispatch(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                         index_t lda, index_t ldb, T beta, index_t ldc, const GemmBatch<T>& batch) {
  const GemmKernel<T> kernel = gemm_kernels<T>().select(h.isa());
  GemmCall<T> call = real_call(h, transa, transb, m, n, k, alpha, batch.a, lda, batch.b, ldb, beta, batch.c, ldc);
  call.batch = batch.count;
  call.stride_a = batch.stride_a, call.stride_b = batch.stride_b, call.stride_c = batch.stride_c;
  call.a_array = reinterpret_cast<const void* const*>(batch.a_array);
  call.b_array = reinterpret_cast<const void* const*>(batch.b_array);
  call.c_array = batch.c_array;
  call.split_batch = batch.split;
  if (!verbose(1)) return kernel.run(call);
  tile::GemmRoute route;
  const std::string timing =
      traced_run(kernel, call, 2.0 * double(m) * double(n) * double(k) * double(batch.count), route);
  const GemmKernelInfo info = kernel.info();
  verbose_write("blas", cat(sizeof(T) == 4 ? "s" : "d", "gemm batch of ", batch.count, " ", op_char(transa),
                            op_char(transb), " m=", m, " n=", n, " k=", k, " kernel='", info.name, "' ",
                            route_text(route, info), " (first entry), ",
                            batch.split ? "entries split among " : "each entry on ", call.threads, " thread(s)",
                            " (best registered kernel for isa=", isa_name(h.isa()), ")", timing));
}

template void gemm_batch_dispatch<float>(const Handle&, Op, Op, index_t, index_t, index_t, float, index_t, index_t,
                                         float, index_t, const GemmBatch<float>&);
template void gemm_batch_dispatch<double>(const Handle&, Op, Op, index_t, index_t, index_t, double, index_t, index_t,
                                          double, index_t, const GemmBatch<double>&);

template <class T>
void gemm_triangle_dispatch(const Handle& h, bool upper, Op transa, Op transb, index_t n, index_t k, T alpha,
                            const T* A, index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  const tile::Triangle triangle = upper ? tile::Triangle::upper : tile::Triangle::lower;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    run_real<T>(h, transa, transb, n, n, k, alpha, A, lda, B, ldb, beta, C, ldc, true, {triangle});
  else
    run_complex<typename T::value_type>(h, transa, transb, n, n, k, alpha, A, lda, B, ldb, beta, C, ldc, triangle);
}

template <class T>
void gemm_triangular_operand_dispatch(const Handle& h, bool left, bool upper, Op transa, Op transb, index_t m,
                                      index_t n, index_t k, T alpha, const T* A, index_t lda, const T* B, index_t ldb,
                                      T beta, T* C, index_t ldc) {
  const tile::Triangle t = upper ? tile::Triangle::upper : tile::Triangle::lower;
  tile::Triangles triangles;
  (left ? triangles.a : triangles.b) = t;
  run_real<T>(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, true, triangles);
}

template void gemm_triangular_operand_dispatch<float>(const Handle&, bool, bool, Op, Op, index_t, index_t, index_t,
                                                      float, const float*, index_t, const float*, index_t, float,
                                                      float*, index_t);
template void gemm_triangular_operand_dispatch<double>(const Handle&, bool, bool, Op, Op, index_t, index_t, index_t,
                                                       double, const double*, index_t, const double*, index_t, double,
                                                       double*, index_t);

template <class T>
TileShape gemm_tile_shape(const Handle& h) {
  const GemmKernelInfo info = gemm_kernels<real_t<T>>().select(h.isa()).info();
  return {info.mr, info.nr};
}

template TileShape gemm_tile_shape<float>(const Handle&);
template TileShape gemm_tile_shape<double>(const Handle&);
template TileShape gemm_tile_shape<c64>(const Handle&);
template TileShape gemm_tile_shape<c128>(const Handle&);
template void gemm_triangle_dispatch<float>(const Handle&, bool, Op, Op, index_t, index_t, float, const float*,
                                            index_t, const float*, index_t, float, float*, index_t);
template void gemm_triangle_dispatch<double>(const Handle&, bool, Op, Op, index_t, index_t, double, const double*,
                                             index_t, const double*, index_t, double, double*, index_t);
template void gemm_triangle_dispatch<c64>(const Handle&, bool, Op, Op, index_t, index_t, c64, const c64*, index_t,
                                          const c64*, index_t, c64, c64*, index_t);
template void gemm_triangle_dispatch<c128>(const Handle&, bool, Op, Op, index_t, index_t, c128, const c128*, index_t,
                                           const c128*, index_t, c128, c128*, index_t);
template void gemm_dispatch<float>(const Handle&, Op, Op, index_t, index_t, index_t, float, const float*, index_t,
                                   const float*, index_t, float, float*, index_t);
template void gemm_dispatch<double>(const Handle&, Op, Op, index_t, index_t, index_t, double, const double*,
                                    index_t, const double*, index_t, double, double*, index_t);
template void gemm_dispatch<c64>(const Handle&, Op, Op, index_t, index_t, index_t, c64, const c64*, index_t,
                                 const c64*, index_t, c64, c64*, index_t);
template void gemm_dispatch<c128>(const Handle&, Op, Op, index_t, index_t, index_t, c128, const c128*, index_t,
                                  const c128*, index_t, c128, c128*, index_t);

bool few_columns_transpose(int64_t m, int64_t n, int64_t k, int kernel_rows, int64_t value_bytes) {
  if (n < kernel_rows / 2 || n > 2 * kernel_rows || m < 4 * n) return false;
  if (n % (kernel_rows / 2) != 0 && value_bytes < 8) return false;
  return k * value_bytes >= 1024;
}

}  // namespace strata::blas::detail
