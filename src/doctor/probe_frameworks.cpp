// Layer 6, frameworks: for each Python found, PyTorch (and JAX/CuPy) asked in a child process
// with a deadline (version, CUDA or CPU build, cuDNN, arch list, is_available and why not,
// bundled nvidia-* wheels). Without running Python, torch/version.py is read as a file.
#include <nlohmann/json.hpp>
#include <regex>

#include "embedded_data.hpp"
#include "probes.hpp"
#include "strata/doctor/child_process.hpp"

namespace strata::doctor {

namespace {

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

// The framework's CUDA libraries as ld.so would load them from its own library (RUNPATH with
// $ORIGIN pointing into the nvidia-* wheels, then LD_LIBRARY_PATH order rules): a missing
// runtime or an older copy winning through LD_LIBRARY_PATH shows up here, before import fails.
void check_needed(ProbeContext& ctx, LayerReport& L, const FrameworkInfo& fi) {
  const std::string lib = fi.lib_dir + "/libtorch_cuda.so";
  if (fi.lib_dir.empty() || !ctx.sys.exists(lib)) return;
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
      if (const Cause* c = ctx.kb.cause(fd.cause_id)) {
        fd.cause = c->explanation;
        fd.fixes = c->fixes;
      }
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
        fi.cuda = fw.value("cuda", "");
        fi.cudnn = fw.value("cudnn", "");
        fi.available = fw.value("available", false);
        fi.unavailable_reason = fw.value("reason", fw.value("error", ""));
        fi.device_count = fw.value("device_count", 0);
        fi.lib_dir = fw.value("lib_dir", "");
        for (const auto& a : fw.value("arch_list", nlohmann::json::array())) fi.arch_list.push_back(a.get<std::string>());
        fi.nvidia_wheels = wheels;
        if (fi.package == "torch" && !fi.lib_dir.empty()) asked_sites.insert(path_dirname(path_dirname(fi.lib_dir)));
        judge(ctx, L, fi, true);
        check_needed(ctx, L, fi);
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
      check_needed(ctx, L, *fi);
      f.frameworks.push_back(std::move(*fi));
    }
  }
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
