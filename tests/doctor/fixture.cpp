// Fixture builders for the doctor tests (see fixture.hpp).
#include "fixture.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace strata::doctor::test {

namespace fs = std::filesystem;

namespace {

template <class T>
void put(std::vector<std::uint8_t>& b, std::size_t at, T v) {
  if (b.size() < at + sizeof(T)) b.resize(at + sizeof(T));
  std::memcpy(b.data() + at, &v, sizeof(T));
}

template <class T>
void append(std::vector<std::uint8_t>& b, T v) {
  put(b, b.size(), v);
}

std::uint32_t add_string(std::vector<std::uint8_t>& table, const std::string& s) {
  std::uint32_t off = std::uint32_t(table.size());
  table.insert(table.end(), s.begin(), s.end());
  table.push_back(0);
  return off;
}

void align(std::vector<std::uint8_t>& b, std::size_t a) {
  while (b.size() % a) b.push_back(0);
}

}  // namespace

std::vector<std::uint8_t> fatbin_container(const std::vector<FatEntry>& entries) {
  std::vector<std::uint8_t> body;
  for (const auto& e : entries) {
    std::size_t at = body.size();
    body.resize(at + e.header_size + e.payload, 0);
    put<std::uint16_t>(body, at + 0x00, e.kind);
    put<std::uint16_t>(body, at + 0x02, 0x0101);
    put<std::uint32_t>(body, at + 0x04, e.header_size);
    put<std::uint64_t>(body, at + 0x08, e.payload);
    put<std::uint16_t>(body, at + 0x18, e.minor);
    put<std::uint16_t>(body, at + 0x1a, e.major);
    put<std::uint32_t>(body, at + 0x1c, e.arch);
    put<std::uint64_t>(body, at + 0x28, e.flags);
    if (e.kind == 2 && e.payload >= 4) std::memcpy(body.data() + at + e.header_size, "\x7f" "ELF", 4);
  }
  std::vector<std::uint8_t> out(16 + body.size(), 0);
  put<std::uint32_t>(out, 0, 0xBA55ED50u);
  put<std::uint16_t>(out, 4, 1);
  put<std::uint16_t>(out, 6, 16);
  put<std::uint64_t>(out, 8, body.size());
  if (!body.empty()) std::memcpy(out.data() + 16, body.data(), body.size());
  return out;
}

std::vector<std::uint8_t> build_elf(const ElfSpec& spec) {
  // Layout: ELF header | .dynstr | .dynamic | user sections | .shstrtab | section headers.
  std::vector<std::uint8_t> f(64, 0);
  std::vector<std::uint8_t> dynstr(1, 0), shstr(1, 0);
  struct Sh { std::uint32_t name, type; std::uint64_t flags, off, size; std::uint32_t link; std::uint64_t entsize; };
  std::vector<Sh> shs = {{0, 0, 0, 0, 0, 0, 0}};
  std::vector<std::pair<std::int64_t, std::uint32_t>> dyn;
  for (const auto& n : spec.needed) dyn.push_back({1, add_string(dynstr, n)});
  if (!spec.soname.empty()) dyn.push_back({14, add_string(dynstr, spec.soname)});
  if (!spec.rpath.empty()) dyn.push_back({15, add_string(dynstr, spec.rpath)});
  if (!spec.runpath.empty()) dyn.push_back({29, add_string(dynstr, spec.runpath)});
  const std::size_t dynstr_index = shs.size();
  shs.push_back({add_string(shstr, ".dynstr"), 3, 2, f.size(), dynstr.size(), 0, 0});
  f.insert(f.end(), dynstr.begin(), dynstr.end());
  align(f, 8);
  std::vector<std::uint8_t> dynbytes;
  for (auto [tag, val] : dyn) {
    append<std::int64_t>(dynbytes, tag);
    append<std::uint64_t>(dynbytes, val);
  }
  append<std::int64_t>(dynbytes, 0);
  append<std::uint64_t>(dynbytes, 0);
  shs.push_back({add_string(shstr, ".dynamic"), 6, 3, f.size(), dynbytes.size(), std::uint32_t(dynstr_index), 16});
  f.insert(f.end(), dynbytes.begin(), dynbytes.end());
  for (const auto& s : spec.sections) {
    align(f, 8);
    shs.push_back({add_string(shstr, s.name), s.type, 2, f.size(), s.bytes.size(), 0, 0});
    if (s.type != 8) f.insert(f.end(), s.bytes.begin(), s.bytes.end());
  }
  const std::size_t shstr_index = shs.size();
  shs.push_back({add_string(shstr, ".shstrtab"), 3, 0, 0, 0, 0, 0});
  shs.back().off = f.size();
  shs.back().size = shstr.size();
  f.insert(f.end(), shstr.begin(), shstr.end());
  align(f, 8);
  const std::size_t shoff = f.size();
  for (const auto& s : shs) {
    std::size_t at = f.size();
    f.resize(at + 64, 0);
    put<std::uint32_t>(f, at, s.name);
    put<std::uint32_t>(f, at + 4, s.type);
    put<std::uint64_t>(f, at + 8, s.flags);
    put<std::uint64_t>(f, at + 24, s.off);
    put<std::uint64_t>(f, at + 32, s.size);
    put<std::uint32_t>(f, at + 40, s.link);
    put<std::uint64_t>(f, at + 56, s.entsize);
  }
  std::memcpy(f.data(), "\x7f" "ELF", 4);
  f[4] = spec.elf_class;
  f[5] = 1;
  f[6] = 1;
  put<std::uint16_t>(f, 16, 3);  // ET_DYN
  put<std::uint16_t>(f, 18, spec.machine);
  put<std::uint32_t>(f, 20, 1);
  put<std::uint64_t>(f, 40, shoff);
  put<std::uint16_t>(f, 52, 64);
  put<std::uint16_t>(f, 58, 64);
  put<std::uint16_t>(f, 60, std::uint16_t(shs.size()));
  put<std::uint16_t>(f, 62, std::uint16_t(shstr_index));
  return f;
}

