#include "strata/core/peak.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "strata/core/cpu.hpp"
#include "strata/core/timer.hpp"
#include "x86/fma_loop.hpp"

namespace strata {

namespace {

// GHz from `iters` runs of step(x, one), a block of `cycles` cycles of dependent work on x.
// `one` is a register the renamer cannot know (see add_chain_ghz).
template <class Step>
double chain_ghz(int64_t iters, double cycles, Step step) {
  volatile uint64_t one_source = 1;
  const uint64_t one = one_source;
  uint64_t x = 3;
  Timer t;
  for (int64_t i = 0; i < iters; ++i) step(x, one);
  return cycles * double(iters) / t.seconds() * 1e-9;
}

// Cycles per second from a chain of dependent register-register adds (1 cycle each), 100 per
// iteration, ~7 ms. The addend is a register: Intel's Golden Cove family folds `add reg, imm`
// chains at rename, and an immediate chain read 9-16 GHz on an Emerald Rapids VM (2026-12-04)
// where the cores run near 2.8 GHz.
double add_chain_ghz() {
  return chain_ghz(200000, 100.0, [](uint64_t& x, uint64_t one) {
    __asm__ volatile(".rept 100\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
  });
}

// The same from dependent 64-bit multiplies (3 cycles each on every Intel core since Nehalem
// and every AMD core since Zen), 50 per iteration: a second witness that no rename trick can
// shorten, used when the add chain claims a clock it cannot have.
double multiply_chain_ghz() {
  return chain_ghz(50000, 150.0, [](uint64_t& x, uint64_t one) {
    __asm__ volatile(".rept 50\n\timul %1, %0\n\t.endr" : "+r"(x) : "r"(one));
  });
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

// Seconds of the faster of three runs of fn(iters).
double best_seconds(double (*fn)(int64_t), int64_t iters) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    Timer t;
    volatile double sink = fn(iters);
    (void)sink;
    best = std::min(best, t.seconds());
  }
  return best;
}

PeakEstimate measure(Isa isa) {
  PeakEstimate p;
  p.isa = isa;
  // Clock and FMA samples are interleaved and the best of each kept, so a moment of contention
  // (another process on this core) cannot halve the estimate of either.
  double fmas = 0, by_add = 0, by_multiply = 0;
  for (int rep = 0; rep < 8; ++rep) {
    by_add = std::max(by_add, add_chain_ghz());
    by_multiply = std::max(by_multiply, multiply_chain_ghz());
    if (isa != Isa::generic) fmas = std::max(fmas, fma_sample_per_second(isa));
  }
  // The add chain is the finer clock; a chain can run slower than the clock (interrupts) but
  // never faster, so an add reading well above the multiply one means adds were shortcut.
  const bool adds_hold = by_add <= by_multiply * 1.15;
  p.clock_ghz = adds_hold ? by_add : by_multiply;
  p.clock_source = adds_hold ? "add" : "multiply";
  p.clock_ghz_add_chain = by_add;
  p.clock_ghz_multiply_chain = by_multiply;
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
  if (isa == Isa::avx512 && f.avx512_bf16)
    p.peak_gflops_bf16 = p.peak_gflops_f32 * std::max(0.5, std::round(bf16_dot_speedup() * 2) / 2);
  if ((isa == Isa::avx512 && f.avx512_vnni) || (isa >= Isa::avx2 && f.avx_vnni))
    p.peak_gops_int8 = 4 * p.peak_gflops_f32;
  if (isa == Isa::avx512 && f.amx_bf16 && f.amx_int8 && amx_ready()) {
    // The theoretical rate at the measured clock; the loops' own rate is reported beside it
    // (a VM sharing a core's tile unit with another reads below it).
    p.amx = true;
    p.peak_gflops_bf16 = 1024 * p.clock_ghz;
    p.peak_gops_int8 = 2048 * p.clock_ghz;
    const int64_t iters = 4000;
    p.measured_amx_gflops_bf16 = 4.0 * double(iters) * 16384 * 1e-9 / best_seconds(detail::amx_bf16_loop, iters);
    p.measured_amx_gops_int8 = 4.0 * double(iters) * 32768 * 1e-9 / best_seconds(detail::amx_int8_loop, iters);
  }
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

double bf16_dot_speedup() {
  static const double ratio = [] {
    const CpuFeatures& f = cpu_features();
    if (!f.avx512_bf16 || !isa_supported(Isa::avx512)) return 0.0;
    // Flops per second of each loop: a dot-product instruction does 64 (16 lanes x 2 products
    // x 2), an FMA 32; the same instruction count keeps the ratio free of the clock.
    const int64_t iters = 20000;
    const double dot = 24.0 * double(iters) * 64 / best_seconds(detail::bf16_dot_loop_avx512, iters);
    const double fma = 12.0 * double(2 * iters) * 32 / best_seconds(detail::fma_loop_avx512, 2 * iters);
    return dot / fma;
  }();
  return ratio;
}

}  // namespace strata
