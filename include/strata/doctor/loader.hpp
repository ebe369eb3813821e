// A model of how glibc's ld.so finds a shared library, read from files only: DT_RPATH (when
// there is no DT_RUNPATH) with $ORIGIN, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache, then
// the system directories. Every directory tried is recorded, so the doctor can say *why* a
// library was or was not found, and which copy wins when several exist.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "strata/doctor/elf.hpp"
#include "strata/doctor/system_view.hpp"

namespace strata::doctor {

struct LdCacheEntry {
  std::string name;  // soname, e.g. "libcuda.so.1"
  std::string path;  // where ldconfig found it
  std::int32_t flags = 0;
};

struct LdCache {
  std::vector<LdCacheEntry> entries;  // in file order (ldconfig's priority order)
  std::string format;                 // "glibc-ld.so.cache1.1", "ld.so-1.7.0", or empty
  // First entry for `name` whose flags suit the machine (x86-64: 0x0303; aarch64: 0x0a03).
  const LdCacheEntry* find(std::string_view name, std::uint16_t machine) const;
};

// Parses the binary cache (new format, old format, or old followed by new). Bounded: at most
// `max_entries` entries; every string offset is checked.
std::optional<LdCache> parse_ld_so_cache(std::span<const std::uint8_t> bytes, std::string* error = nullptr,
                                         std::size_t max_entries = 200000);

// The object doing the loading: its path (for $ORIGIN) and its dynamic section.
struct Requester {
  std::string path;
  ElfInfo elf;
};

struct SearchStep {
  std::string dir;
  std::string source;  // "RPATH of X", "LD_LIBRARY_PATH", "RUNPATH of X", "ld.so.cache", "system dir"
  std::string result;  // "found", "absent", "wrong ELF class or machine", "not ELF"
};

struct Resolution {
  std::string name;
  std::optional<std::string> path;  // the file ld.so would load (a path inside the view)
  std::string via;                  // the source of the winning step
  std::vector<SearchStep> steps;
  // One line: "libcudart.so.12 -> /usr/local/cuda/lib64/libcudart.so.12 (via LD_LIBRARY_PATH)"
  std::string summary() const;
};

class LoaderModel {
 public:
  explicit LoaderModel(const SystemView& sys);

  // How `name` is found when `requester` (nullptr: a plain executable without RPATH, like
  // python calling dlopen) asks for it.
  Resolution resolve(std::string_view name, const Requester* requester = nullptr) const;
  // Directories in ld.so's order for `requester` (without the cache), for finding every copy.
  std::vector<std::pair<std::string, std::string>> search_dirs(const Requester* requester = nullptr) const;
  const LdCache& cache() const noexcept { return cache_; }
  bool cache_present() const noexcept { return cache_present_; }
  std::uint16_t machine() const noexcept { return machine_; }
  // Reads and parses an ELF inside the view (header + dynamic section), for use as a requester.
  std::optional<Requester> load_requester(const std::string& path) const;
  // "found" / "absent" / "wrong ELF class or machine" / "not ELF" for one candidate file.
  std::string check_candidate(const std::string& path) const;

 private:
  const SystemView& sys_;
  LdCache cache_;
  bool cache_present_ = false;
  std::uint16_t machine_ = kEmX86_64;
};

// System directories searched last (Debian/Ubuntu multiarch and the generic ones).
const std::vector<std::string>& system_library_dirs(std::uint16_t machine);
// Expands $ORIGIN / ${ORIGIN} (the requester's directory) and $LIB / $PLATFORM.
std::string expand_dst(std::string_view dir, std::string_view origin, std::uint16_t machine);

}  // namespace strata::doctor
