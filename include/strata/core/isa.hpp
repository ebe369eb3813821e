// Run-time ISA dispatch. One binary carries kernels for several instruction sets; the best
// one the CPU supports is used unless STRATA_ISA=avx512|avx2|generic forces a lower path
// (asking for an ISA the CPU lacks is a clear not_supported error, never a SIGILL).
#pragma once
#include <optional>
#include <string_view>

namespace strata {

enum class Isa { generic = 0, avx2 = 1, avx512 = 2 };  // ordered: higher includes lower

std::string_view isa_name(Isa isa) noexcept;
std::optional<Isa> parse_isa(std::string_view name) noexcept;

// Whether this CPU and OS can run kernels compiled for `isa`:
//   avx2   = AVX2 + FMA + F16C with YMM state saved by the OS
//   avx512 = AVX-512 F/BW/VL/DQ with ZMM state saved by the OS
bool isa_supported(Isa isa) noexcept;
Isa best_isa() noexcept;

// The ISA kernels should use now: the override if set, else STRATA_ISA, else best_isa().
// Throws Error(not_supported) naming STRATA_ISA when the variable asks for too much.
Isa active_isa();
// Programmatic override (tests, `strata bench --isa`); nullopt restores the default.
void set_isa_override(std::optional<Isa> isa);

// A slot per ISA; `select` returns the best filled slot not above `isa`.
// Reference (generic) slots must always be filled, as BLIS fills every slot with a reference kernel.
template <class Fn>
struct IsaTable {
  Fn generic{};
  Fn avx2{};
  Fn avx512{};
  Fn select(Isa isa) const {
    if (isa >= Isa::avx512 && avx512) return avx512;
    if (isa >= Isa::avx2 && avx2) return avx2;
    return generic;
  }
};

}  // namespace strata
