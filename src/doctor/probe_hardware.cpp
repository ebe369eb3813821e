// Layer 1, hardware: NVIDIA PCI functions from sysfs, the GPUs the driver lists, and each GPU's
// compute capability (from the model table; the driver API later overrides it).
#include <cstdio>
#include <regex>

#include "probes.hpp"

namespace strata::doctor {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

unsigned parse_hex(const std::string& s) { return unsigned(std::strtoul(s.c_str(), nullptr, 16)); }

// Name of NVIDIA device `id` from a pci.ids database, when one is installed.
std::string pci_ids_name(const SystemView& sys, unsigned id) {
  for (const char* path : {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids"}) {
    auto text = sys.read_text(path, 8 << 20);
    if (!text) continue;
    auto vendor = text->find("\n10de  ");
    if (vendor == std::string::npos) return "";
    char key[16];
    std::snprintf(key, sizeof key, "\n\t%04x  ", id);
    auto end = text->find("\n1", vendor + 1);  // next vendor block ("10df ...")
    auto pos = text->find(key, vendor);
    if (pos == std::string::npos || (end != std::string::npos && pos > end)) return "";
    auto eol = text->find('\n', pos + 1);
    return text->substr(pos + 8, eol - pos - 8);
  }
  return "";
}

}  // namespace

LayerReport probe_hardware(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::hardware;
  const SystemView& sys = ctx.sys;
  Facts& f = ctx.facts;

  auto osrelease = sys.read_text("/proc/sys/kernel/osrelease", 256).value_or("");
  auto procversion = sys.read_text("/proc/version", 1024).value_or("");
  f.wsl = osrelease.find("microsoft") != std::string::npos || osrelease.find("WSL") != std::string::npos ||
          procversion.find("microsoft") != std::string::npos || procversion.find("Microsoft") != std::string::npos;

  int pci_total = 0, nvswitches = 0;
  const bool pci_readable = sys.is_dir("/sys/bus/pci/devices");
  for (const auto& e : sys.list_dir("/sys/bus/pci/devices", 4096)) {
    ++pci_total;
    std::string dir = "/sys/bus/pci/devices/" + e.name;
    std::string vendor = trim(sys.read_text(dir + "/vendor", 64).value_or(""));
    if (vendor != "0x10de") continue;
    unsigned cls = parse_hex(trim(sys.read_text(dir + "/class", 64).value_or("0")));
    if ((cls >> 16) == 0x06) {  // bridge class: NVSwitch
      ++nvswitches;
      continue;
    }
    if ((cls >> 16) != 0x03) continue;  // display controllers (VGA 0x0300, 3D 0x0302)
    GpuFact g;
    g.pci_address = e.name;
    g.device_id = parse_hex(trim(sys.read_text(dir + "/device", 64).value_or("0")));
    f.gpus.push_back(g);
  }
  // The driver's own list (present when the module is loaded): model names.
  for (const auto& e : sys.list_dir("/proc/driver/nvidia/gpus", 256)) {
    auto info = sys.read_text("/proc/driver/nvidia/gpus/" + e.name + "/information", 1 << 16).value_or("");
    std::smatch m;
    std::string model;
    if (std::regex_search(info, m, std::regex("Model:\\s*([^\\n]+)"))) model = trim(m[1].str());
    GpuFact* g = nullptr;
    for (auto& x : f.gpus)
      if (x.pci_address == e.name) g = &x;
    if (!g) {
      f.gpus.push_back(GpuFact{e.name, 0, "", 0, 0, ""});
      g = &f.gpus.back();
    }
    if (!model.empty()) g->name = model;
  }
  // Jetson: the GPU is part of the Tegra SoC, not a PCI device; L4T names the board and release.
  auto tegra = sys.read_text("/etc/nv_tegra_release", 4096);
  auto compatible = sys.read_text("/proc/device-tree/compatible", 4096).value_or("");
  if (f.gpus.empty() && !f.wsl && (tegra || compatible.find("nvidia,tegra") != std::string::npos)) {
    std::smatch m;
    const std::string rel = tegra.value_or("");
    if (std::regex_search(rel, m, std::regex("R([0-9]+) \\(release\\), REVISION: ([0-9.]+)")))
      f.jetson = "R" + m[1].str() + "." + m[2].str();
    else
      f.jetson = "L4T (release unknown)";
    std::string model = sys.read_text("/proc/device-tree/model", 256).value_or("");
    model = trim(model.substr(0, model.find('\0')));
    f.gpus.push_back(GpuFact{"integrated", 0, model.empty() ? "NVIDIA Jetson" : model, 0, 0, ""});
  }
  for (auto& g : f.gpus) {
    if (g.name.empty() && g.device_id) {
      std::string n = pci_ids_name(sys, g.device_id);
      if (!n.empty()) g.name = n;
    }
    if (const GpuModel* m = ctx.kb.gpu_in_text(g.name); m && !g.name.empty()) {
      g.cc_major = m->cc_major;
      g.cc_minor = m->cc_minor;
      g.cc_source = std::string("model table (") + m->name + (m->uncertain ? ", uncertain" : "") + ")";
    }
  }

  if (f.wsl) {
    auto& fd = L.add(sys.exists("/dev/dxg") ? Verdict::ok : Verdict::warn,
                     sys.exists("/dev/dxg") ? "WSL2: the GPU is paravirtualised through /dev/dxg (no PCI device is visible)"
                                            : "WSL2 without /dev/dxg: GPU paravirtualisation is not available");
    fd.evidence.push_back("/proc/version: " + trim(procversion.substr(0, 120)));
    if (!sys.exists("/dev/dxg")) {
      fd.cause_id = "wsl_libcuda";
      fd.fixes = {"Update Windows (WSL2 GPU support needs Windows 10 21H2+ or Windows 11) and the Windows NVIDIA driver",
                  "wsl --update"};
    }
  } else if (f.gpus.empty()) {
    auto& fd = L.add(Verdict::fail, "No NVIDIA GPU is visible to this system");
    fd.cause_id = "no_gpu_visible";
    if (pci_readable)
      fd.evidence.push_back(std::to_string(pci_total) + " PCI functions in /sys/bus/pci/devices, none with vendor 0x10de");
    else
      fd.evidence.push_back("/sys/bus/pci/devices is not readable");
    if (const Cause* c = ctx.kb.cause("no_gpu_visible")) {
      fd.cause = c->explanation;
      fd.fixes = c->fixes;
    }
  } else {
    for (const auto& g : f.gpus) {
      char id[16];
      std::snprintf(id, sizeof id, "%04x", g.device_id);
      std::string line = g.pci_address + ": " + (g.name.empty() ? "NVIDIA device 0x" + std::string(id) : g.name);
      if (g.sm()) line += ", compute capability " + std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
      auto& fd = L.add(Verdict::ok, line);
      if (!g.cc_source.empty()) fd.evidence.push_back("compute capability from " + g.cc_source);
      if (g.name.empty())
        fd.evidence.push_back("model name unknown: driver not loaded and no pci.ids database (install pciutils/hwdata)");
      if (!f.jetson.empty()) fd.evidence.push_back("Jetson integrated GPU (/proc/device-tree/model), L4T " + f.jetson);
    }
    if (nvswitches) L.findings.back().evidence.push_back(std::to_string(nvswitches) + " NVSwitch device(s) present");
  }
  f.nvswitches = nvswitches;
  L.summary = f.wsl ? "WSL2 GPU paravirtualisation"
              : f.gpus.empty() ? "no NVIDIA GPU"
                               : std::to_string(f.gpus.size()) + " NVIDIA GPU(s)";
  return L;
}

}  // namespace strata::doctor
