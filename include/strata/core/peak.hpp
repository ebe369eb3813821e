// Theoretical peak floating-point rate of one core of this CPU, measured rather than looked up:
//   clock      from a chain of dependent register-register adds (1 cycle each), checked against
//              a chain of dependent multiplies (3 cycles each): Golden Cove-family cores fold
//              add-immediate chains at rename, so an add chain alone can read several times
//              the real clock
//   FMA ports  from the throughput of independent vector FMAs, divided by that clock
//   peak       = vector lanes x 2 flops x FMA ports x clock
// so the number is right under turbo limits, hypervisors and power caps, and `strata info`
// says exactly this.
#pragma once
#include "strata/core/isa.hpp"

namespace strata {

struct PeakEstimate {
  Isa isa = Isa::generic;
  double clock_ghz = 0;        // measured, under a busy loop on one core
  const char* clock_source = "add";    // which chain clock_ghz comes from: "add" or "multiply"
  double clock_ghz_add_chain = 0;      // both readings, for `strata info --json`
  double clock_ghz_multiply_chain = 0;
  int f32_lanes = 1;           // per vector register
  double fma_ports = 1;        // measured vector FMAs per cycle (rounded to 0.5 steps)
  double measured_fma_gflops_f32 = 0;  // what the FMA loop itself achieved
  double peak_gflops_f32 = 0;  // per core
  double peak_gflops_f64 = 0;  // per core
  // Per core. bf16: with AMX (where amx_ready()), 1024 flops a cycle (a 16 x 16 x 32 tile product
  // each 16 cycles); else the f32 peak x bf16_dot_speedup() in 0.5 steps (0 without AVX512_BF16).
  double peak_gflops_bf16 = 0;
  // Per core: with AMX 2048 ops a cycle, else VNNI's 4 x the f32 rate (0 without either).
  double peak_gops_int8 = 0;
  bool amx = false;                  // the two above are AMX's
  double measured_amx_gflops_bf16 = 0;  // what the tile-product loops achieved (0 without AMX)
  double measured_amx_gops_int8 = 0;
};

// The bf16 dot-product instruction's (AVX512_BF16) flops rate over the f32 FMA's on this core,
// measured once (~5 ms, cached); 0 without the instruction. About 2 where it runs at the FMA's
// instruction rate (Zen 5: 2.0), about 1 or less where it does not (an Emerald Rapids VM read
// ~0.5): gemm_ex uses its native bf16 kernel only where this is clearly above 1.
double bf16_dot_speedup();

// Measures for `isa` (default: the active one). Takes ~0.1 s; results are cached per ISA.
const PeakEstimate& measure_peak(Isa isa);
const PeakEstimate& measure_peak();

}  // namespace strata
