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

// ld.so.cache in the glibc 1.1 format; entry flags 0x0303 are x86-64 (aarch64: 0x0a03).
std::vector<std::uint8_t> build_ld_cache(const std::vector<std::pair<std::string, std::string>>& entries,
                                         std::int32_t flags = 0x0303);

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
  // Adds one entry to the entries ld_cache() last wrote (or to none) and rewrites the cache.
  void cache_add(const std::string& soname, const std::string& path);

  // Common scenery.
  void pci_gpu(const std::string& address, unsigned device_id);
  void pci_other(const std::string& address);
  void nvidia_driver(const std::string& version, const std::string& gpu_address, const std::string& model);
  void kernel_release(const std::string& release);

  SystemView view(SystemView::Env env = {}) const;

 private:
  std::string root_;
  std::vector<std::pair<std::string, std::string>> cache_entries_;
};

// ---- Whole machines, shared by the scenario and failure-machine tests -----------------------

// A working bare-metal machine: one GPU (or `gpus` of them) with the nvidia module `module`
// loaded, the driver's libcuda (a copy of the fake libcuda, so the driver-API child can load
// it) of version `driver`, and unless `cuda` is empty a toolkit in /usr/local/cuda-<major.minor>
// whose libcudart has version `cuda`. A `module` different from `driver` is a driver upgraded
// under a running module.
struct MachineSpec {
  std::string driver = "580.65.06";
  std::string module;  // empty: same as driver
  std::string model = "NVIDIA H100 80GB HBM3";
  unsigned device_id = 0x2330;
  int gpus = 1;
  std::string cuda = "13.0.96";
  std::string toolkit = "13.0.2";
  std::string kernel = "6.8.0-45-generic";
};
void healthy_machine(FixtureTree& t, const MachineSpec& m = {});
// The spec of a machine with that driver, GPU and CUDA (other fields as in MachineSpec).
MachineSpec machine(const std::string& driver, const std::string& model = "NVIDIA H100 80GB HBM3", unsigned device_id = 0x2330,
                    const std::string& cuda = "13.0.96", const std::string& toolkit = "");
// Replaces the loaded module and the libcuda that goes with it.
void replace_driver(FixtureTree& t, const std::string& driver, const std::string& model = "NVIDIA H100 80GB HBM3");
// libcudart's soname for a CUDA version: 12.4.127 -> libcudart.so.12, 11.8.89 -> libcudart.so.11.0,
// 10.1.243 -> libcudart.so.10.1.
std::string cudart_soname(const std::string& cuda);
// A CUDA toolkit's runtime at /usr/local/cuda-<major.minor>/lib64 (registered in ld.so.cache),
// with version.json `toolkit` when given; `default_link` makes it /usr/local/cuda.
void cuda_toolkit(FixtureTree& t, const std::string& cuda, const std::string& toolkit = "", bool default_link = true);
// Makes the CUDA 13 toolkit of `cuda_toolkit(t, "13.x...")` computable by the GPU-compute
// child: its libcudart becomes a copy of the fake runtime (tests/doctor/fake_libcudart.c) and a
// fake cuBLAS (fake_libcublas.c) is installed next to it as libcublas.so.13, in ld.so.cache.
// Their behaviour is scripted by FAKE_CUDART_* / FAKE_CUBLAS_* / FAKE_GPU_HANG in the view's
// environment, which the child inherits.
void gpu_compute_libraries(FixtureTree& t, const std::string& cuda = "13.0.96", const std::string& cublas = "13.0.0.19");
// A container: /.dockerenv, the host's module visible in /proc and, when `injected`, the host
// driver's libcuda as the NVIDIA container runtime mounts it.
void container(FixtureTree& t, const std::string& driver, const std::string& model, unsigned device_id, bool injected);
// A Python whose site-packages is returned: <prefix>/bin/python3 (a script that prints
// `probe_json` when given, else fails) and <prefix>/lib/python<ver>/<site>.
std::string python(FixtureTree& t, const std::string& prefix, const std::string& ver = "3.11",
                   const std::string& probe_json = "", const std::string& site = "site-packages");
// A pip distribution's metadata directory: "onnxruntime_gpu", "1.17.0".
void dist_info(FixtureTree& t, const std::string& site, const std::string& name, const std::string& version);
// One fatbin entry per SASS architecture and one PTX entry per (arch, ISA major.minor).
std::vector<FatEntry> kernels(const std::vector<unsigned>& sass, const std::vector<std::pair<unsigned, std::pair<int, int>>>& ptx = {});
// A shared object at `path` carrying those kernels in .nv_fatbin.
void kernel_library(FixtureTree& t, const std::string& path, const std::vector<FatEntry>& entries);
// PyTorch from files: torch/version.py (`cuda` empty: a CPU build) and, when `entries` is not
// empty, torch/lib/libtorch_cuda.so with those kernels.
void torch_install(FixtureTree& t, const std::string& site, const std::string& version, const std::string& cuda,
                   const std::vector<FatEntry>& entries = {});

}  // namespace strata::doctor::test
