// What the CPU can do, read with cpuid/xgetbv (and the OS's view of it).
#pragma once
#include <cstddef>
#include <string>

namespace strata {

struct CpuFeatures {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  std::string brand;   // model string
  int family = 0, model = 0, stepping = 0;

  // Instruction-set flags, already ANDed with OS support for the register state
  // (XCR0 YMM bits for AVX*, opmask/ZMM bits for AVX-512, tile bits for AMX).
  bool sse42 = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512cd = false;
  bool avx512_bf16 = false, avx512_fp16 = false, avx512_vnni = false, avx_vnni = false;
  bool amx_tile = false, amx_bf16 = false, amx_int8 = false;
  // The same flags as reported by cpuid before the OS check (to explain "CPU has it, OS disabled it").
  bool os_saves_ymm = false, os_saves_zmm = false, os_saves_amx = false;

  // Caches in bytes (per core for L1/L2; shared for L3) and core counts.
  std::size_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  std::size_t cache_line = 64;
  std::size_t l1d_ways = 0;  // L1d associativity (0 if unknown)
  int logical_cpus = 0;  // online CPUs in the system
  int affinity_cpus = 0; // CPUs this process may run on (sched_getaffinity)
  std::size_t l2_ways = 0;  // L2 associativity (0 if unknown)
};

// Detected once per process; cheap to call.
const CpuFeatures& cpu_features();

// Whether AMX tile instructions may run in this process: the CPU has AMX-TILE and the OS
// saves its state, and (Linux) the kernel granted this process the tile data state, which
// it must be asked for once (arch_prctl ARCH_REQ_XCOMP_PERM) before the first tile
// instruction: without it that instruction faults. Asked on the first call, for every
// thread of the process; cheap afterwards. STRATA_AMX=0 answers false (for comparisons).
bool amx_ready();

// Space-separated list of the flags that are set (for `strata info` and tests).
std::string cpu_flag_list(const CpuFeatures& f);

}  // namespace strata
