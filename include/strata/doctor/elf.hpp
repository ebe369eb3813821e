// A small, bounds-checked ELF64 little-endian reader: section headers, the dynamic section
// (SONAME, NEEDED, RPATH, RUNPATH). Malformed input yields an error string, never a crash.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace strata::doctor {

inline constexpr std::uint32_t kShtNobits = 8;
inline constexpr std::uint32_t kShtDynamic = 6;
inline constexpr std::uint16_t kEmX86_64 = 62;
inline constexpr std::uint16_t kEmAarch64 = 183;
inline constexpr std::uint16_t kEmCuda = 190;

struct ElfSection {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0, addr = 0, offset = 0, size = 0;
};

struct ElfInfo {
  std::uint16_t type = 0;     // ET_EXEC 2, ET_DYN 3, ET_REL 1
  std::uint16_t machine = 0;  // e_machine
  std::uint8_t osabi = 0, abi_version = 0;
  std::uint32_t e_flags = 0;
  std::vector<ElfSection> sections;
  std::string soname;
  std::vector<std::string> needed;
  std::vector<std::string> rpath, runpath;  // split at ':'
  bool has_rpath = false, has_runpath = false;

  const ElfSection* section(std::string_view name) const;
};

struct ElfLimits {
  std::uint32_t max_sections = 65535;
  std::uint32_t max_dynamic_entries = 100000;
  std::size_t max_string = 4096;
  std::size_t max_total_strings = 1 << 20;  // bytes of NEEDED/SONAME/RPATH/RUNPATH strings kept
};

// Returns nullopt with `error` set for anything that is not a well-formed ELF64 LE file.
std::optional<ElfInfo> parse_elf(std::span<const std::uint8_t> bytes, std::string* error = nullptr,
                                 const ElfLimits& limits = {});

// True if the first bytes are "\x7fELF".
bool looks_like_elf(std::span<const std::uint8_t> bytes);

// For a cubin (e_machine 190): the SM number, using bits 8-15 for ABI version >= 8 (CUDA 13)
// and the low byte before.
int cubin_sm(const ElfInfo& cubin);

}  // namespace strata::doctor
