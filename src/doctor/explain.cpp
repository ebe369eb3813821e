// Error text -> candidate causes (error_patterns.tsv) -> each cause weighed against the facts
// in the text and on this machine -> ranking. The checks are general rules over the knowledge
// base (driver tables, wheel arch lists, SASS/PTX rules), not per-report answers.
#include "strata/doctor/explain.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "strata/doctor/kernel_compat.hpp"

namespace strata::doctor {

namespace {

bool has(const std::string& hay, const char* re) {
  return std::regex_search(hay, std::regex(re, std::regex::icase));
}

std::optional<Version> cuda_from_variant(const std::string& v) {
  // cu121 -> 12.1, cu118 -> 11.8, cu102 -> 10.2, cuda111 -> 11.1, cu130 -> 13.0
  std::smatch m;
  static const std::regex re("^cu(?:da)?([0-9]{2})([0-9])$");
  if (!std::regex_match(v, m, re)) return std::nullopt;
  return Version::parse(m[1].str() + "." + m[2].str());
}


}  // namespace

const char* assessment_name(Assessment a) {
  switch (a) {
    case Assessment::confirmed: return "confirmed";
    case Assessment::ruled_out: return "ruled out";
    default: return "possible";
  }
}

TextFacts extract_facts(std::string_view text_in, const KnowledgeBase& kb) {
  TextFacts f;
  const std::string text(text_in);
  std::smatch m;
  if (const GpuModel* g = kb.gpu_in_text(text)) {
    f.gpu_name = g->name;
    f.gpu_sm = g->sm();
  }
  static const std::regex cap_re("capability[^0-9]{0,20}(?:sm_)?([0-9]+)(?:\\.([0-9]))?|\\bCC\\s*([0-9])\\.([0-9])",
                                 std::regex::icase);
  if (std::regex_search(text, m, cap_re)) {
    int sm = 0;
    if (m[1].matched) sm = m[2].matched ? std::stoi(m[1].str()) * 10 + std::stoi(m[2].str()) : std::stoi(m[1].str());
    else if (m[3].matched) sm = std::stoi(m[3].str()) * 10 + std::stoi(m[4].str());
    if (sm >= 10 && sm < 200) f.gpu_sm = sm;
  }
  static const std::regex arch_re("\\bsm_?([0-9]{2,3})\\b", std::regex::icase);
  for (std::sregex_iterator it(text.begin(), text.end(), arch_re), end; it != end; ++it) {
    int a = std::stoi((*it)[1].str());
    if (a != f.gpu_sm) f.built_archs.insert(a);
  }
  static const std::regex drv_re("(?:driver|nvidia-driver-|NVRM version[^0-9]*)\\s*(?:version\\s*)?([0-9]{3}(?:\\.[0-9]+){0,2})\\b",
                                 std::regex::icase);
  for (std::sregex_iterator it(text.begin(), text.end(), drv_re), end; it != end; ++it)
    if (auto v = Version::parse((*it)[1].str())) f.drivers.push_back(*v);
  static const std::regex version_word("\\b([0-9]{3}\\.[0-9]{2,3}(?:\\.[0-9]{2})?)\\b");
  for (std::sregex_iterator it(text.begin(), text.end(), version_word), end; it != end; ++it)
    if (auto v = Version::parse((*it)[1].str()); v && v->major() >= 300 && v->major() < 1000 &&
                                                std::none_of(f.drivers.begin(), f.drivers.end(), [&](const Version& d) { return d == *v; }))
      f.drivers.push_back(*v);
  static const std::regex cuda_re("CUDA\\s+([0-9]{1,2}\\.[0-9])", std::regex::icase);
  if (std::regex_search(text, m, cuda_re)) f.cuda = Version::parse(m[1].str());
  static const std::regex variant_re("\\b(cu(?:da)?[0-9]{3})\\b", std::regex::icase);
  if (std::regex_search(text, m, variant_re)) {
    f.wheel_variant = m[1].str();
    std::transform(f.wheel_variant.begin(), f.wheel_variant.end(), f.wheel_variant.begin(), ::tolower);
    if (f.wheel_variant.starts_with("cuda")) f.wheel_variant = "cu" + f.wheel_variant.substr(4);
    if (!f.cuda) f.cuda = cuda_from_variant(f.wheel_variant);
  }
  static const std::regex torch_re("\\btorch[ =v]*([0-9]+\\.[0-9]+)(?:\\.[0-9]+)?", std::regex::icase);
  if (std::regex_search(text, m, torch_re)) f.torch = Version::parse(m[1].str());
  static const std::regex lib_re("(lib[A-Za-z0-9_+-]+\\.so(?:\\.[0-9]+)*): cannot open shared object file");
  if (std::regex_search(text, m, lib_re)) f.missing_library = m[1].str();
  f.container = has(text, "docker|container|podman|kubernetes|\\bk8s\\b");
  f.gpu_flag_missing = has(text, "without (the )?(--gpus|gpu flag|gpus? access|--runtime=nvidia)");
  f.gpu_flag_given = !f.gpu_flag_missing && has(text, "--gpus|--runtime=nvidia|nvidia-docker run");
  f.wsl = has(text, "\\bWSL");
  f.jetson = has(text, "jetson|jetpack|\\bL4T\\b");
  f.upgrade = has(text, "upgrad|unattended|apt install|after (an? )?update|partial driver update");
  f.ld_library_path = has(text, "LD_LIBRARY_PATH");
  return f;
}

namespace {

// What the text says about one cause.
Assessment judge_text(const std::string& id, const TextFacts& f, const KnowledgeBase& kb, const std::string& text,
                      std::vector<std::string>& why) {
  auto cc = [](int sm) { return std::to_string(sm / 10) + "." + std::to_string(sm % 10); };
  const std::optional<Version> driver = f.drivers.empty() ? std::nullopt : std::optional<Version>(f.drivers.front());
  if (id == "driver_too_old") {
    if (f.gpu_flag_missing) {
      why.push_back("the container got no GPU, so there is no driver to be too old");
      return Assessment::unknown;
    }
    if (driver && f.cuda) {
      std::string s;
      DriverSupport sup = kb.runtime_support(*f.cuda, *driver, &s);
      why.push_back(s);
      if (sup == DriverSupport::insufficient) return Assessment::confirmed;
      if (sup != DriverSupport::unknown) return Assessment::ruled_out;
    }
    if (driver) why.push_back("driver " + driver->str() + " supports CUDA up to " +
                              (kb.max_cuda_for_driver(*driver) ? kb.max_cuda_for_driver(*driver)->cuda.prefix(2).str() : "?"));
    return Assessment::unknown;
  }
  if (id == "container_without_gpu") {
    if (f.gpu_flag_missing) {
      why.push_back("the text says the container ran without a GPU request");
      return Assessment::confirmed;
    }
    if (f.gpu_flag_given) {
      why.push_back("the container was started with GPU access (--gpus / --runtime=nvidia)");
      return Assessment::ruled_out;
    }
    if (!f.container) {
      why.push_back("no container mentioned");
      return Assessment::ruled_out;
    }
    return Assessment::unknown;
  }
  if (id == "wsl_libcuda") {
    if (f.wsl) {
      why.push_back("WSL2 is mentioned: the GPU is reached through /usr/lib/wsl/lib/libcuda.so.1");
      return Assessment::confirmed;
    }
    return Assessment::ruled_out;
  }
  if (id == "no_gpu_visible") {
    if (!f.gpu_name.empty() || f.gpu_sm || !f.drivers.empty()) {
      why.push_back("the text names a GPU or a working driver");
      return Assessment::ruled_out;
    }
    return Assessment::unknown;
  }
  if (id == "driver_not_loaded") {
    if (has(text, "kernel (upgrade|update)|dkms|custom kernel|new kernel")) {
      why.push_back("a kernel change is mentioned: the module must be rebuilt for the running kernel");
      return Assessment::confirmed;
    }
    return Assessment::unknown;
  }
  if (id == "nvml_mismatch") {
    if (f.drivers.size() >= 2 && !(f.drivers[0] == f.drivers[1])) {
      why.push_back("two driver versions are mentioned (" + f.drivers[0].str() + ", " + f.drivers[1].str() + ")");
      return Assessment::confirmed;
    }
    if (f.upgrade) {
      why.push_back("a package upgrade/installation is mentioned");
      return Assessment::confirmed;
    }
    return Assessment::unknown;
  }
  if (id == "ptx_jit_too_old") {
    if (driver && f.cuda) {
      const PtxIsaRow* isa = kb.ptx_isa_for_cuda(*f.cuda);
      if (isa && isa->min_driver) {
        bool too_old = *driver < *isa->min_driver;
        why.push_back("CUDA " + f.cuda->str() + " emits PTX ISA " + isa->isa.str() + ", which needs driver >= " +
                      isa->min_driver->str() + "; the driver is " + driver->str());
        return too_old ? Assessment::confirmed : Assessment::ruled_out;
      }
    }
    return Assessment::unknown;
  }
  if (id == "no_kernel_image") {
    if (!f.gpu_sm) return Assessment::unknown;
    const std::string gpu = (f.gpu_name.empty() ? "the GPU" : f.gpu_name) + " (compute capability " + cc(f.gpu_sm) + ")";
    auto wheels = kb.wheels(f.torch, f.wheel_variant);
    if ((f.torch || !f.wheel_variant.empty()) && !wheels.empty()) {
      int runs = 0;
      for (const TorchWheel* w : wheels) {
        std::set<ImageTarget> ts;
        for (int a : w->sass) ts.insert({ImageKind::sass, a, ArchVariant::plain});
        for (int a : w->ptx) ts.insert({ImageKind::ptx, a, ArchVariant::plain});
        if (check_gpu(ts, f.gpu_sm).how != RunCheck::How::no_image) ++runs;
      }
      const TorchWheel* w = wheels.front();
      std::string list;
      for (int a : w->sass) list += (list.empty() ? "sm_" : " sm_") + std::to_string(a);
      if (runs == 0) {
        why.push_back("PyTorch " + w->torch.str() + " " + w->variant + " wheels ship " + list + (w->ptx.empty() ? " and no PTX" : "") +
                      ": nothing runs on " + gpu);
        return Assessment::confirmed;
      }
      if (runs == int(wheels.size())) {
        why.push_back("PyTorch " + (f.torch ? f.torch->str() + " " : std::string()) + f.wheel_variant +
                      " wheels include code for " + gpu + " (e.g. " + list + ")");
        return Assessment::ruled_out;
      }
    }
    if (!f.built_archs.empty()) {
      std::set<ImageTarget> ts;
      std::string list;
      for (int a : f.built_archs) {
        ts.insert({ImageKind::sass, a, ArchVariant::plain});
        list += (list.empty() ? "sm_" : " sm_") + std::to_string(a);
      }
      RunCheck rc = check_gpu(ts, f.gpu_sm);
      why.push_back("built for " + list + "; " + gpu + ": " + rc.detail);
      return rc.how == RunCheck::How::no_image ? Assessment::confirmed : Assessment::ruled_out;
    }
    why.push_back(gpu + " named; the binary's architectures are not in the text");
    return Assessment::unknown;
  }
  if (id == "shadowed_library") {
    if (has(text, "compiled against.*but found runtime version|undefined symbol: \\S+, version") || f.ld_library_path) {
      why.push_back(f.ld_library_path ? "LD_LIBRARY_PATH is involved" : "the program found another version than it was built with");
      return Assessment::confirmed;
    }
    return Assessment::unknown;
  }
  if (id == "cpu_only_framework") {
    if (has(text, "not compiled with CUDA") || (f.jetson && has(text, "pip install torch"))) {
      why.push_back(f.jetson ? "Jetson with a generic pip torch wheel (CPU-only on aarch64)" : "the framework says it has no CUDA");
      return Assessment::confirmed;
    }
    return Assessment::unknown;
  }
  return Assessment::unknown;
}

// What this machine's probes say about one cause.
Assessment judge_machine(const std::string& id, const TextFacts& tf, const MachineEvidence& m, std::vector<std::string>& why) {
  if (!m.report) return Assessment::unknown;
  const Facts& f = m.report->facts;
  for (const auto& l : m.report->layers)
    for (const auto& fd : l.findings)
      if (fd.cause_id == id && (fd.verdict == Verdict::fail || fd.verdict == Verdict::warn)) {
        why.push_back(std::string(layer_title(l.layer)) + ": " + fd.summary);
        return Assessment::confirmed;
      }
  const bool gpu = !f.gpus.empty() || f.wsl;
  if (id == "no_gpu_visible") {
    why.push_back(gpu ? "an NVIDIA GPU is visible here" : "no NVIDIA GPU is visible here");
    return gpu ? Assessment::ruled_out : Assessment::confirmed;
  }
  if (id == "driver_not_loaded" && gpu) {
    why.push_back(f.nvidia_module_loaded ? "the nvidia module is loaded here" : "the nvidia module is not loaded here");
    return f.nvidia_module_loaded ? Assessment::ruled_out : Assessment::confirmed;
  }
  if ((id == "nvml_mismatch" || id == "libcuda_module_mismatch") && f.libcuda_version && f.kernel_driver) {
    bool same = *f.libcuda_version == *f.kernel_driver;
    why.push_back("libcuda " + f.libcuda_version->str() + ", kernel module " + f.kernel_driver->str());
    return same ? Assessment::ruled_out : Assessment::confirmed;
  }
  if (id == "libcuda_missing") {
    why.push_back(f.libcuda_path ? "libcuda.so.1 resolves to " + *f.libcuda_path : "libcuda.so.1 is not found here");
    return f.libcuda_path ? Assessment::ruled_out : gpu ? Assessment::confirmed : Assessment::unknown;
  }
  if (id == "container_without_gpu") {
    if (f.container.empty()) {
      why.push_back("not running in a container here");
      return Assessment::ruled_out;
    }
  }
  if (id == "wsl_libcuda" && !f.wsl) {
    why.push_back("this machine is not WSL");
    return Assessment::ruled_out;
  }
  if ((id == "missing_library" || id == "missing_runtime") && !tf.missing_library.empty() && m.loader) {
    Resolution r = m.loader->resolve(tf.missing_library);
    if (r.path) {
      why.push_back("here " + r.summary() + "; the failing process had another environment (LD_LIBRARY_PATH, venv)");
      return Assessment::ruled_out;
    }
    why.push_back("here too, " + tf.missing_library + " is not found (" + std::to_string(r.steps.size()) + " places tried)");
    // Another major of the same library is a common near miss (cuDNN 9 installed, 8 wanted).
    const std::string stem = tf.missing_library.substr(0, tf.missing_library.find(".so") + 3);
    for (int major = 7; major <= 13; ++major) {
      std::string other = stem + "." + std::to_string(major);
      if (other == tf.missing_library) continue;
      if (Resolution o = m.loader->resolve(other); o.path) {
        why.push_back("but " + o.summary() + ": a different major version than the program needs");
        break;
      }
    }
    return Assessment::confirmed;
  }
  if (id == "cpu_only_framework")
    for (const auto& fw : f.frameworks)
      if (fw.package == "torch" && fw.cuda.empty()) {
        why.push_back("PyTorch " + fw.version + " here is a CPU-only build");
        return Assessment::confirmed;
      }
  return Assessment::unknown;
}

int score(Assessment a) { return a == Assessment::confirmed ? 2 : a == Assessment::unknown ? 1 : 0; }

}  // namespace

Explanation explain(std::string_view text_in, const KnowledgeBase& kb, const MachineEvidence& machine) {
  Explanation e;
  const std::string text(text_in);
  e.facts = extract_facts(text, kb);
  std::vector<std::string> ids;
  for (const auto& p : kb.patterns) {
    if (!std::regex_search(text, p.re)) continue;
    e.matched_patterns.push_back(p.id);
    for (const auto& c : p.causes)
      if (std::find(ids.begin(), ids.end(), c) == ids.end()) ids.push_back(c);
  }
  for (const auto& id : ids) {
    CauseAssessment a;
    a.cause = kb.cause(id);
    if (!a.cause) continue;
    a.from_text = judge_text(id, e.facts, kb, text, a.text_reasons);
    a.on_this_machine = judge_machine(id, e.facts, machine, a.machine_reasons);
    e.causes.push_back(std::move(a));
  }
  // Text evidence first (it describes the failing machine), then this machine's probes, then
  // the knowledge base's order of likelihood (stable sort keeps it).
  std::stable_sort(e.causes.begin(), e.causes.end(), [](const CauseAssessment& x, const CauseAssessment& y) {
    if (score(x.from_text) != score(y.from_text)) return score(x.from_text) > score(y.from_text);
    return score(x.on_this_machine) > score(y.on_this_machine);
  });
  return e;
}

std::string render_explanation_text(const Explanation& e, bool colour) {
  auto c = [&](const char* code, const std::string& s) { return colour ? std::string("\033[") + code + "m" + s + "\033[0m" : s; };
  std::string out;
  if (e.causes.empty()) {
    out += "No known CUDA stack error recognised in this text.\n";
    out += "Run `strata doctor` for a full diagnosis of this machine.\n";
    return out;
  }
  const CauseAssessment& top = e.causes.front();
  out += c("1", "Layer: " + top.cause->layer + "   Most likely cause: " + top.cause->title) + "\n";
  out += "  " + top.cause->explanation + "\n";
  for (const auto& r : top.text_reasons) out += "  - " + r + "\n";
  for (const auto& r : top.machine_reasons) out += "  - on this machine: " + r + "\n";
  out += c("1", "Fix:") + "\n";
  for (const auto& x : top.cause->fixes) out += "  $ " + x + "\n";
  if (e.causes.size() > 1) {
    out += "\nOther candidates:\n";
    for (std::size_t i = 1; i < e.causes.size(); ++i) {
      const auto& a = e.causes[i];
      out += "  [" + std::string(assessment_name(a.from_text)) + (a.on_this_machine != Assessment::unknown
                                                                        ? ", here " + std::string(assessment_name(a.on_this_machine))
                                                                        : "") +
             "] " + a.cause->layer + ": " + a.cause->title + "\n";
      for (const auto& r : a.text_reasons) out += "      " + r + "\n";
      for (const auto& r : a.machine_reasons) out += "      on this machine: " + r + "\n";
    }
  }
  return out;
}

std::string render_explanation_json(const Explanation& e) {
  using nlohmann::json;
  json causes = json::array();
  for (const auto& a : e.causes)
    causes.push_back({{"cause_id", a.cause->id}, {"layer", a.cause->layer}, {"title", a.cause->title},
                      {"explanation", a.cause->explanation}, {"fixes", a.cause->fixes},
                      {"from_text", assessment_name(a.from_text)}, {"text_reasons", a.text_reasons},
                      {"on_this_machine", assessment_name(a.on_this_machine)}, {"machine_reasons", a.machine_reasons}});
  json facts = {{"gpu", e.facts.gpu_name},
                {"gpu_sm", e.facts.gpu_sm},
                {"cuda", e.facts.cuda ? e.facts.cuda->str() : ""},
                {"torch", e.facts.torch ? e.facts.torch->str() : ""},
                {"wheel_variant", e.facts.wheel_variant},
                {"missing_library", e.facts.missing_library}};
  json drivers = json::array();
  for (const auto& d : e.facts.drivers) drivers.push_back(d.str());
  facts["drivers"] = drivers;
  return json{{"schema", "strata-doctor-explain/1"},
              {"layer", e.causes.empty() ? "" : e.causes.front().cause->layer},
              {"cause_id", e.causes.empty() ? "" : e.causes.front().cause->id},
              {"matched_patterns", e.matched_patterns},
              {"facts", facts},
              {"causes", causes}}
      .dump(2);
}

}  // namespace strata::doctor
