// The instruction level of the tile hierarchy: a SIMD vector of T with the handful of
// operations a GEMM microkernel and its epilogue need. One struct per (ISA, T); kernels are
// written once over these.
#pragma once
#include <cstddef>
#include <type_traits>

#include "strata/tile/isa_namespace.hpp"

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

STRATA_TILE_NS_BEGIN

// The sum of N values as halves added pairwise: a fixed order, used for an AVX-512 vector's
// lanes (its sum(), once per dot product in tile/dot_gemm.hpp: stored and added in scalar
// code, which GCC 12's reduction intrinsics warn about under -Wuninitialized).
template <int N, class T>
inline T pairwise_sum(const T* x) {
  if constexpr (N == 1) return x[0];
  else return pairwise_sum<N / 2>(x) + pairwise_sum<N - N / 2>(x + N / 2);
}

// Portable vector: N lanes in an array; the compiler vectorises what it can.
template <class T, int N>
struct VecPortable {
  using value_type = T;
  static constexpr int lanes = N;
  T v[N];
  static VecPortable zero() { VecPortable r; for (int i = 0; i < N; ++i) r.v[i] = T(0); return r; }
  static VecPortable broadcast(const T* p) { VecPortable r; for (int i = 0; i < N; ++i) r.v[i] = *p; return r; }
  static VecPortable set1(T x) { VecPortable r; for (int i = 0; i < N; ++i) r.v[i] = x; return r; }
  static VecPortable load(const T* p) { VecPortable r; for (int i = 0; i < N; ++i) r.v[i] = p[i]; return r; }
  void store(T* p) const { for (int i = 0; i < N; ++i) p[i] = v[i]; }
  // The first n lanes (1 <= n <= N) from p, the rest zero; and back: nothing beyond p[n - 1]
  // is read or written (tile/small_gemm.hpp's ragged rows).
  static VecPortable load_first(const T* p, int n) {
    VecPortable r;
    for (int i = 0; i < N; ++i) r.v[i] = i < n ? p[i] : T(0);
    return r;
  }
  void store_first(T* p, int n) const { for (int i = 0; i < n; ++i) p[i] = v[i]; }
  friend VecPortable fma(VecPortable a, VecPortable b, VecPortable c) {
    for (int i = 0; i < N; ++i) c.v[i] = a.v[i] * b.v[i] + c.v[i];
    return c;
  }
  friend VecPortable operator*(VecPortable a, VecPortable b) { for (int i = 0; i < N; ++i) a.v[i] *= b.v[i]; return a; }
  friend VecPortable operator+(VecPortable a, VecPortable b) { for (int i = 0; i < N; ++i) a.v[i] += b.v[i]; return a; }
};

#if defined(__AVX2__) && defined(__FMA__)
struct VecAvx2F32 {
  using value_type = float;
  static constexpr int lanes = 8;
  __m256 v;
  static VecAvx2F32 zero() { return {_mm256_setzero_ps()}; }
  static VecAvx2F32 broadcast(const float* p) { return {_mm256_broadcast_ss(p)}; }
  static VecAvx2F32 set1(float x) { return {_mm256_set1_ps(x)}; }
  static VecAvx2F32 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  static __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static VecAvx2F32 load_first(const float* p, int n) { return {_mm256_maskload_ps(p, first(n))}; }
  void store_first(float* p, int n) const { _mm256_maskstore_ps(p, first(n), v); }
  friend VecAvx2F32 fma(VecAvx2F32 a, VecAvx2F32 b, VecAvx2F32 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
  friend VecAvx2F32 operator*(VecAvx2F32 a, VecAvx2F32 b) { return {_mm256_mul_ps(a.v, b.v)}; }
  friend VecAvx2F32 operator+(VecAvx2F32 a, VecAvx2F32 b) { return {_mm256_add_ps(a.v, b.v)}; }
};
struct VecAvx2F64 {
  using value_type = double;
  static constexpr int lanes = 4;
  __m256d v;
  static VecAvx2F64 zero() { return {_mm256_setzero_pd()}; }
  static VecAvx2F64 broadcast(const double* p) { return {_mm256_broadcast_sd(p)}; }
  static VecAvx2F64 set1(double x) { return {_mm256_set1_pd(x)}; }
  static VecAvx2F64 load(const double* p) { return {_mm256_loadu_pd(p)}; }
  void store(double* p) const { _mm256_storeu_pd(p, v); }
  static __m256i first(int n) { return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3)); }
  static VecAvx2F64 load_first(const double* p, int n) { return {_mm256_maskload_pd(p, first(n))}; }
  void store_first(double* p, int n) const { _mm256_maskstore_pd(p, first(n), v); }
  friend VecAvx2F64 fma(VecAvx2F64 a, VecAvx2F64 b, VecAvx2F64 c) { return {_mm256_fmadd_pd(a.v, b.v, c.v)}; }
  friend VecAvx2F64 operator*(VecAvx2F64 a, VecAvx2F64 b) { return {_mm256_mul_pd(a.v, b.v)}; }
  friend VecAvx2F64 operator+(VecAvx2F64 a, VecAvx2F64 b) { return {_mm256_add_pd(a.v, b.v)}; }
};
#endif

