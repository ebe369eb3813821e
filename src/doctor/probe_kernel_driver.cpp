// Layer 2, kernel driver: the nvidia modules, their version, nouveau, Secure Boot, Xid errors in
// the kernel log, and whether we are inside WSL or a container (where the module is the host's).
#include <map>
#include <regex>
#include <set>

#include "probes.hpp"

namespace strata::doctor {

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string detect_container(const SystemView& sys) {
  if (sys.exists("/.dockerenv")) return "docker";
  if (sys.exists("/run/.containerenv")) return "podman";
  if (sys.env("KUBERNETES_SERVICE_HOST")) return "kubernetes";
  auto cg = sys.read_text("/proc/1/cgroup", 1 << 16).value_or("");
  if (cg.find("kubepods") != std::string::npos) return "kubernetes";
  if (cg.find("docker") != std::string::npos) return "docker";
  if (cg.find("libpod") != std::string::npos) return "podman";
  if (cg.find("containerd") != std::string::npos) return "containerd";
  return "";
}

// Looks for nvidia.ko[.xz|.zst|.gz] under /lib/modules/<release> (bounded walk).
std::vector<std::string> module_files(const SystemView& sys, const std::string& release) {
  std::vector<std::string> found;
  std::vector<std::pair<std::string, int>> stack = {{"/lib/modules/" + release, 0}};
  int visited = 0;
  while (!stack.empty() && visited < 4000 && found.size() < 8) {
    auto [dir, depth] = stack.back();
    stack.pop_back();
    for (const auto& e : sys.list_dir(dir, 4000)) {
      ++visited;
      if (e.is_dir && !e.is_symlink && depth < 6) stack.push_back({dir + "/" + e.name, depth + 1});
      else if (e.name == "nvidia.ko" || e.name.starts_with("nvidia.ko.")) found.push_back(dir + "/" + e.name);
    }
  }
  return found;
}

// A GPU newer than the driver: the first CUDA release that targets the GPU's compute capability
// sets the lowest driver that can run any code on it. The toolkit table starts at CUDA 10.0, so
// this is only judged for GPUs newer than that release's newest target (sm_75).
void check_driver_knows_gpus(ProbeContext& ctx, LayerReport& L) {
  const auto& archs = ctx.kb.toolkit_archs;
  const ToolkitArchRow* oldest = nullptr;
  for (const auto& t : archs)
    if (!oldest || t.first < oldest->first) oldest = &t;
  const Version& driver = *ctx.facts.kernel_driver;
  for (const auto& g : ctx.facts.gpus) {
    if (!g.sm() || !oldest || g.sm() <= oldest->max_sm) continue;
    const ToolkitArchRow* first = nullptr;
    for (const auto& t : archs)
      if (t.max_sm >= g.sm() && (!first || t.first < first->first)) first = &t;
    const DriverRequirement* r = first ? ctx.kb.requirement_for_cuda(first->first.prefix(2)) : nullptr;
    if (!r || r->toolkit_min <= driver) continue;
    const std::string cc = std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
    const std::string cuda = first->first.prefix(2).str();
    auto& fd = L.add(Verdict::fail, "Driver " + driver.str() + " is older than the " + (g.name.empty() ? g.pci_address : g.name) +
                                        " (compute capability " + cc + "): CUDA supports it from " + cuda +
                                        ", which needs driver >= " + r->toolkit_min.str());
    fd.evidence.push_back("first CUDA release targeting sm_" + std::to_string(g.sm()) + ": " + cuda + " (" + r->label + ")");
    fd.cause_id = "driver_too_old";
    fd.cause = "The driver predates the GPU's architecture: it cannot load code built for compute capability " + cc +
               ", so kernels fail with 'no kernel image is available' even in builds that include sm_" + std::to_string(g.sm()) + ".";
    fd.fixes = {"Upgrade the NVIDIA driver to >= " + r->toolkit_min.str() + " (" + r->label + ")",
                "then use a build for CUDA >= " + cuda + " that includes sm_" + std::to_string(g.sm())};
  }
}

}  // namespace

