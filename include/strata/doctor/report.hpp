// What a diagnosis produces: one verdict per layer with its findings and evidence, ordered
// bottom-up, plus the facts the probes established (GPUs, driver, runtimes ...).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/doctor/fatbin.hpp"
#include "strata/doctor/version.hpp"

namespace strata::doctor {

enum class Layer { hardware, driver, driver_userspace, runtime, library, framework, kernel_image, compute };
enum class Verdict { ok, warn, fail, not_applicable };

const char* layer_name(Layer l);   // "hardware", "driver", "driver-userspace", ..., "kernel-image", "compute"
const char* layer_title(Layer l);  // "Hardware", "Kernel driver", ...
// The inverse of layer_name ("driver-userspace" -> Layer::driver_userspace); nullopt for names
// that are not a layer of the stack (causes.tsv's "resource" and "other").
std::optional<Layer> layer_from_name(std::string_view name);
const char* verdict_name(Verdict v);  // "ok", "warn", "fail", "n/a"
// fail > warn > ok > not_applicable
Verdict worse(Verdict a, Verdict b);

struct Finding {
  Verdict verdict = Verdict::ok;
  std::string summary;                // one sentence
  std::vector<std::string> evidence;  // what was read, where
  std::string cause_id;               // a cause in causes.tsv, when one applies
  std::string cause;                  // root cause in words
  std::vector<std::string> fixes;     // commands / steps
};

struct LayerReport {
  Layer layer = Layer::hardware;
  Verdict verdict = Verdict::not_applicable;
  std::string summary;
  std::vector<Finding> findings;
  std::vector<std::string> not_checked;  // "what could not be checked, and why"
  double seconds = 0;

  Finding& add(Verdict v, std::string summary_text);
};

struct GpuFact {
  std::string pci_address;     // "0000:01:00.0"
  unsigned device_id = 0;      // PCI device id
  std::string name;            // from the driver, pci.ids, or the driver API
  int cc_major = 0, cc_minor = 0;
  std::string cc_source;       // "driver API", "model table", ...
  int sm() const { return cc_major * 10 + cc_minor; }
};

struct DriverApiResult {
  bool ran = false;            // a child process was started
  bool timed_out = false;
  std::string error;           // dlopen / spawn problem
  int init_result = -1;        // cuInit return code
  int driver_version = 0;      // cuDriverGetVersion: 13000 = CUDA 13.0
  int device_count = 0;
  struct Device {
    std::string name;
    int cc_major = 0, cc_minor = 0, sms = 0, clock_khz = 0, mem_clock_khz = 0, bus_width = 0;
    unsigned long long memory = 0;
  };
  std::vector<Device> devices;
};

struct LibraryCopy {
  std::string name;     // soname, e.g. libcudart.so.12
  std::string path;     // as found
  std::string real_path;
  std::optional<Version> version;
  std::string version_source;
  bool wins = false;    // what a plain dlopen would load
};

struct FrameworkInfo {
  std::string python;          // interpreter path
  std::string package;         // "torch", "jax", "cupy"
  std::string version;
  std::string cuda;            // torch.version.cuda ("" = CPU-only build)
  std::string cudnn;
  std::vector<std::string> arch_list;
  bool available = false;
  std::string unavailable_reason;
  int device_count = 0;
  std::vector<std::string> nvidia_wheels;
  std::string lib_dir;         // where its CUDA libraries live (for the kernel-image scan)
};

struct Facts {
  std::vector<GpuFact> gpus;
  bool wsl = false;
  std::string jetson;      // Jetson (integrated GPU, L4T): the L4T release, "R35.4.1"; "" elsewhere
  int nvswitches = 0;      // NVSwitch PCI functions (HGX systems need Fabric Manager)
  std::string container;  // "docker", "podman", "kubernetes", "" when not in one
  bool nvidia_module_loaded = false;
  std::optional<Version> kernel_driver;      // loaded module version
  std::optional<std::string> libcuda_path;   // what ld.so would load
  std::optional<Version> libcuda_version;
  std::optional<Version> driver_max_cuda;    // from the table (or the driver API)
  DriverApiResult driver_api;
  std::vector<LibraryCopy> runtimes;         // libcudart copies
  std::optional<Version> toolkit_version;    // /usr/local/cuda (or CUDA_HOME)
  std::string toolkit_path;
  std::vector<LibraryCopy> libraries;        // cuBLAS, cuDNN, NCCL, nvJitLink copies
  std::vector<FrameworkInfo> frameworks;
  std::vector<std::string> pythons;
};

struct Report {
  std::vector<LayerReport> layers;  // bottom-up
  Facts facts;
  double seconds = 0;

  // The lowest layer whose verdict is fail (else the lowest with warn), or nullptr.
  const LayerReport* first_problem() const;
  // The finding stated at the top of the report: first_problem()'s first fail (else warn) finding.
  const Finding* first_problem_finding() const;
  // 0 healthy, 1 problems found (a fail anywhere).
  int exit_code() const;
};

}  // namespace strata::doctor
