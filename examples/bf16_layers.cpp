// Two bf16 building blocks of a transformer on strata's C++ API, each checked against a plain
// loop in double:
//   1. an MLP layer, y = GELU(W x + b), as one Lt matmul with a fused epilogue (bf16 inputs, f32
//      compute and output; AMX tiles where the CPU and OS allow them);
//   2. attention scores for several heads, S_h = Q_h K_h^T, as one strided batched gemm_ex.
// Run with STRATA_VERBOSE=1 to see which kernel and algorithm each call chose and why.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "strata/blas/gemm_ex.hpp"
#include "strata/blas/lt.hpp"
#include "strata/core/minifloat.hpp"

using namespace strata;
using namespace strata::blas;

namespace {

std::vector<bf16> random_bf16(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<bf16> v(n);
  for (auto& x : v) x = bf16(d(rng));
  return v;
}

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

}  // namespace

int main() {
  std::mt19937 rng(1);
  int failures = 0;
  auto report = [&](const char* what, double worst) {
    // f32 accumulation over a few hundred products of values below 1: well under 1e-3.
    const bool ok = worst < 1e-3;
    std::printf("%-40s max |error| %.2e  %s\n", what, worst, ok ? "ok" : "WRONG");
    failures += !ok;
  };
  Handle h;

  // 1. MLP layer: W (out x in), a batch of tokens X (in x tokens), column-major; Y (out x tokens).
  {
    const index_t out = 256, in = 384, tokens = 64;
    const auto W = random_bf16(std::size_t(out * in), rng), X = random_bf16(std::size_t(in * tokens), rng);
    std::vector<float> bias(static_cast<std::size_t>(out)), Y(std::size_t(out * tokens));
    for (index_t i = 0; i < out; ++i) bias[std::size_t(i)] = 0.01f * float(i % 7);
    lt::MatmulDesc desc;  // f32 compute
    desc.epilogue.bias(bias.data()).activation(lt::Activation::gelu_erf);
    const lt::MatrixLayout w{DType::bf16, out, in, out}, x{DType::bf16, in, tokens, in};
    const lt::MatrixLayout y{DType::f32, out, tokens, out};
    const float one = 1, zero = 0;
    lt::matmul(h, desc, &one, W.data(), w, X.data(), x, &zero, nullptr, y, Y.data(), y);
    double worst = 0;
    for (index_t j = 0; j < tokens; ++j)
      for (index_t i = 0; i < out; ++i) {
        double acc = bias[std::size_t(i)];
        for (index_t p = 0; p < in; ++p)
          acc += double(W[std::size_t(i + p * out)].to_float()) * double(X[std::size_t(p + j * in)].to_float());
        worst = std::max(worst, std::abs(gelu(acc) - double(Y[std::size_t(i + j * out)])));
      }
    report("MLP layer: GELU(W x + b), lt::matmul", worst);
  }

  // 2. Attention scores: per head h, S_h (seq x seq) = Q_h (seq x d) K_h^T, heads in one call.
  {
    const index_t heads = 8, seq = 48, d = 64;
    const auto Q = random_bf16(std::size_t(heads * seq * d), rng), K = random_bf16(std::size_t(heads * seq * d), rng);
    std::vector<float> S(std::size_t(heads * seq * seq));
    gemm_strided_batched_ex(h, Op::N, Op::T, seq, seq, d, 1.0f, Q.data(), DType::bf16, seq, seq * d, K.data(),
                            DType::bf16, seq, seq * d, 0.0f, S.data(), seq, seq * seq, heads);
    double worst = 0;
    for (index_t e = 0; e < heads; ++e)
      for (index_t j = 0; j < seq; ++j)
        for (index_t i = 0; i < seq; ++i) {
          double acc = 0;
          for (index_t p = 0; p < d; ++p)
            acc += double(Q[std::size_t(e * seq * d + i + p * seq)].to_float()) *
                   double(K[std::size_t(e * seq * d + j + p * seq)].to_float());
          worst = std::max(worst, std::abs(acc - double(S[std::size_t(e * seq * seq + i + j * seq)])));
        }
    report("attention scores: Q K^T x 8 heads, batched", worst);
  }
  return failures == 0 ? 0 : 1;
}
