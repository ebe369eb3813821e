// Layer 3, driver user space: which libcuda.so.1 ld.so would load and its version, its match
// with the kernel module, the stub and WSL traps, Fabric Manager on NVSwitch systems, and the
// driver API itself, queried in a child process with a deadline.
#include <regex>
#include <sstream>

#include "probes.hpp"
#include "strata/doctor/child_process.hpp"

namespace strata::doctor {

namespace {

DriverApiResult parse_driver_api(const std::string& out) {
  DriverApiResult r;
  std::istringstream is(out);
  DriverApiResult::Device* dev = nullptr;
  for (std::string line; std::getline(is, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    long n = std::strtol(v.c_str(), nullptr, 10);
    if (k == "error") r.error = v;
    else if (k == "cuInit") r.init_result = int(n);
    else if (k == "driver_version") r.driver_version = int(n);
    else if (k == "device_count") r.device_count = int(n);
    else if (k == "device") {
      r.devices.emplace_back();
      dev = &r.devices.back();
    } else if (dev) {
      if (k == "name") dev->name = v;
      else if (k == "cc_major") dev->cc_major = int(n);
      else if (k == "cc_minor") dev->cc_minor = int(n);
      else if (k == "sms") dev->sms = int(n);
      else if (k == "clock_khz") dev->clock_khz = int(n);
      else if (k == "mem_clock_khz") dev->mem_clock_khz = int(n);
      else if (k == "bus_width") dev->bus_width = int(n);
      else if (k == "memory") dev->memory = std::strtoull(v.c_str(), nullptr, 10);
    }
  }
  return r;
}

std::string cuda_version_from_int(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

void apply_cause(const KnowledgeBase& kb, Finding& fd, const char* id) {
  fd.cause_id = id;
  if (const Cause* c = kb.cause(id)) {
    if (fd.cause.empty()) fd.cause = c->explanation;
    if (fd.fixes.empty()) fd.fixes = c->fixes;
  }
}

}  // namespace

LayerReport probe_driver_userspace(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::driver_userspace;
  Facts& f = ctx.facts;
  const bool have_gpu = !f.gpus.empty() || f.wsl;

  Resolution res = ctx.loader.resolve("libcuda.so.1");
  if (!res.path) {
    if (!have_gpu) {
      auto& fd = L.add(Verdict::not_applicable, "libcuda.so.1 (the driver's user-space library) is not installed; no GPU to use it");
      fd.evidence.push_back(res.summary());
    } else {
      auto& fd = L.add(Verdict::fail, "libcuda.so.1 cannot be found by the loader");
      fd.evidence.push_back(res.summary());
      for (const auto& s : res.steps)
        if (s.result != "absent") fd.evidence.push_back("  " + s.source + ": " + s.dir + " (" + s.result + ")");
      apply_cause(ctx.kb, fd, f.wsl ? "wsl_libcuda" : !f.container.empty() ? "container_without_gpu" : "libcuda_missing");
    }
    L.not_checked.push_back("driver API not queried: libcuda.so.1 not found");
    L.summary = "no libcuda";
    return L;
  }
  std::string real = ctx.sys.canonical(*res.path).value_or(*res.path);
  f.libcuda_path = real;
  // Jetson's libcuda.so.1.1 carries no driver version in its name.
  if (auto v = library_version(ctx.sys, real, "libcuda"); v && f.jetson.empty()) f.libcuda_version = v->version;

  const bool stub = real.find("/stubs/") != std::string::npos;
  if (stub) {
    auto& fd = L.add(Verdict::fail, "The loader picks the CUDA toolkit's link-time stub libcuda: " + real);
    fd.evidence.push_back(res.summary());
    apply_cause(ctx.kb, fd, "stub_libcuda");
  } else if (f.wsl && real.find("/usr/lib/wsl/") != 0 && ctx.sys.exists("/usr/lib/wsl/lib/libcuda.so.1")) {
    auto& fd = L.add(Verdict::fail, "WSL2: a Linux libcuda shadows the WSL driver library /usr/lib/wsl/lib/libcuda.so.1");
    fd.evidence.push_back(res.summary());
    apply_cause(ctx.kb, fd, "wsl_libcuda");
  } else {
    auto& fd = L.add(Verdict::ok, "libcuda.so.1 -> " + real + (f.libcuda_version ? " (" + f.libcuda_version->str() + ")" : ""));
    fd.evidence.push_back(res.summary());
  }
  if (f.libcuda_version && f.kernel_driver && !stub && !(*f.libcuda_version == *f.kernel_driver)) {
    auto& fd = L.add(Verdict::fail, "Driver/library version mismatch: libcuda " + f.libcuda_version->str() +
                                        " but the loaded kernel module is " + f.kernel_driver->str());
    fd.evidence.push_back("libcuda: " + real + " (" + res.summary() + ")");
    fd.evidence.push_back("module: /proc/driver/nvidia/version");
    // Which copy the system itself would load decides between two situations: the installed
    // driver's libraries differ from the module (an upgrade under a running module: reboot), or a
    // stray copy found first through LD_LIBRARY_PATH/RPATH hides a consistent installation.
    std::optional<std::string> system_copy;
    std::optional<Version> system_version;
    if (res.via != "ld.so.cache" && res.via != "system dir") {
      SystemView::Env env = ctx.sys.environment();
      env.erase("LD_LIBRARY_PATH");
      SystemView without(ctx.sys.root(), env);
      if (auto sr = LoaderModel(without).resolve("libcuda.so.1"); sr.path) {
        system_copy = ctx.sys.canonical(*sr.path).value_or(*sr.path);
        if (auto v = library_version(ctx.sys, *system_copy, "libcuda")) system_version = v->version;
      }
    }
    if (system_copy && system_version && *system_version == *f.kernel_driver) {
      fd.evidence.push_back("the system's own libcuda (" + *system_copy + ", " + system_version->str() +
                            ") matches the module; the stray copy wins through " + res.via);
      fd.cause = "A libcuda.so.1 of another driver version (" + f.libcuda_version->str() + ", " + path_dirname(real) +
                 ") is found before the system's own, so cuInit fails with error 803 (system has unsupported display "
                 "driver / cuda driver combination).";
      if (real.find("/compat") != std::string::npos)
        fd.evidence.push_back("it is a CUDA forward-compatibility libcuda (cuda-compat): that works only on data-centre GPUs");
      fd.fixes = {res.via == "LD_LIBRARY_PATH" ? "Remove " + path_dirname(real) + " from LD_LIBRARY_PATH"
                                               : "Remove the libcuda copy at " + real + " (found through " + res.via + ")"};
      if (const Cause* c = ctx.kb.cause("libcuda_module_mismatch")) fd.fixes.insert(fd.fixes.end(), c->fixes.begin(), c->fixes.end());
      apply_cause(ctx.kb, fd, "libcuda_module_mismatch");
    } else {
      // NVML and the user-space stack were upgraded under a running module: a reboot fixes it.
      fd.cause = "The driver's user-space libraries were upgraded while the old kernel module stays loaded; NVML "
                 "reports 'Driver/library version mismatch' and CUDA error 803.";
      apply_cause(ctx.kb, fd, "nvml_mismatch");
    }
  }
  if (!f.driver_max_cuda) {
    std::optional<Version> drv = f.kernel_driver ? f.kernel_driver : f.libcuda_version;
    if (drv)
      if (const DriverRequirement* r = ctx.kb.max_cuda_for_driver(*drv)) f.driver_max_cuda = r->cuda.prefix(2);
  }
  // Other copies of libcuda (a second driver, cuda-compat) that some process may pick up.
  for (const auto& c : find_copies(ctx, "libcuda.so.1")) {
    if (c.wins || c.real_path.find("/stubs/") != std::string::npos) continue;
    if (c.version && f.libcuda_version && *c.version == *f.libcuda_version) continue;
    const std::string copy = c.real_path + (c.version ? " (" + c.version->str() + ")" : "");
    // The toolkit's cuda-compat copy (NVIDIA's CUDA images ship one in /usr/local/cuda-X/compat)
    // is loaded only by a process that puts its folder first; left off the path it is inert.
    // Another driver's libcuda elsewhere is a leftover worth a warning.
    if (c.real_path.find("/compat/") != std::string::npos) {
      auto& fd = L.add(Verdict::ok, "CUDA forward-compatibility libcuda, not on the loader's path: " + copy);
      fd.evidence.push_back("loaded only by a process that puts " + path_dirname(c.real_path) +
                            " first (LD_LIBRARY_PATH); nothing here does");
      if (c.version && f.kernel_driver && !(*f.kernel_driver < *c.version))
        fd.evidence.push_back("not needed: it is not newer than the running driver " + f.kernel_driver->str() +
                              ", and loaded with it cuInit would fail with error 803");
      else
        fd.evidence.push_back("it lets a newer CUDA run on an older driver, on data-centre GPUs only");
      continue;
    }
    auto& fd = L.add(Verdict::warn, "Another libcuda copy: " + copy);
    fd.evidence.push_back("a process with a different LD_LIBRARY_PATH or RPATH may load it");
  }
  if (auto nvml = ctx.loader.resolve("libnvidia-ml.so.1"); nvml.path) {
    std::string nreal = ctx.sys.canonical(*nvml.path).value_or(*nvml.path);
    auto nv = library_version(ctx.sys, nreal, "libnvidia-ml");
    L.findings.front().evidence.push_back("NVML: " + nreal + (nv ? " (" + nv->version.str() + ")" : ""));
  }
  if (f.driver_max_cuda) L.findings.front().evidence.push_back("driver supports CUDA up to " + f.driver_max_cuda->str());

  // NVSwitch systems: CUDA waits for Fabric Manager.
  bool nvswitch = f.nvswitches > 0 || !ctx.sys.list_dir("/proc/driver/nvidia-nvswitch/devices", 64).empty();
  if (nvswitch) {
    bool fm = ctx.sys.exists("/usr/bin/nv-fabricmanager") || ctx.sys.exists("/usr/sbin/nv-fabricmanager");
    auto& fd = L.add(fm ? Verdict::ok : Verdict::fail,
                     fm ? "NVSwitch system; nv-fabricmanager is installed (it must run, at the driver's version)"
                        : "NVSwitch system without nv-fabricmanager: CUDA initialisation fails with error 802");
    if (!fm) apply_cause(ctx.kb, fd, "fabric_manager");
  }

  // Docker on a GPU host: `docker run --gpus` needs the NVIDIA container toolkit's hook, which
  // a snap-confined Docker cannot run even when it is installed.
  if (have_gpu && f.container.empty() && !f.wsl) {
    const bool snap = ctx.sys.exists("/snap/bin/docker");
    const bool docker = snap || ctx.sys.exists("/usr/bin/docker") || ctx.sys.exists("/usr/local/bin/docker");
    std::string hook;
    for (const char* p : {"/usr/bin/nvidia-container-runtime-hook", "/usr/bin/nvidia-container-toolkit", "/usr/bin/nvidia-ctk",
                          "/usr/bin/nvidia-container-runtime"})
      if (hook.empty() && ctx.sys.exists(p)) hook = p;
    if (docker && (snap || hook.empty())) {
      auto& fd = L.add(Verdict::warn, snap ? "Docker is the snap package: it cannot use the NVIDIA container toolkit, so --gpus fails"
                                           : "Docker is installed but the NVIDIA container toolkit is not: --gpus fails");
      fd.evidence.push_back(snap ? "/snap/bin/docker" : ctx.sys.exists("/usr/bin/docker") ? "/usr/bin/docker" : "/usr/local/bin/docker");
      fd.evidence.push_back(hook.empty() ? "no nvidia-container-runtime-hook / nvidia-ctk in /usr/bin" : "toolkit present: " + hook);
      apply_cause(ctx.kb, fd, "container_toolkit_missing");
      if (snap) fd.fixes.insert(fd.fixes.begin(), "sudo snap remove docker; install Docker from docker.com's apt repository");
    }
  }

  // The driver API, in a child process: cuInit can hang or crash on a broken install.
  if (!ctx.opt.driver_api) {
    L.not_checked.push_back("driver API not queried (disabled)");
  } else if (ctx.opt.helper_executable.empty()) {
    L.not_checked.push_back("driver API not queried: no helper executable to run it in a child process");
  } else if (stub) {
    L.not_checked.push_back("driver API not queried: only the stub libcuda is reachable");
  } else {
    ChildResult cr = run_child({ctx.opt.helper_executable, "doctor", "--child", "driver-api", host(ctx, real)},
                               ctx.sys.environment(), ctx.opt.child_timeout_s);
    DriverApiResult api = parse_driver_api(cr.out);
    api.ran = cr.started;
    api.timed_out = cr.timed_out;
    if (!cr.started) api.error = cr.error;
    f.driver_api = api;
    if (cr.timed_out) {
      auto& fd = L.add(Verdict::fail, "The driver API did not answer within " + std::to_string(int(ctx.opt.child_timeout_s)) +
                                          " s (cuInit hung)");
      fd.evidence.push_back("child: " + ctx.opt.helper_executable + " doctor --child driver-api " + real);
      fd.fixes = {"Check the kernel log for Xid errors (sudo dmesg | grep -i xid)", "nvidia-smi -q; reset the GPU or reboot"};
    } else if (!api.error.empty() || cr.signal) {
      auto& fd = L.add(Verdict::fail, "The driver API child failed: " + (api.error.empty() ? "killed by signal " + std::to_string(cr.signal) : api.error));
      if (!cr.err.empty()) fd.evidence.push_back("stderr: " + cr.err.substr(0, 400));
    } else if (api.init_result != 0) {
      const CudaErrorCode* e = ctx.kb.cuda_error("driver", api.init_result);
      auto& fd = L.add(have_gpu ? Verdict::fail : Verdict::not_applicable,
                       "cuInit failed: " + std::to_string(api.init_result) + (e ? " " + e->name + ": " + e->meaning : ""));
      fd.evidence.push_back("driver API queried in a child process through " + real);
      switch (api.init_result) {
        case 34: apply_cause(ctx.kb, fd, "stub_libcuda"); break;
        case 100: apply_cause(ctx.kb, fd, f.wsl ? "wsl_libcuda" : !f.container.empty() ? "container_without_gpu" : "no_gpu_visible"); break;
        case 802: apply_cause(ctx.kb, fd, "fabric_manager"); break;
        case 803: apply_cause(ctx.kb, fd, "libcuda_module_mismatch"); break;
        case 999: case 3: apply_cause(ctx.kb, fd, "driver_not_loaded"); break;
        default: break;
      }
    } else {
      auto& fd = L.add(Verdict::ok, "cuInit ok; driver API reports CUDA " + cuda_version_from_int(api.driver_version) + ", " +
                                        std::to_string(api.device_count) + " device(s)");
      f.driver_max_cuda = Version::parse(cuda_version_from_int(api.driver_version));
      for (std::size_t i = 0; i < api.devices.size(); ++i) {
        const auto& d = api.devices[i];
        fd.evidence.push_back("device " + std::to_string(i) + ": " + d.name + ", compute capability " + std::to_string(d.cc_major) +
                              "." + std::to_string(d.cc_minor) + ", " + std::to_string(d.sms) + " SMs, " +
                              std::to_string(d.memory >> 20) + " MiB");
        // The driver API is the authority on compute capability.
        if (i < f.gpus.size()) {
          f.gpus[i].cc_major = d.cc_major;
          f.gpus[i].cc_minor = d.cc_minor;
          f.gpus[i].cc_source = "driver API";
          if (f.gpus[i].name.empty()) f.gpus[i].name = d.name;
        } else {
          f.gpus.push_back(GpuFact{"", 0, d.name, d.cc_major, d.cc_minor, "driver API"});
        }
      }
    }
  }
  L.summary = f.libcuda_version ? "libcuda " + f.libcuda_version->str() : "libcuda found";
  return L;
}

}  // namespace strata::doctor
