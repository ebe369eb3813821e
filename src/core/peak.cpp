#include "strata/core/peak.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "strata/core/cpu.hpp"
#include "strata/core/timer.hpp"
#include "x86/fma_loop.hpp"

namespace strata {

namespace {

// 100 dependent adds per iteration: one cycle each, so cycles = 100 * iters. ~7 ms.
double clock_sample_ghz() {
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
  return 100.0 * double(iters) / t.seconds() * 1e-9;
}

// Vector FMAs per second from 12 independent chains. ~10 ms.
double fma_sample_per_second(Isa isa) {
  detail::FmaLoopFn fn = isa == Isa::avx512 ? detail::fma_loop_avx512 : detail::fma_loop_avx2;
  const int64_t iters = 400000;
  Timer t;
  volatile double sink = fn(iters);
  (void)sink;
  return 12.0 * double(iters) / t.seconds();
}

PeakEstimate measure(Isa isa) {
  PeakEstimate p;
  p.isa = isa;
  // Clock and FMA samples are interleaved and the best of each kept, so a moment of contention
  // (another process on this core) cannot halve the estimate of either.
  double fmas = 0;
  for (int rep = 0; rep < 8; ++rep) {
    p.clock_ghz = std::max(p.clock_ghz, clock_sample_ghz());
    if (isa != Isa::generic) fmas = std::max(fmas, fma_sample_per_second(isa));
  }
  const CpuFeatures& f = cpu_features();
  if (isa == Isa::generic) {
    // Portable code gets no guaranteed vector width; count scalar FMAs on two ports.
    p.f32_lanes = 1;
    p.fma_ports = 2;
  } else {
    p.f32_lanes = isa == Isa::avx512 ? 16 : 8;
    double per_cycle = fmas / (p.clock_ghz * 1e9);
    p.measured_fma_gflops_f32 = fmas * p.f32_lanes * 2 * 1e-9;
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
