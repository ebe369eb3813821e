#include "strata/core/isa.hpp"

#include <atomic>
#include <string>

#include "strata/core/cpu.hpp"
#include "strata/core/env.hpp"
#include "strata/core/status.hpp"

namespace strata {

namespace {
std::atomic<int> g_override{-1};
}

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::generic: return "generic";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

std::optional<Isa> parse_isa(std::string_view name) noexcept {
  for (Isa i : {Isa::generic, Isa::avx2, Isa::avx512})
    if (isa_name(i) == name) return i;
  return std::nullopt;
}

bool isa_supported(Isa isa) noexcept {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::generic: return true;
    case Isa::avx2: return f.avx2 && f.fma && f.f16c;
    case Isa::avx512: return isa_supported(Isa::avx2) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
  }
  return false;
}

Isa best_isa() noexcept {
  static const Isa best = [] {  // asked on every BLAS call; the CPU does not change
    for (Isa i : {Isa::avx512, Isa::avx2})
      if (isa_supported(i)) return i;
    return Isa::generic;
  }();
  return best;
}

static Isa checked(Isa want, const char* source) {
  if (!isa_supported(want))
    throw_error(Status::not_supported, source,
                std::string("this CPU cannot run the '") + std::string(isa_name(want)) +
                    "' kernels (best available: '" + std::string(isa_name(best_isa())) + "')");
  return want;
}

Isa active_isa() {
  int o = g_override.load(std::memory_order_relaxed);
  if (o >= 0) return Isa(o);
  // STRATA_ISA is read once (this runs on every BLAS call); a bad value is reported on every call.
  struct FromEnv {
    std::optional<std::string> raw;
    std::optional<Isa> isa;
  };
  static const FromEnv env = [] {
    FromEnv e;
    e.raw = env_string("STRATA_ISA");
    if (e.raw) e.isa = parse_isa(*e.raw);
    return e;
  }();
  if (env.raw && !env.isa)
    throw_error(Status::invalid_argument, "STRATA_ISA",
                "unknown ISA '" + *env.raw + "' (expected avx512, avx2 or generic)");
  if (env.isa) return checked(*env.isa, "STRATA_ISA");
  return best_isa();
}

void set_isa_override(std::optional<Isa> isa) {
  if (isa) checked(*isa, "isa");
  g_override.store(isa ? int(*isa) : -1, std::memory_order_relaxed);
}

}  // namespace strata
