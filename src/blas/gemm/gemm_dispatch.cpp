// Chooses the GEMM kernel for the handle's ISA and runs it. Real types go straight to the
// tile engine; complex types use the 4M method on the real kernels (four real GEMMs on split
// real/imaginary parts), which keeps every flop on the fast kernels.
#include "gemm_dispatch.hpp"

#include <complex>
#include <vector>

#include "gemm_kernels.hpp"
#include "strata/core/log.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/timer.hpp"

namespace strata::blas::detail {

namespace {

char op_char(Op o) { return char(o); }

template <class T>
void run_real(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* A,
              index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc, bool trace = true) {
  const GemmKernel<T> kernel = gemm_kernels<T>().select(h.isa());
  GemmCall<T> call{m, n, k, alpha, A, 1, lda, B, 1, ldb, beta, C, ldc, h.num_threads()};
  if (transa != Op::N) call.a_rs = lda, call.a_cs = 1;  // real: C and T are the same
  if (transb != Op::N) call.b_rs = ldb, call.b_cs = 1;
  if (!trace || !verbose(1)) return kernel.run(call);
  Timer t;
  kernel.run(call);
  const double s = t.seconds();
  GemmKernelInfo info = kernel.info();
  std::string line = cat(sizeof(T) == 4 ? "s" : "d", "gemm ", op_char(transa), op_char(transb), " m=", m, " n=", n,
                         " k=", k, " kernel='", info.name, "' blocks mc=", info.mc, " kc=", info.kc, " nc=", info.nc,
                         " threads=", call.threads, " (best registered kernel for isa=", isa_name(h.isa()), ")");
  if (verbose(2)) line += cat(" time=", s * 1e3, "ms gflops=", 2.0 * double(m) * double(n) * double(k) / s * 1e-9);
  verbose_write("blas", line);
}

// Splits op(X) (rows x cols) into real and imaginary column-major planes, conjugating for Op::C.
template <class R>
void split(Op op, index_t rows, index_t cols, const std::complex<R>* x, index_t ldx, R* re, R* im) {
  const R sign = op == Op::C ? R(-1) : R(1);
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      const std::complex<R> v = op == Op::N ? x[i + j * ldx] : x[j + i * ldx];
      re[i + j * rows] = v.real();
      im[i + j * rows] = sign * v.imag();
    }
}

template <class R>
void run_complex(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, std::complex<R> alpha,
                 const std::complex<R>* A, index_t lda, const std::complex<R>* B, index_t ldb,
                 std::complex<R> beta, std::complex<R>* C, index_t ldc) {
  using Cx = std::complex<R>;
  if (k == 0 || alpha == Cx(0)) {
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) {
        Cx& c = C[i + j * ldc];
        c = beta == Cx(0) ? Cx(0) : beta * c;
      }
    return;
  }
  auto buf = make_aligned<R>(std::size_t(2 * m * k + 2 * k * n + 2 * m * n));
  R *ar = buf.get(), *ai = ar + m * k, *br = ai + m * k, *bi = br + k * n, *cr = bi + k * n, *ci = cr + m * n;
  split(transa, m, k, A, lda, ar, ai);
  split(transb, k, n, B, ldb, br, bi);
  if (verbose(1))
    verbose_write("blas", cat(sizeof(R) == 4 ? "c" : "z", "gemm ", op_char(transa), op_char(transb), " m=", m,
                              " n=", n, " k=", k, " method=4M (four real GEMMs on split planes)"));
  // The four inner calls are one decision: they are not traced separately.
  run_real<R>(h, Op::N, Op::N, m, n, k, R(1), ar, m, br, k, R(0), cr, m, false);
  run_real<R>(h, Op::N, Op::N, m, n, k, R(-1), ai, m, bi, k, R(1), cr, m, false);
  run_real<R>(h, Op::N, Op::N, m, n, k, R(1), ar, m, bi, k, R(0), ci, m, false);
  run_real<R>(h, Op::N, Op::N, m, n, k, R(1), ai, m, br, k, R(1), ci, m, false);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      const Cx ab(cr[i + j * m], ci[i + j * m]);
      Cx& c = C[i + j * ldc];
      c = beta == Cx(0) ? alpha * ab : alpha * ab + beta * c;
    }
}

}  // namespace

template <class T>
void gemm_dispatch(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* A,
                   index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    run_real<T>(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    run_complex<typename T::value_type>(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template void gemm_dispatch<float>(const Handle&, Op, Op, index_t, index_t, index_t, float, const float*, index_t,
                                   const float*, index_t, float, float*, index_t);
template void gemm_dispatch<double>(const Handle&, Op, Op, index_t, index_t, index_t, double, const double*,
                                    index_t, const double*, index_t, double, double*, index_t);
template void gemm_dispatch<c64>(const Handle&, Op, Op, index_t, index_t, index_t, c64, const c64*, index_t,
                                 const c64*, index_t, c64, c64*, index_t);
template void gemm_dispatch<c128>(const Handle&, Op, Op, index_t, index_t, index_t, c128, const c128*, index_t,
                                  const c128*, index_t, c128, c128*, index_t);

}  // namespace strata::blas::detail