LayerReport probe_kernel_driver(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::driver;
  const SystemView& sys = ctx.sys;
  Facts& f = ctx.facts;
  f.container = detect_container(sys);

  std::set<std::string> modules;
  auto proc_modules = sys.read_text("/proc/modules", 1 << 20);
  if (proc_modules) {
    std::size_t i = 0;
    while (i < proc_modules->size()) {
      auto j = proc_modules->find('\n', i);
      if (j == std::string::npos) j = proc_modules->size();
      std::string line = proc_modules->substr(i, j - i);
      modules.insert(line.substr(0, line.find(' ')));
      i = j + 1;
    }
  } else {
    L.not_checked.push_back("/proc/modules is not readable (kernel without loadable modules, or a restricted /proc); "
                            "module state read from /sys/module instead");
    for (const char* m : {"nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nouveau"})
      if (sys.is_dir(std::string("/sys/module/") + m)) modules.insert(m);
  }
  f.nvidia_module_loaded = modules.count("nvidia") > 0;

  std::string version_text = sys.read_text("/proc/driver/nvidia/version", 4096).value_or("");
  std::smatch m;
  static const std::regex re("Kernel Module(?:\\s+for\\s+\\S+)?\\s+([0-9]+\\.[0-9]+(?:\\.[0-9]+)?)");
  if (std::regex_search(version_text, m, re)) f.kernel_driver = Version::parse(m[1].str());
  if (!f.kernel_driver)
    if (auto v = sys.read_text("/sys/module/nvidia/version", 64)) f.kernel_driver = Version::find_in(*v, 2);
  if (f.kernel_driver) f.nvidia_module_loaded = true;  // /proc/driver/nvidia exists only with the module in

  if (f.wsl) {
    auto& fd = L.add(Verdict::not_applicable, "WSL2: the kernel driver is the Windows host's NVIDIA driver");
    fd.evidence.push_back("no Linux nvidia module is needed or expected inside WSL");
    L.summary = "WSL2 (host driver)";
    return L;
  }
  if (!f.jetson.empty()) {
    // L4T's GPU driver (nvgpu) comes with the board's kernel; there is no nvidia.ko to load.
    auto& fd = L.add(Verdict::ok, "Jetson, L4T " + f.jetson + ": the GPU driver is part of the L4T kernel");
    fd.evidence.push_back("/etc/nv_tegra_release");
    if (modules.count("nvgpu")) fd.evidence.push_back("module loaded: nvgpu");
    L.summary = "L4T " + f.jetson;
    return L;
  }
  const bool have_gpu = !f.gpus.empty();
  if (f.nvidia_module_loaded) {
    auto& fd = L.add(Verdict::ok, "nvidia kernel module loaded" + (f.kernel_driver ? ", version " + f.kernel_driver->str() : ""));
    if (!version_text.empty()) fd.evidence.push_back("/proc/driver/nvidia/version: " + first_line(version_text));
    std::string loaded;
    for (const char* mod : {"nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm"})
      if (modules.count(mod)) loaded += std::string(loaded.empty() ? "" : ", ") + mod;
    if (!loaded.empty()) fd.evidence.push_back("modules loaded: " + loaded);
    if (proc_modules && !modules.count("nvidia_uvm")) {
      auto& w = L.add(Verdict::warn, "nvidia_uvm is not loaded; CUDA needs it (it normally loads on first use)");
      w.fixes = {"sudo modprobe nvidia-uvm", "or: sudo nvidia-modprobe -u -c=0"};
    }
    if (f.kernel_driver)
      if (const DriverRequirement* r = ctx.kb.max_cuda_for_driver(*f.kernel_driver)) {
        f.driver_max_cuda = r->cuda.prefix(2);
        L.findings.front().evidence.push_back("driver " + f.kernel_driver->str() + " supports CUDA up to " + r->cuda.prefix(2).str() +
                                              " (newest release whose minimum driver it meets: " + r->label + ")");
      }
    if (f.kernel_driver) check_driver_knows_gpus(ctx, L);
  } else if (!f.container.empty() && !have_gpu) {
    // The hardware layer already fails; say what this means here without a second failure.
    auto& fd = L.add(Verdict::not_applicable, "Inside a " + f.container + " container with no NVIDIA driver or GPU passed in");
    fd.evidence.push_back("/proc/driver/nvidia/version is absent; if the host has a GPU, start the container with --gpus all");
  } else if (!have_gpu) {
    auto& fd = L.add(Verdict::not_applicable, "No NVIDIA GPU, and no nvidia kernel module loaded");
    fd.evidence.push_back("/proc/driver/nvidia/version: absent");
  } else {
    auto& fd = L.add(Verdict::fail, "The NVIDIA kernel module is not loaded");
    fd.cause_id = "driver_not_loaded";
    if (const Cause* c = ctx.kb.cause("driver_not_loaded")) fd.cause = c->explanation;
    std::string release = sys.read_text("/proc/sys/kernel/osrelease", 256).value_or("");
    while (!release.empty() && release.back() == '\n') release.pop_back();
    if (!release.empty()) {
      auto files = module_files(sys, release);
      if (files.empty()) {
        fd.evidence.push_back("no nvidia.ko under /lib/modules/" + release + ": the module was not built for the running kernel");
        fd.cause = "The nvidia module was never built for the running kernel " + release +
                   " (a kernel update without DKMS, or DKMS failed for this kernel).";
        fd.fixes = {"sudo dkms autoinstall -k " + release + "   (or reinstall the driver package)", "sudo modprobe nvidia"};
      } else {
        fd.evidence.push_back("module file present: " + files.front());
        fd.fixes = {"sudo modprobe nvidia   (read the error it prints)"};
      }
    }
    auto sb = sys.read_text("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0800e5a0000", 16);
    if (sb && sb->size() >= 5 && (*sb)[4] == 1) {
      fd.evidence.push_back("Secure Boot is enabled: an unsigned nvidia module is refused by the kernel");
      fd.fixes.push_back("Sign the module with an enrolled MOK key (mokutil --import), or disable Secure Boot");
    }
    if (modules.count("nouveau")) {
      fd.evidence.push_back("nouveau (the open-source driver) is loaded and holds the GPU");
      fd.fixes.push_back("Blacklist nouveau (echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf), "
                         "then sudo update-initramfs -u and reboot");
    }
  }
  if (modules.count("nouveau") && f.nvidia_module_loaded) L.add(Verdict::warn, "nouveau is loaded next to nvidia");

  // Xid errors: the driver's reports of GPU faults in the kernel log.
  std::optional<std::string> log = sys.read_tail("/dev/kmsg", 1 << 20);
  std::string log_source = "/dev/kmsg";
  if (!log || log->empty()) {
    log = sys.read_tail("/var/log/kern.log", 1 << 20);
    log_source = "/var/log/kern.log";
  }
  if (!log) {
    L.not_checked.push_back("kernel log not readable (/dev/kmsg needs root or kernel.dmesg_restrict=0): Xid errors not checked");
  } else {
    std::map<int, int> xids;
    std::string last_line;
    static const std::regex xre("NVRM: Xid \\(PCI:([^)]*)\\): ([0-9]+)");
    for (std::sregex_iterator it(log->begin(), log->end(), xre), end; it != end; ++it) {
      ++xids[std::stoi((*it)[2].str())];
      last_line = it->str();
    }
    for (const auto& [code, count] : xids) {
      const XidCode* x = ctx.kb.xid(code);
      bool severe = x && x->layer == "hardware";
      auto& fd = L.add(severe ? Verdict::fail : Verdict::warn,
                       "Xid " + std::to_string(code) + " reported " + std::to_string(count) + " time(s): " +
                           (x ? x->meaning : std::string("see NVIDIA's Xid catalogue")) +
                           (x && x->uncertain ? " (meaning uncertain)" : ""));
      fd.evidence.push_back(log_source + ": " + last_line);
      if (x) fd.fixes.push_back(x->action);
      if (code == 79) {
        fd.cause_id = "gpu_fell_off_bus";
        if (const Cause* c = ctx.kb.cause(fd.cause_id)) {
          fd.cause = c->explanation;
          fd.fixes.insert(fd.fixes.end(), c->fixes.begin(), c->fixes.end());
        }
      }
    }
  }
  if (!f.container.empty())
    L.findings.back().evidence.push_back("running inside a " + f.container + " container: the module is the host's");
  L.summary = f.kernel_driver ? "nvidia " + f.kernel_driver->str() : f.nvidia_module_loaded ? "nvidia loaded" : "no nvidia module";
  return L;
}

}  // namespace strata::doctor
