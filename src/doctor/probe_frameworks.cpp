// Layer 6, frameworks: for each Python found, PyTorch (and JAX/CuPy) asked in a child process
// with a deadline (version, CUDA or CPU build, cuDNN, arch list, is_available and why not,
// bundled nvidia-* wheels). Without running Python, torch/version.py is read as a file.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <tuple>

#include "embedded_data.hpp"
#include "probes.hpp"
#include "strata/doctor/child_process.hpp"

namespace strata::doctor {

namespace {

// CuPy reports its CUDA as the runtime's integer (13020 = 1000 * 13 + 10 * 2); torch as "13.0".
std::string cuda_version_text(const std::string& s) {
  if (s.size() < 4 || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return s;
  int v = std::stoi(s);
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// torch/version.py: __version__ = '2.5.1+cu121', cuda = '12.1' (or None).
std::optional<FrameworkInfo> torch_from_files(ProbeContext& ctx, const std::string& site) {
  auto text = ctx.sys.read_text(site + "/torch/version.py", 1 << 16);
  if (!text) return std::nullopt;
  FrameworkInfo fi;
  fi.package = "torch";
  std::smatch m;
  if (std::regex_search(*text, m, std::regex("__version__\\s*=\\s*'([^']*)'"))) fi.version = m[1].str();
  if (std::regex_search(*text, m, std::regex("\\bcuda\\s*(?::\\s*Optional\\[str\\])?\\s*=\\s*'([^']*)'"))) fi.cuda = m[1].str();
  fi.lib_dir = site + "/torch/lib";
  fi.python = site;
  for (const auto& e : ctx.sys.list_dir(site, 20000))
    if (e.name.starts_with("nvidia_") && e.name.ends_with(".dist-info")) fi.nvidia_wheels.push_back(e.name.substr(0, e.name.size() - 10));
  return fi;
}

void judge(ProbeContext& ctx, LayerReport& L, const FrameworkInfo& fi, bool asked) {
  Facts& f = ctx.facts;
  const bool have_gpu = !f.gpus.empty() || f.wsl;
  std::string where = asked ? " (" + fi.python + ")" : " (" + fi.python + ", read from files)";
  if (fi.cuda.empty() && fi.package == "torch") {
    auto& fd = L.add(have_gpu ? Verdict::fail : Verdict::ok, "PyTorch " + fi.version + " is a CPU-only build" + where);
    if (have_gpu) {
      fd.cause_id = "cpu_only_framework";
      if (const Cause* c = ctx.kb.cause("cpu_only_framework")) {
        fd.cause = c->explanation;
        fd.fixes = c->fixes;
      }
    }
    return;
  }
  std::string line = fi.package + " " + fi.version + (fi.cuda.empty() ? "" : ", built for CUDA " + fi.cuda) + where;
  Verdict v = Verdict::ok;
  auto cuda = Version::parse(fi.cuda);
  std::string why;
  std::optional<Version> driver = f.kernel_driver ? f.kernel_driver : f.libcuda_version;
  if (cuda && driver) {
    DriverSupport s = ctx.kb.runtime_support(*cuda, *driver, &why);
    if (s == DriverSupport::insufficient) v = Verdict::fail;
  }
  if (asked && have_gpu && !fi.available) v = Verdict::fail;
  auto& fd = L.add(v, line + (asked ? (fi.available ? ": CUDA available, " + std::to_string(fi.device_count) + " device(s)"
                                                    : ": CUDA not available") : ""));
  if (!why.empty()) fd.evidence.push_back(why);
  if (!fi.cudnn.empty()) fd.evidence.push_back("cuDNN " + fi.cudnn);
  if (!fi.arch_list.empty()) {
    std::string a;
    for (const auto& x : fi.arch_list) a += (a.empty() ? "" : " ") + x;
    fd.evidence.push_back("arch list: " + a);
  }
  if (!fi.unavailable_reason.empty()) fd.evidence.push_back("reason: " + fi.unavailable_reason);
  if (!fi.nvidia_wheels.empty()) {
    std::string w;
    for (const auto& x : fi.nvidia_wheels) w += (w.empty() ? "" : ", ") + x;
    fd.evidence.push_back("nvidia wheels: " + w);
  }
  if (v == Verdict::fail) {
    if (cuda && driver && ctx.kb.runtime_support(*cuda, *driver) == DriverSupport::insufficient) {
      fd.cause_id = "driver_too_old";
      fd.cause = fi.package + " was built for CUDA " + fi.cuda + ", newer than driver " + driver->str() + " supports.";
      if (const DriverRequirement* r = ctx.kb.requirement_for_cuda(*cuda))
        fd.fixes = {"Upgrade the driver to >= " + r->toolkit_min.str(),
                    "or install the wheel variant for CUDA <= " + (f.driver_max_cuda ? f.driver_max_cuda->str() : std::string("?"))};
    } else {
      fd.cause = "The framework's CUDA initialisation failed; the layers below say why" +
                 (fi.unavailable_reason.empty() ? std::string(".") : ": " + fi.unavailable_reason);
    }
  }
}

// "libcudart.so.11.0" -> 11, "libcudnn.so.8" -> 8.
std::optional<int> soname_major(const std::string& soname) {
  auto pos = soname.find(".so.");
  if (pos == std::string::npos) return std::nullopt;
  auto v = Version::parse(soname.substr(pos + 4));
  return v ? std::optional<int>(v->major()) : std::nullopt;
}

// The CUDA major the requester was linked against (its libcudart/libcublas NEEDED entries).
std::optional<int> linked_cuda_major(const Requester& req) {
  for (const auto& n : req.elf.needed)
    if (n.starts_with("libcudart.so.") || n.starts_with("libcublas.so."))
      if (auto m = soname_major(n)) return m;
  return std::nullopt;
}

// Fix commands for a dependency ld.so cannot find, specific to what is missing: the pip wheel
// or conda package providing it, or the build of the package that matches the runtime present.
std::vector<std::string> missing_dependency_fixes(ProbeContext& ctx, const FrameworkInfo& fi, const Requester& req,
                                                  const std::string& name, const std::vector<LibraryCopy>& elsewhere) {
  std::vector<std::string> fixes;
  for (const auto& c : elsewhere)
    fixes.push_back("export LD_LIBRARY_PATH=" + path_dirname(c.real_path) + ":$LD_LIBRARY_PATH   (a copy is there, outside the loader's path)");
  const auto major = soname_major(name);
  if (name.starts_with("libcudart.so.") && major) {
    // A package built for CUDA N (pip name ending in -cuN) on a machine with only other runtimes.
    static const std::regex cu_suffix("^(.*)[-_]cu([0-9]+)$");
    std::smatch m;
    if (std::regex_match(fi.package, m, cu_suffix) && std::stoi(m[2].str()) == *major)
      for (const auto& rt : ctx.facts.runtimes)
        if (auto rm = soname_major(rt.name); rm && *rm != *major) {
          fixes.push_back("pip install " + m[1].str() + "-cu" + std::to_string(*rm) + "   (the build for the CUDA " +
                          std::to_string(*rm) + " runtime installed here: " + rt.real_path + ")");
          break;
        }
    fixes.push_back("pip install nvidia-cuda-runtime-cu" + std::to_string(*major) + "   (or install the CUDA " +
                    std::to_string(*major) + ".x toolkit, e.g. apt install cuda-toolkit-" + std::to_string(*major) + "-x)");
  } else if (name.starts_with("libcudnn") && major) {
    const std::string n = std::to_string(*major);
    auto cuda = linked_cuda_major(req);
    if (cuda && *cuda >= 11)
      fixes.push_back("Install cuDNN " + n + " for CUDA " + std::to_string(*cuda) + ": pip install nvidia-cudnn-cu" +
                      std::to_string(*cuda) + "==" + n + ".* and add its nvidia/cudnn/lib directory to LD_LIBRARY_PATH");
    fixes.push_back("or: conda install cudnn=" + n + (cuda ? " cudatoolkit=" + std::to_string(*cuda) : std::string()) +
                    "   (or the cuDNN " + n + " package of your distribution)");
  }
  if (const Cause* c = ctx.kb.cause(name.starts_with("libcudart") ? "missing_runtime" : "missing_library"))
    fixes.insert(fixes.end(), c->fixes.begin(), c->fixes.end());
  return fixes;
}

// A package's CUDA library as ld.so would load it (RUNPATH with $ORIGIN pointing into the
// nvidia-* wheels, then LD_LIBRARY_PATH order rules): a missing runtime or library, or an older
// copy winning through LD_LIBRARY_PATH, shows up here, before import fails.
void check_needed(ProbeContext& ctx, LayerReport& L, const FrameworkInfo& fi, const std::string& lib) {
  if (lib.empty() || !ctx.sys.exists(lib)) return;
  auto req = ctx.loader.load_requester(lib);
  if (!req) return;
  for (const auto& name : req->elf.needed) {
    if (!(name.starts_with("libcu") || name.starts_with("libnv") || name.starts_with("libnccl"))) continue;
    Resolution r = ctx.loader.resolve(name, &*req);
    if (!r.path) {
      bool runtime = name.starts_with("libcudart");
      auto& fd = L.add(Verdict::fail, path_basename(lib) + " (" + fi.package + " " + fi.version + ") needs " + name +
                                          ", which the loader cannot find");
      fd.cause_id = runtime ? "missing_runtime" : "missing_library";
      for (const auto& s : r.steps)
        if (s.source != "system dir") fd.evidence.push_back(s.source + ": " + s.dir + " (" + s.result + ")");
      std::vector<LibraryCopy> elsewhere = find_copies(ctx, name);
      for (const auto& c : elsewhere) fd.evidence.push_back("a copy exists at " + c.real_path + ", outside the loader's path");
      if (runtime)
        for (const auto& rt : ctx.facts.runtimes)
          fd.evidence.push_back("CUDA runtime installed: " + rt.real_path + (rt.version ? " (" + rt.version->str() + ")" : "") +
                                ", another major");
      if (const Cause* c = ctx.kb.cause(fd.cause_id)) fd.cause = c->explanation;
      fd.fixes = missing_dependency_fixes(ctx, fi, *req, name, elsewhere);
      continue;
    }
    if (r.via != "LD_LIBRARY_PATH" || !req->elf.has_runpath) continue;
    // Would RUNPATH alone have found another copy? Then LD_LIBRARY_PATH overrides the wheel.
    Requester runpath_only = *req;
    SystemView::Env env = ctx.sys.environment();
    env.erase("LD_LIBRARY_PATH");
    SystemView without(ctx.sys.root(), env);
    LoaderModel plain(without);
    Resolution intended = plain.resolve(name, &runpath_only);
    if (intended.path && ctx.sys.canonical(*intended.path) != ctx.sys.canonical(*r.path)) {
      auto& fd = L.add(Verdict::warn, name + " for " + fi.package + " comes from LD_LIBRARY_PATH (" + *r.path +
                                          ") instead of its own " + *intended.path);
      fd.cause_id = "shadowed_library";
      fd.cause = "LD_LIBRARY_PATH is searched before DT_RUNPATH, so a system copy replaces the one the wheel was "
                 "built with (undefined versioned symbols, cuDNN version mismatch).";
      fd.fixes = {"Remove " + path_dirname(*r.path) + " from LD_LIBRARY_PATH"};
    }
  }
}

// CUDA libraries of Python packages other than the frameworks asked above: their loader
// dependencies are checked like libtorch_cuda.so's (the package directory, the library in it).
struct Extension {
  const char* package_dir;
  const char* library;
};
constexpr Extension kExtensions[] = {
    {"onnxruntime", "capi/libonnxruntime_providers_cuda.so"},
    {"onnxruntime", "capi/onnxruntime_pybind11_state.so"},
    {"vllm", "_C.abi3.so"},
    {"cuml", "libcuml++.so"},
    {"cudf", "libcudf.so"},
};

// "onnxruntime_gpu-1.17.0.dist-info" for package directory "onnxruntime": {"onnxruntime-gpu", "1.17.0"}.
std::pair<std::string, std::string> distribution(ProbeContext& ctx, const std::string& site, const std::string& package_dir) {
  for (const auto& e : ctx.sys.list_dir(site, 20000)) {
    if (!e.name.ends_with(".dist-info") || !e.name.starts_with(package_dir)) continue;
    std::string stem = e.name.substr(0, e.name.size() - 10);
    auto dash = stem.find('-');
    std::string name = stem.substr(0, dash), version = dash == std::string::npos ? "" : stem.substr(dash + 1);
    for (auto& ch : name)
      if (ch == '_') ch = '-';
    return {name, version};
  }
  return {package_dir, ""};
}

void check_extensions(ProbeContext& ctx, LayerReport& L, const std::string& site) {
  std::set<std::string> seen_packages;
  for (const auto& x : kExtensions) {
    const std::string lib = site + "/" + x.package_dir + "/" + x.library;
    auto req = ctx.sys.exists(lib) ? ctx.loader.load_requester(lib) : std::nullopt;
    if (!req) continue;
    bool uses_cuda = false;
    for (const auto& n : req->elf.needed) uses_cuda |= n.starts_with("libcu") || n.starts_with("libnv");
    if (!uses_cuda) continue;
    FrameworkInfo fi;
    std::tie(fi.package, fi.version) = distribution(ctx, site, x.package_dir);
    fi.python = site;
    fi.lib_dir = path_dirname(lib);
    if (seen_packages.insert(x.package_dir).second)
      L.add(Verdict::ok, fi.package + " " + fi.version + " (" + site + ", read from files)")
          .evidence.push_back("CUDA library: " + lib);
    check_needed(ctx, L, fi, lib);
    ctx.facts.frameworks.push_back(std::move(fi));
  }
}

}  // namespace

LayerReport probe_frameworks(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::framework;
  Facts& f = ctx.facts;
  f.pythons = find_pythons(ctx);
  std::set<std::string> asked_sites;
  if (ctx.opt.probe_python) {
    auto script = detail::embedded_file("probe_frameworks.py");
    for (const auto& py : f.pythons) {
      ChildResult cr = run_child({host(ctx, py), "-c", std::string(script.value_or("print('{}')"))}, ctx.sys.environment(),
                                 ctx.opt.python_timeout_s);
      if (cr.timed_out) {
        L.add(Verdict::warn, py + " did not answer within " + std::to_string(int(ctx.opt.python_timeout_s)) + " s (import hung)");
        continue;
      }
      auto first_brace = cr.out.find('{');
      if (!cr.started || first_brace == std::string::npos) {
        L.not_checked.push_back(py + " could not be asked: " + (cr.error.empty() ? cr.err.substr(0, 200) : cr.error));
        continue;
      }
      nlohmann::json j = nlohmann::json::parse(cr.out.substr(first_brace), nullptr, false);
      if (j.is_discarded()) {
        L.not_checked.push_back(py + " printed no valid JSON");
        continue;
      }
      std::vector<std::string> wheels;
      for (const auto& w : j.value("nvidia_wheels", nlohmann::json::array())) wheels.push_back(w.get<std::string>());
      for (const auto& fw : j.value("frameworks", nlohmann::json::array())) {
        FrameworkInfo fi;
        fi.python = py;
        fi.package = fw.value("package", "");
        fi.version = fw.value("version", "");
        fi.cuda = cuda_version_text(fw.value("cuda", ""));
        fi.cudnn = fw.value("cudnn", "");
        fi.available = fw.value("available", false);
        fi.unavailable_reason = fw.value("reason", fw.value("error", ""));
        fi.device_count = fw.value("device_count", 0);
        // Older probes listed JAX's devices without counting them.
        if (!fw.contains("device_count"))
          for (const auto& d : fw.value("devices", nlohmann::json::array())) {
            std::string s = d.is_string() ? d.get<std::string>() : "";
            std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
            if (s.find("cuda") != std::string::npos || s.find("gpu") != std::string::npos) ++fi.device_count;
          }
        fi.lib_dir = fw.value("lib_dir", "");
        for (const auto& a : fw.value("arch_list", nlohmann::json::array())) fi.arch_list.push_back(a.get<std::string>());
        fi.nvidia_wheels = wheels;
        if (fi.package == "torch" && !fi.lib_dir.empty()) asked_sites.insert(path_dirname(path_dirname(fi.lib_dir)));
        judge(ctx, L, fi, true);
        check_needed(ctx, L, fi, fi.lib_dir.empty() ? "" : fi.lib_dir + "/libtorch_cuda.so");
        f.frameworks.push_back(std::move(fi));
      }
    }
  } else {
    L.not_checked.push_back("Python not run (--no-python): framework facts read from files only");
  }
  // Installations found on disk that no interpreter reported (or Python probing was off).
  for (const auto& site : site_packages_dirs(ctx)) {
    if (asked_sites.count(site)) continue;
    if (auto fi = torch_from_files(ctx, site)) {
      bool dup = false;
      for (const auto& x : f.frameworks) dup |= x.lib_dir == fi->lib_dir;
      if (dup) continue;
      judge(ctx, L, *fi, false);
      check_needed(ctx, L, *fi, fi->lib_dir + "/libtorch_cuda.so");
      f.frameworks.push_back(std::move(*fi));
    }
  }
  for (const auto& site : site_packages_dirs(ctx)) check_extensions(ctx, L, site);
  if (L.findings.empty()) {
    auto& fd = L.add(Verdict::not_applicable, "No PyTorch, JAX or CuPy found");
    std::string pys;
    for (const auto& p : f.pythons) pys += (pys.empty() ? "" : ", ") + p;
    fd.evidence.push_back(f.pythons.empty() ? "no Python interpreter on PATH" : "Pythons checked: " + pys);
  }
  L.summary = std::to_string(f.frameworks.size()) + " framework installation(s)";
  return L;
}

}  // namespace strata::doctor
