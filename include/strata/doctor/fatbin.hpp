// Lists the GPU code inside a host ELF (or a raw .fatbin): SASS (sm_XX[a|f]), PTX (compute_XX
// with its PTX ISA version) and LTO-IR, per docs in FATBIN.md. Only headers are read; nothing
// is decompressed or executed. Hard limits bound work and memory for hostile input.
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "strata/doctor/elf.hpp"
#include "strata/doctor/version.hpp"

namespace strata::doctor {

enum class ImageKind { sass, ptx, ltoir };
enum class ArchVariant { plain, a, f };  // sm_90a: arch-specific; sm_100f: family-specific
enum class Compression { none, lz4, zstd };

struct ImageTarget {
  ImageKind kind = ImageKind::sass;
  int arch = 0;  // SM number: 75, 90, 100, 120 ...
  ArchVariant variant = ArchVariant::plain;
  // "sm_90a", "compute_120", "lto_80"
  std::string name() const;
  friend auto operator<=>(const ImageTarget&, const ImageTarget&) = default;
};

struct TargetStats {
  std::uint64_t entries = 0;
  std::uint64_t compressed_lz4 = 0, compressed_zstd = 0;
  Version max_version;  // PTX: ISA version; SASS: cubin code version; LTO-IR: NVVM IR version
  std::set<std::string> sections;
};

struct FatbinLimits {
  std::uint64_t max_containers = 200000;
  std::uint64_t max_entries = 2000000;
  std::uint32_t max_entry_header = 4096;
  std::uint64_t max_scan_bytes = 8ull << 30;  // bytes searched for container magics
};

struct FatbinScanOptions {
  // Also search every other non-NOBITS section for containers (libraries that load their
  // kernels themselves keep them in .ldata, .rodata, .cask_resource ...).
  bool deep = true;
  FatbinLimits limits;
};

struct SectionScan {
  std::string name;
  std::uint64_t containers = 0, entries = 0;
  bool walked = false;  // .nv_fatbin / __nv_relfatbin (walked in order) vs searched
};

struct FatbinReport {
  std::map<ImageTarget, TargetStats> targets;
  std::vector<SectionScan> sections;  // sections where containers were found
  std::uint64_t containers = 0, entries = 0;
  bool truncated = false;             // a limit was hit; the listing is partial
  std::vector<std::string> warnings;  // malformed containers etc.

  // registered: .nv_fatbin only (what __cudaRegisterFatBinary sees); runnable: every section
  // except __nv_relfatbin (pre-link images that nvlink consumed); all: everything found.
  enum class Scope { registered, runnable, all };
  std::set<ImageTarget> target_set(Scope scope) const;
  std::set<ImageTarget> targets_in(std::string_view section) const;
  std::string listing(ImageKind kind, Scope scope) const;  // "sm_75 sm_80 sm_90a"
  std::optional<Version> max_ptx_isa(Scope scope) const;
  bool has_gpu_code() const { return !targets.empty(); }
};

// Scans an ELF file already parsed into `elf`.
FatbinReport scan_elf_fatbins(std::span<const std::uint8_t> file, const ElfInfo& elf,
                              const FatbinScanOptions& options = {});
// Scans a raw fatbin (nvcc -fatbin output): containers back to back from offset 0.
FatbinReport scan_raw_fatbin(std::span<const std::uint8_t> bytes, const FatbinLimits& limits = {});
// Whatever the bytes are: ELF → sections; else raw fatbin if it starts with the magic.
FatbinReport scan_any(std::span<const std::uint8_t> bytes, const FatbinScanOptions& options = {},
                      std::string* error = nullptr);

inline constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
inline constexpr std::uint32_t kFatbinWrapperMagic = 0x466243B1u;

}  // namespace strata::doctor