std::vector<std::uint8_t> build_ld_cache(const std::vector<std::pair<std::string, std::string>>& entries, std::int32_t flags) {
  std::vector<std::uint8_t> out;
  const char magic[] = "glibc-ld.so.cache1.1";
  out.insert(out.end(), magic, magic + 20);
  append<std::uint32_t>(out, std::uint32_t(entries.size()));
  append<std::uint32_t>(out, 0);  // string table length, filled below
  out.resize(48, 0);
  const std::size_t strings = 48 + entries.size() * 24;
  std::vector<std::uint8_t> table;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::size_t at = 48 + i * 24;
    put<std::int32_t>(out, at, flags);
    put<std::uint32_t>(out, at + 4, std::uint32_t(strings + table.size()));
    table.insert(table.end(), entries[i].first.begin(), entries[i].first.end());
    table.push_back(0);
    put<std::uint32_t>(out, at + 8, std::uint32_t(strings + table.size()));
    table.insert(table.end(), entries[i].second.begin(), entries[i].second.end());
    table.push_back(0);
    put<std::uint32_t>(out, at + 12, 0);
    put<std::uint64_t>(out, at + 16, 0);
  }
  out.resize(strings);
  out.insert(out.end(), table.begin(), table.end());
  put<std::uint32_t>(out, 24, std::uint32_t(table.size()));
  return out;
}

FixtureTree::FixtureTree() {
  char tmpl[] = "/tmp/strata-doctor-fixture-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  root_ = tmpl;
}

FixtureTree::~FixtureTree() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void FixtureTree::mkdir(const std::string& path) { fs::create_directories(root_ + path); }

void FixtureTree::write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(root_ + path).parent_path());
  std::ofstream(root_ + path, std::ios::binary) << text;
}

