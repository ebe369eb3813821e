// libFuzzer target for everything in the doctor that reads untrusted bytes: the ELF reader,
// the fatbin walker/searcher (ELF and raw), the ld.so.cache parser and the version parser.
// Built only with -DSTRATA_FUZZ=ON and clang; `ctest -R doctor_fuzz_smoke` runs it briefly.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "strata/doctor/elf.hpp"
#include "strata/doctor/fatbin.hpp"
#include "strata/doctor/loader.hpp"
#include "strata/doctor/version.hpp"

using namespace strata::doctor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  // Small limits so a hostile input shows its worst case within one run.
  FatbinScanOptions options;
  options.limits.max_containers = 64;
  options.limits.max_entries = 256;
  options.limits.max_scan_bytes = 1 << 20;
  if (auto elf = parse_elf(bytes)) {
    auto report = scan_elf_fatbins(bytes, *elf, options);
    (void)report.listing(ImageKind::sass, FatbinReport::Scope::all);
    (void)report.max_ptx_isa(FatbinReport::Scope::runnable);
    (void)cubin_sm(*elf);
  }
  (void)scan_raw_fatbin(bytes, options.limits);
  if (auto cache = parse_ld_so_cache(bytes, nullptr, 4096)) (void)cache->find("libcuda.so.1", kEmX86_64);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)Version::parse(text.substr(0, 64));
  (void)Version::find_in(text.substr(0, 4096));
  return 0;
}
