// Test support: build fixture system trees (fake /proc, /sys, /etc/ld.so.cache, library dirs)
// and synthetic ELF files carrying sonames, RUNPATHs and fatbins, all generated in code.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "strata/doctor/system_view.hpp"

namespace strata::doctor::test {

// One fatbin entry as nvcc writes it (header fields only; the payload is filler).
struct FatEntry {
  std::uint16_t kind = 2;  // 1 PTX, 2 ELF, 8 LTO-IR
  std::uint32_t arch = 80;
  std::uint64_t flags = 0x11;
  std::uint16_t major = 1, minor = 8;
  std::uint32_t header_size = 64;
  std::uint32_t payload = 64;  // bytes, padded to 8
};
// A container: 16-byte header + entries.
std::vector<std::uint8_t> fatbin_container(const std::vector<FatEntry>& entries);

struct ElfSpec {
  std::uint16_t machine = 62;  // x86-64
  std::uint8_t elf_class = 2;  // 2 = 64-bit
  std::string soname;
  std::vector<std::string> needed;
  std::string rpath, runpath;  // empty = absent
  struct Section {
    std::string name;
    std::uint32_t type = 1;  // PROGBITS
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Section> sections;
};
std::vector<std::uint8_t> build_elf(const ElfSpec& spec);

// ld.so.cache in the glibc 1.1 format with x86-64 entries.
std::vector<std::uint8_t> build_ld_cache(const std::vector<std::pair<std::string, std::string>>& entries);

// A temporary directory standing for "/", removed at destruction.
class FixtureTree {
 public:
  FixtureTree();
  ~FixtureTree();
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;

  const std::string& root() const { return root_; }
  void write(const std::string& path, const std::string& text);
  void write(const std::string& path, const std::vector<std::uint8_t>& bytes);
  void symlink(const std::string& target, const std::string& link);
  void mkdir(const std::string& path);
  void copy_from_host(const std::string& host_file, const std::string& path);
  // A small shared object at `path` with the given soname (and optional fatbin sections).
  void library(const std::string& path, ElfSpec spec = {});
  void ld_cache(const std::vector<std::pair<std::string, std::string>>& entries);

  // Common scenery.
  void pci_gpu(const std::string& address, unsigned device_id);
  void pci_other(const std::string& address);
  void nvidia_driver(const std::string& version, const std::string& gpu_address, const std::string& model);
  void kernel_release(const std::string& release);

  SystemView view(SystemView::Env env = {}) const;

 private:
  std::string root_;
};

}  // namespace strata::doctor::test