#if defined(__AVX512F__)
struct VecAvx512F32 {
  using value_type = float;
  static constexpr int lanes = 16;
  __m512 v;
  static VecAvx512F32 zero() { return {_mm512_setzero_ps()}; }
  static VecAvx512F32 broadcast(const float* p) { return {_mm512_set1_ps(*p)}; }
  static VecAvx512F32 set1(float x) { return {_mm512_set1_ps(x)}; }
  static VecAvx512F32 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  static __mmask16 first(int n) { return __mmask16((1u << n) - 1); }
  static VecAvx512F32 load_first(const float* p, int n) { return {_mm512_maskz_loadu_ps(first(n), p)}; }
  void store_first(float* p, int n) const { _mm512_mask_storeu_ps(p, first(n), v); }
  friend VecAvx512F32 fma(VecAvx512F32 a, VecAvx512F32 b, VecAvx512F32 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
  friend VecAvx512F32 operator*(VecAvx512F32 a, VecAvx512F32 b) { return {_mm512_mul_ps(a.v, b.v)}; }
  friend VecAvx512F32 operator+(VecAvx512F32 a, VecAvx512F32 b) { return {_mm512_add_ps(a.v, b.v)}; }
  float sum() const {
    float x[16];
    _mm512_storeu_ps(x, v);
    return pairwise_sum<16>(x);
  }
  // The lane sums of 16 vectors at once, out[f] = v[f].sum() up to the order of the adds (a
  // fixed tree: 256-bit halves, 128-bit quarters, then pairs and single lanes within them):
  // 45 shuffles and adds for the 16, against 16 stores and 240 scalar adds lane by lane. The
  // zero-masked shuffles with a full mask are the plain ones (GCC 12 warns on those).
  static void sum16(const VecAvx512F32 (&v)[16], float* out) {
    auto lanes = [](__m512 a, __m512 b, auto imm_lo, auto imm_hi) __attribute__((always_inline)) {
      return _mm512_add_ps(_mm512_maskz_shuffle_f32x4(0xFFFF, a, b, decltype(imm_lo)::value),
                           _mm512_maskz_shuffle_f32x4(0xFFFF, a, b, decltype(imm_hi)::value));
    };
    auto within = [](__m512 a, __m512 b, auto imm_lo, auto imm_hi) __attribute__((always_inline)) {
      return _mm512_add_ps(_mm512_maskz_shuffle_ps(0xFFFF, a, b, decltype(imm_lo)::value),
                           _mm512_maskz_shuffle_ps(0xFFFF, a, b, decltype(imm_hi)::value));
    };
    using C44 = std::integral_constant<int, 0x44>;
    using CEE = std::integral_constant<int, 0xEE>;
    using C88 = std::integral_constant<int, 0x88>;
    using CDD = std::integral_constant<int, 0xDD>;
    __m512 t[8], u[4], w[2];
    for (int i = 0; i < 8; ++i) t[i] = lanes(v[2 * i].v, v[2 * i + 1].v, C44{}, CEE{});  // [v2i | v2i+1] halves
    for (int i = 0; i < 4; ++i) u[i] = lanes(t[2 * i], t[2 * i + 1], C88{}, CDD{});       // quarter j: v4i+j
    for (int i = 0; i < 2; ++i) w[i] = within(u[2 * i], u[2 * i + 1], C44{}, CEE{});      // pairs
    float z[16];
    _mm512_storeu_ps(z, within(w[0], w[1], C88{}, CDD{}));  // lane 4j + q: v[j + 4q]
    for (int j = 0; j < 4; ++j)
      for (int q = 0; q < 4; ++q) out[j + 4 * q] = z[4 * j + q];
  }
};
struct VecAvx512F64 {
  using value_type = double;
  static constexpr int lanes = 8;
  __m512d v;
  static VecAvx512F64 zero() { return {_mm512_setzero_pd()}; }
  static VecAvx512F64 broadcast(const double* p) { return {_mm512_set1_pd(*p)}; }
  static VecAvx512F64 set1(double x) { return {_mm512_set1_pd(x)}; }
  static VecAvx512F64 load(const double* p) { return {_mm512_loadu_pd(p)}; }
  void store(double* p) const { _mm512_storeu_pd(p, v); }
  static __mmask8 first(int n) { return __mmask8((1u << n) - 1); }
  static VecAvx512F64 load_first(const double* p, int n) { return {_mm512_maskz_loadu_pd(first(n), p)}; }
  void store_first(double* p, int n) const { _mm512_mask_storeu_pd(p, first(n), v); }
  friend VecAvx512F64 fma(VecAvx512F64 a, VecAvx512F64 b, VecAvx512F64 c) { return {_mm512_fmadd_pd(a.v, b.v, c.v)}; }
  friend VecAvx512F64 operator*(VecAvx512F64 a, VecAvx512F64 b) { return {_mm512_mul_pd(a.v, b.v)}; }
  friend VecAvx512F64 operator+(VecAvx512F64 a, VecAvx512F64 b) { return {_mm512_add_pd(a.v, b.v)}; }
  double sum() const {
    double x[8];
    _mm512_storeu_pd(x, v);
    return pairwise_sum<8>(x);
  }
};
#endif

STRATA_TILE_NS_END
