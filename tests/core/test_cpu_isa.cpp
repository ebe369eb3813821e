// Feature detection must agree with the kernel's view in /proc/cpuinfo (which already folds in
// OS support), and ISA forcing must select lower paths or refuse clearly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "strata/core/cpu.hpp"
#include "strata/core/isa.hpp"
#include "strata/core/peak.hpp"
#include "strata/core/status.hpp"

using namespace strata;

namespace {
std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      std::istringstream ss(line.substr(line.find(':') + 1));
      std::set<std::string> flags;
      std::string f;
      while (ss >> f) flags.insert(f);
      return flags;
    }
  }
  return {};
}
}  // namespace

TEST(CpuFeatures, AgreeWithProcCpuinfo) {
  auto flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line";
  const CpuFeatures& f = cpu_features();
  const std::pair<const char*, bool> checks[] = {
      {"avx", f.avx}, {"avx2", f.avx2}, {"fma", f.fma}, {"f16c", f.f16c},
      {"avx512f", f.avx512f}, {"avx512bw", f.avx512bw}, {"avx512vl", f.avx512vl},
      {"avx512dq", f.avx512dq}, {"avx512cd", f.avx512cd}, {"avx512_bf16", f.avx512_bf16},
      {"avx512_fp16", f.avx512_fp16}, {"avx512_vnni", f.avx512_vnni}, {"avx_vnni", f.avx_vnni},
      {"amx_tile", f.amx_tile}, {"amx_bf16", f.amx_bf16}, {"amx_int8", f.amx_int8}};
  for (auto& [name, have] : checks) EXPECT_EQ(flags.count(name) == 1, have) << name;
}

TEST(CpuFeatures, CachesAndCoresArePlausible) {
  const CpuFeatures& f = cpu_features();
  EXPECT_GE(f.l1d_bytes, 8u * 1024);
  EXPECT_GE(f.l2_bytes, f.l1d_bytes);
  EXPECT_GE(f.logical_cpus, 1);
  EXPECT_GE(f.affinity_cpus, 1);
  EXPECT_LE(f.affinity_cpus, f.logical_cpus);
  EXPECT_FALSE(f.vendor.empty());
}

TEST(Isa, ForcingLowerPathsWorksAndHigherOnesAreRefused) {
  EXPECT_TRUE(isa_supported(Isa::generic));
  const Isa best = best_isa();
  const Isa before = active_isa();  // best_isa(), or what STRATA_ISA asks for
  for (Isa i : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (i <= best) {
      set_isa_override(i);
      EXPECT_EQ(active_isa(), i);
    } else {
      try {
        set_isa_override(i);
        FAIL() << "forcing " << isa_name(i) << " should fail on this CPU";
      } catch (const Error& e) {
        EXPECT_EQ(e.status(), Status::not_supported);
      }
    }
  }
  set_isa_override(std::nullopt);
  EXPECT_EQ(active_isa(), before);
  if (!std::getenv("STRATA_ISA")) {
    EXPECT_EQ(active_isa(), best);
  }
}

TEST(Isa, TableSelectsBestFilledSlotNotAbove) {
  IsaTable<int (*)()> t;
  t.generic = [] { return 0; };
  t.avx2 = [] { return 2; };
  EXPECT_EQ(t.select(Isa::generic)(), 0);
  EXPECT_EQ(t.select(Isa::avx2)(), 2);
  EXPECT_EQ(t.select(Isa::avx512)(), 2);  // empty slot falls back
}

TEST(Isa, NamesParse) {
  EXPECT_EQ(parse_isa("avx2"), Isa::avx2);
  EXPECT_FALSE(parse_isa("sse").has_value());
}

TEST(Peak, MeasuredPeakIsConsistent) {
  const PeakEstimate& p = measure_peak(best_isa());
  EXPECT_GT(p.clock_ghz, 0.5);
  EXPECT_LT(p.clock_ghz, 7.0);
  // Both chains time the same clock: an add chain far above the multiply chain (renamer
  // folding, seen on Emerald Rapids) must not be the one used.
  EXPECT_LE(p.clock_ghz, p.clock_ghz_multiply_chain * 1.15 + 1e-9);
  EXPECT_GT(p.clock_ghz_multiply_chain, 0.5);
  EXPECT_NEAR(p.peak_gflops_f32, p.f32_lanes * 2 * p.fma_ports * p.clock_ghz, 1e-9);
  if (best_isa() != Isa::generic) {
    // The FMA loop cannot beat the theoretical peak by more than clock noise.
    EXPECT_LT(p.measured_fma_gflops_f32, p.peak_gflops_f32 * 1.25);
    EXPECT_GT(p.measured_fma_gflops_f32, p.peak_gflops_f32 * 0.5);
  }
}

// The bf16 dot-product rate is measured, not assumed: 0 without the instruction, otherwise a
// plausible ratio to the FMA's flops rate (Zen 5: 2.0; an Emerald Rapids VM: ~0.5), and the
// bf16 peak follows it.
TEST(Peak, Bf16DotSpeedupIsMeasured) {
  const double r = bf16_dot_speedup();
  if (!cpu_features().avx512_bf16 || !isa_supported(Isa::avx512)) {
    EXPECT_EQ(r, 0.0);
    return;
  }
  EXPECT_GT(r, 0.2);
  EXPECT_LT(r, 3.0);
  const PeakEstimate& p = measure_peak(Isa::avx512);
  if (p.amx) return;  // AMX's peak instead: below
  EXPECT_NEAR(p.peak_gflops_bf16, p.peak_gflops_f32 * std::max(0.5, std::round(r * 2) / 2), 1e-9);
}

// Where the process may use AMX, the bf16 and int8 peaks are the tile units' (1024 flops and
// 2048 ops a cycle at the measured clock), and the tile-product loops really ran: their rates
// are positive and not above the theory (a VM sharing the tile unit reads well below it).
TEST(Peak, AmxPeaksFollowTheClock) {
  if (!isa_supported(Isa::avx512)) GTEST_SKIP() << "no AVX-512 here";
  const PeakEstimate& p = measure_peak(Isa::avx512);
  const CpuFeatures& f = cpu_features();
  const bool expect = f.amx_bf16 && f.amx_int8 && amx_ready();
  EXPECT_EQ(p.amx, expect);
  if (!p.amx) {
    EXPECT_EQ(p.measured_amx_gflops_bf16, 0.0);
    GTEST_SKIP() << "no AMX here";
  }
  EXPECT_NEAR(p.peak_gflops_bf16, 1024 * p.clock_ghz, 1e-9);
  EXPECT_NEAR(p.peak_gops_int8, 2048 * p.clock_ghz, 1e-9);
  EXPECT_GT(p.measured_amx_gflops_bf16, 0.05 * p.peak_gflops_bf16);
  EXPECT_LT(p.measured_amx_gflops_bf16, 1.1 * p.peak_gflops_bf16);
  EXPECT_GT(p.measured_amx_gops_int8, 0.05 * p.peak_gops_int8);
  EXPECT_LT(p.measured_amx_gops_int8, 1.1 * p.peak_gops_int8);
}
