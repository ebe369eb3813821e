#include "strata/core/cpu.hpp"

#include "strata/core/env.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define STRATA_X86 1
#endif

namespace strata {

namespace {

#ifdef STRATA_X86
struct Regs { unsigned a = 0, b = 0, c = 0, d = 0; };

Regs cpuid(unsigned leaf, unsigned sub = 0) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

unsigned long long xgetbv0() {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

bool bit(unsigned v, int i) { return (v >> i) & 1u; }

// Deterministic cache parameters: leaf 4 (Intel) or 0x8000001D (AMD).
void read_caches(CpuFeatures& f, bool amd) {
  const unsigned leaf = amd ? 0x8000001Du : 4u;
  if (amd && cpuid(0x80000000u).a < 0x8000001Du) return;
  for (unsigned i = 0; i < 16; ++i) {
    Regs r = cpuid(leaf, i);
    unsigned type = r.a & 0x1f;
    if (type == 0) break;
    unsigned level = (r.a >> 5) & 7;
    std::size_t ways = ((r.b >> 22) & 0x3ff) + 1, parts = ((r.b >> 12) & 0x3ff) + 1;
    std::size_t line = (r.b & 0xfff) + 1, sets = std::size_t(r.c) + 1;
    std::size_t bytes = ways * parts * line * sets;
    if (level == 1 && type == 1) f.l1d_bytes = bytes, f.cache_line = line, f.l1d_ways = ways;
    if (level == 2 && type != 2) f.l2_bytes = bytes, f.l2_ways = ways;
    if (level == 3 && type != 2) f.l3_bytes = bytes;
  }
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#ifdef STRATA_X86
  Regs r0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor + 0, &r0.b, 4);
  std::memcpy(vendor + 4, &r0.d, 4);
  std::memcpy(vendor + 8, &r0.c, 4);
  f.vendor = vendor;
  const unsigned max_leaf = r0.a;

  Regs r1 = cpuid(1);
  f.stepping = r1.a & 0xf;
  const int base_family = (r1.a >> 8) & 0xf, base_model = (r1.a >> 4) & 0xf;
  f.family = base_family == 0xf ? base_family + int((r1.a >> 20) & 0xff) : base_family;
  f.model = (base_family == 0x6 || base_family == 0xf) ? base_model + int(((r1.a >> 16) & 0xf) << 4) : base_model;

  if (cpuid(0x80000000u).a >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      Regs r = cpuid(0x80000002u + i);
      std::memcpy(brand + 16 * i + 0, &r.a, 4);
      std::memcpy(brand + 16 * i + 4, &r.b, 4);
      std::memcpy(brand + 16 * i + 8, &r.c, 4);
      std::memcpy(brand + 16 * i + 12, &r.d, 4);
    }
    f.brand = brand;
    while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
  }

  const bool osxsave = bit(r1.c, 27);
  const unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  f.os_saves_ymm = (xcr0 & 0x6) == 0x6;             // SSE + AVX state
  f.os_saves_zmm = f.os_saves_ymm && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  f.os_saves_amx = (xcr0 & 0x60000) == 0x60000;     // XTILECFG, XTILEDATA

  f.sse42 = bit(r1.c, 20);
  f.avx = bit(r1.c, 28) && f.os_saves_ymm;
  f.fma = bit(r1.c, 12) && f.os_saves_ymm;
  f.f16c = bit(r1.c, 29) && f.os_saves_ymm;
  if (max_leaf >= 7) {
    Regs r7 = cpuid(7, 0);
    Regs r71 = cpuid(7, 1);
    f.avx2 = bit(r7.b, 5) && f.os_saves_ymm;
    f.avx512f = bit(r7.b, 16) && f.os_saves_zmm;
    f.avx512dq = bit(r7.b, 17) && f.os_saves_zmm;
    f.avx512cd = bit(r7.b, 28) && f.os_saves_zmm;
    f.avx512bw = bit(r7.b, 30) && f.os_saves_zmm;
    f.avx512vl = bit(r7.b, 31) && f.os_saves_zmm;
    f.avx512_vnni = bit(r7.c, 11) && f.os_saves_zmm;
    f.avx512_fp16 = bit(r7.d, 23) && f.os_saves_zmm;
    f.amx_bf16 = bit(r7.d, 22) && f.os_saves_amx;
    f.amx_tile = bit(r7.d, 24) && f.os_saves_amx;
    f.amx_int8 = bit(r7.d, 25) && f.os_saves_amx;
    f.avx_vnni = bit(r71.a, 4) && f.os_saves_ymm;
    f.avx512_bf16 = bit(r71.a, 5) && f.os_saves_zmm;
  }
  read_caches(f, f.vendor == "AuthenticAMD" || f.vendor == "HygonGenuine");
#endif
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  f.logical_cpus = online > 0 ? int(online) : 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  f.affinity_cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : f.logical_cpus;
  if (f.affinity_cpus <= 0) f.affinity_cpus = 1;
  // Sensible defaults where cpuid did not say (non-x86, odd hypervisors).
  if (!f.l1d_bytes) f.l1d_bytes = 32 * 1024;
  if (!f.l2_bytes) f.l2_bytes = 512 * 1024;
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

bool amx_ready() {
  static const bool ready = [] {
    const CpuFeatures& f = cpu_features();
    if (!f.amx_tile || env_int("STRATA_AMX", 1) == 0) return false;
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
    constexpr long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
    return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
    return false;
#endif
  }();
  return ready;
}

std::string cpu_flag_list(const CpuFeatures& f) {
  const std::pair<const char*, bool> flags[] = {
      {"sse4_2", f.sse42}, {"avx", f.avx}, {"avx2", f.avx2}, {"fma", f.fma}, {"f16c", f.f16c},
      {"avx512f", f.avx512f}, {"avx512bw", f.avx512bw}, {"avx512vl", f.avx512vl},
      {"avx512dq", f.avx512dq}, {"avx512cd", f.avx512cd}, {"avx512_bf16", f.avx512_bf16},
      {"avx512_fp16", f.avx512_fp16}, {"avx512_vnni", f.avx512_vnni}, {"avx_vnni", f.avx_vnni},
      {"amx_tile", f.amx_tile}, {"amx_bf16", f.amx_bf16}, {"amx_int8", f.amx_int8}};
  std::string out;
  for (auto& [name, on] : flags)
    if (on) out += (out.empty() ? "" : " ") + std::string(name);
  return out;
}

}  // namespace strata