void FixtureTree::write(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(fs::path(root_ + path).parent_path());
  std::ofstream o(root_ + path, std::ios::binary);
  o.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void FixtureTree::symlink(const std::string& target, const std::string& link) {
  fs::create_directories(fs::path(root_ + link).parent_path());
  fs::create_symlink(target, root_ + link);
}

void FixtureTree::copy_from_host(const std::string& host_file, const std::string& path) {
  fs::create_directories(fs::path(root_ + path).parent_path());
  fs::copy_file(host_file, root_ + path, fs::copy_options::overwrite_existing);
}

void FixtureTree::library(const std::string& path, ElfSpec spec) {
  if (spec.soname.empty()) spec.soname = path.substr(path.rfind('/') + 1);
  write(path, build_elf(spec));
}

void FixtureTree::ld_cache(const std::vector<std::pair<std::string, std::string>>& entries) {
  cache_entries_ = entries;
  write("/etc/ld.so.cache", build_ld_cache(entries));
}

void FixtureTree::cache_add(const std::string& soname, const std::string& path) {
  cache_entries_.emplace_back(soname, path);
  write("/etc/ld.so.cache", build_ld_cache(cache_entries_));
}

void FixtureTree::pci_gpu(const std::string& address, unsigned device_id) {
  char id[16];
  std::snprintf(id, sizeof id, "0x%04x\n", device_id);
  write("/sys/bus/pci/devices/" + address + "/vendor", std::string("0x10de\n"));
  write("/sys/bus/pci/devices/" + address + "/device", std::string(id));
  write("/sys/bus/pci/devices/" + address + "/class", std::string("0x030200\n"));
}

void FixtureTree::pci_other(const std::string& address) {
  write("/sys/bus/pci/devices/" + address + "/vendor", std::string("0x8086\n"));
  write("/sys/bus/pci/devices/" + address + "/device", std::string("0x1237\n"));
  write("/sys/bus/pci/devices/" + address + "/class", std::string("0x060000\n"));
}

void FixtureTree::nvidia_driver(const std::string& version, const std::string& gpu_address, const std::string& model) {
  write("/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + version + "  Release Build  (dvs-builder@U22)\n"
        "GCC version:  gcc version 12.3.0\n");
  write("/proc/driver/nvidia/gpus/" + gpu_address + "/information",
        "Model: \t\t " + model + "\nIRQ:   \t\t 42\nBus Location: \t " + gpu_address + "\n");
  write("/proc/modules", std::string("nvidia_uvm 1 0 - Live 0x0\nnvidia_drm 1 0 - Live 0x0\nnvidia_modeset 1 1 nvidia_drm, Live 0x0\n"
                                     "nvidia 1 2 nvidia_uvm,nvidia_modeset, Live 0x0\next4 1 1 - Live 0x0\n"));
}

void FixtureTree::kernel_release(const std::string& release) {
  write("/proc/sys/kernel/osrelease", release + "\n");
  write("/proc/version", "Linux version " + release + " (builder@host) #1 SMP\n");
}

SystemView FixtureTree::view(SystemView::Env env) const {
  if (!env.count("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return SystemView(root_, std::move(env));
}

void healthy_machine(FixtureTree& t, const MachineSpec& m) {
  t.kernel_release(m.kernel);
  t.pci_other("0000:00:00.0");
  for (int i = 0; i < m.gpus; ++i) {
    char address[32];
    std::snprintf(address, sizeof address, "0000:%02x:00.0", i + 1);
    t.pci_gpu(address, m.device_id);
    t.nvidia_driver(m.module.empty() ? m.driver : m.module, address, m.model);
  }
  t.write("/dev/kmsg", std::string("6,1,0,-;Linux version " + m.kernel + "\n"));
  t.copy_from_host(STRATA_FAKE_LIBCUDA, "/usr/lib/x86_64-linux-gnu/libcuda.so." + m.driver);
  t.symlink("libcuda.so." + m.driver, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  t.cache_add("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  if (!m.cuda.empty()) cuda_toolkit(t, m.cuda, m.toolkit);
}

MachineSpec machine(const std::string& driver, const std::string& model, unsigned device_id, const std::string& cuda,
                    const std::string& toolkit) {
  MachineSpec m;
  m.driver = driver;
  m.model = model;
  m.device_id = device_id;
  m.cuda = cuda;
  m.toolkit = toolkit;
  return m;
}

void replace_driver(FixtureTree& t, const std::string& driver, const std::string& model) {
  t.nvidia_driver(driver, "0000:01:00.0", model);
  t.copy_from_host(STRATA_FAKE_LIBCUDA, "/usr/lib/x86_64-linux-gnu/libcuda.so." + driver);
  fs::remove(t.root() + "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  t.symlink("libcuda.so." + driver, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
}

std::string cudart_soname(const std::string& cuda) {
  const auto dot = cuda.find('.');
  const std::string major = cuda.substr(0, dot);
  if (major == "11") return "libcudart.so.11.0";
  if (std::stoi(major) >= 12) return "libcudart.so." + major;
  return "libcudart.so." + cuda.substr(0, cuda.find('.', dot + 1));  // 10.x: major.minor
}

void cuda_toolkit(FixtureTree& t, const std::string& cuda, const std::string& toolkit, bool default_link) {
  const auto dot = cuda.find('.');
  const std::string mm = cuda.substr(0, cuda.find('.', dot + 1));
  const std::string root = "/usr/local/cuda-" + mm, soname = cudart_soname(cuda);
  t.library(root + "/lib64/libcudart.so." + cuda, {62, 2, soname, {}, "", "", {}});
  t.symlink("libcudart.so." + cuda, root + "/lib64/" + soname);
  if (!toolkit.empty())
    t.write(root + "/version.json", R"({"cuda": {"name": "CUDA SDK", "version": ")" + toolkit + R"("}})");
  if (default_link) t.symlink(root, "/usr/local/cuda");
  t.cache_add(soname, root + "/lib64/" + soname);
}

void gpu_compute_libraries(FixtureTree& t, const std::string& cuda, const std::string& cublas) {
  const std::string lib = "/usr/local/cuda-" + cuda.substr(0, cuda.find('.', cuda.find('.') + 1)) + "/lib64/";
  t.copy_from_host(STRATA_FAKE_LIBCUDART, lib + "libcudart.so." + cuda);
  t.copy_from_host(STRATA_FAKE_LIBCUBLAS, lib + "libcublas.so." + cublas);
  t.symlink("libcublas.so." + cublas, lib + "libcublas.so.13");
  t.cache_add("libcublas.so.13", lib + "libcublas.so.13");
}

void container(FixtureTree& t, const std::string& driver, const std::string& model, unsigned device_id, bool injected) {
  t.write("/.dockerenv", std::string(""));
  t.kernel_release("5.15.0-91-generic");
  t.pci_gpu("0000:01:00.0", device_id);
  t.nvidia_driver(driver, "0000:01:00.0", model);  // /proc is the host kernel's
  if (!injected) return;
  t.copy_from_host(STRATA_FAKE_LIBCUDA, "/usr/lib/x86_64-linux-gnu/libcuda.so." + driver);
  t.symlink("libcuda.so." + driver, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  t.cache_add("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
}

std::string python(FixtureTree& t, const std::string& prefix, const std::string& ver, const std::string& probe_json,
                   const std::string& site) {
  const std::string exe = prefix + "/bin/python3";
  t.write(exe, probe_json.empty() ? std::string("#!/bin/sh\nexit 1\n") : "#!/bin/sh\necho '" + probe_json + "'\n");
  fs::permissions(t.root() + exe, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  const std::string dir = prefix + "/lib/python" + ver + "/" + site;
  t.mkdir(dir);
  return dir;
}

void dist_info(FixtureTree& t, const std::string& site, const std::string& name, const std::string& version) {
  t.write(site + "/" + name + "-" + version + ".dist-info/METADATA", "Name: " + name + "\nVersion: " + version + "\n");
}

std::vector<FatEntry> kernels(const std::vector<unsigned>& sass, const std::vector<std::pair<unsigned, std::pair<int, int>>>& ptx) {
  std::vector<FatEntry> out;
  for (unsigned a : sass) out.push_back({2, a, 0x11, 1, 8, 64, 64});
  for (const auto& [a, isa] : ptx)
    out.push_back({1, a, 0x11, std::uint16_t(isa.first), std::uint16_t(isa.second), 64, 64});
  return out;
}

void kernel_library(FixtureTree& t, const std::string& path, const std::vector<FatEntry>& entries) {
  ElfSpec spec;
  spec.sections.push_back({".nv_fatbin", 1, fatbin_container(entries)});
  t.library(path, spec);
}

void torch_install(FixtureTree& t, const std::string& site, const std::string& version, const std::string& cuda,
                   const std::vector<FatEntry>& entries) {
  t.write(site + "/torch/version.py", "__version__ = '" + version + "'\ndebug = False\ncuda: Optional[str] = " +
                                          (cuda.empty() ? std::string("None") : "'" + cuda + "'") + "\n");
  if (!entries.empty()) kernel_library(t, site + "/torch/lib/libtorch_cuda.so", entries);
}

}  // namespace strata::doctor::test
