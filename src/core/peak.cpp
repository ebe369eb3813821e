#include "strata/core/peak.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "strata/core/cpu.hpp"
#include "strata/core/timer.hpp"
#include "x86/fma_loop.hpp"

namespace strata {

namespace {

// 100 dependent adds per iteration: one cycle each, so cycles = 100 * iters.
double measure_clock_ghz() {
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const int64_t iters = 200000;
    uint64_t x = 0;
    Timer t;
    for (int64_t i = 0; i < iters; ++i) {
      __asm__ volatile(
          ".rept 100\n\t"
          "add $1, %0\n\t"
          ".endr"
          : "+r"(x));
    }
    double s = t.seconds();
    best = std::max(best, 100.0 * double(iters) / s * 1e-9);
  }
  return best;
}

double measure_vector_fmas_per_second(Isa isa) {
  detail::FmaLoopFn fn = isa == Isa::avx512 ? detail::fma_loop_avx512 : detail::fma_loop_avx2;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const int64_t iters = 400000;
    Timer t;
    volatile double sink = fn(iters);
    (void)sink;
    best = std::max(best, 12.0 * double(iters) / t.seconds());
  }
  return best;
}

PeakEstimate measure(Isa isa) {
  PeakEstimate p;
  p.isa = isa;
  p.clock_ghz = measure_clock_ghz();
  const CpuFeatures& f = cpu_features();
  if (isa == Isa::generic) {
    // Portable code gets no guaranteed vector width; count scalar FMAs on two ports.
    p.f32_lanes = 1;
    p.fma_ports = 2;
  } else {
    p.f32_lanes = isa == Isa::avx512 ? 16 : 8;
    double per_cycle = measure_vector_fmas_per_second(isa) / (p.clock_ghz * 1e9);
    p.measured_fma_gflops_f32 = measure_vector_fmas_per_second(isa) * p.f32_lanes * 2 * 1e-9;
    p.fma_ports = std::max(0.5, std::round(per_cycle * 2) / 2);
  }
  p.peak_gflops_f32 = p.f32_lanes * 2 * p.fma_ports * p.clock_ghz;
  p.peak_gflops_f64 = p.peak_gflops_f32 / 2;
  if (isa == Isa::avx512 && f.avx512_bf16) p.peak_gflops_bf16 = 2 * p.peak_gflops_f32;
  if ((isa == Isa::avx512 && f.avx512_vnni) || (isa >= Isa::avx2 && f.avx_vnni))
    p.peak_gops_int8 = 4 * p.peak_gflops_f32;
  return p;
}

}  // namespace

const PeakEstimate& measure_peak(Isa isa) {
  static std::mutex m;
  static PeakEstimate cache[3];
  static bool done[3] = {};
  std::lock_guard lock(m);
  int i = int(isa);
  if (!done[i]) cache[i] = measure(isa), done[i] = true;
  return cache[i];
}

const PeakEstimate& measure_peak() { return measure_peak(active_isa()); }

}  // namespace strata
