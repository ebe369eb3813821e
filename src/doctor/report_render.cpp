// The report as text (bottom-up, first problem and its fix at the top, colour only when asked)
// and as JSON (schema "strata-doctor/1", documented in docs/doctor.md).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "strata/doctor/doctor.hpp"

namespace strata::doctor {

namespace {

const Finding* first_problem_finding(const LayerReport& l) {
  for (const auto& f : l.findings)
    if (f.verdict == Verdict::fail) return &f;
  for (const auto& f : l.findings)
    if (f.verdict == Verdict::warn) return &f;
  return nullptr;
}

struct Style {
  bool on;
  std::string c(const char* code, const std::string& s) const { return on ? std::string("\033[") + code + "m" + s + "\033[0m" : s; }
  std::string verdict(Verdict v) const {
    char buf[16];
    std::snprintf(buf, sizeof buf, "[%-4s]", verdict_name(v));
    switch (v) {
      case Verdict::ok: return c("32", buf);
      case Verdict::warn: return c("33", buf);
      case Verdict::fail: return c("1;31", buf);
      default: return c("2", buf);
    }
  }
};

const char* mark(Verdict v) {
  switch (v) {
    case Verdict::ok: return "+";
    case Verdict::warn: return "!";
    case Verdict::fail: return "x";
    default: return "-";
  }
}

nlohmann::json finding_json(const Finding& f) {
  return {{"verdict", verdict_name(f.verdict)}, {"summary", f.summary}, {"evidence", f.evidence},
          {"cause_id", f.cause_id},            {"cause", f.cause},     {"fixes", f.fixes}};
}

}  // namespace

std::string render_text(const Report& report, bool colour) {
  Style st{colour};
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "strata doctor: the GPU compute stack, bottom-up (%.2f s)\n\n", report.seconds);
  out += st.c("1", buf);
  if (const LayerReport* p = report.first_problem()) {
    const Finding* f = first_problem_finding(*p);
    out += st.c(p->verdict == Verdict::fail ? "1;31" : "1;33",
                std::string(p->verdict == Verdict::fail ? "FIRST FAILING LAYER: " : "FIRST WARNING: ") + layer_title(p->layer));
    out += "\n  " + (f ? f->summary : p->summary) + "\n";
    if (f && !f->cause.empty()) out += "  root cause: " + f->cause + "\n";
    if (f && !f->fixes.empty()) {
      out += "  fix:\n";
      for (const auto& x : f->fixes) out += "    $ " + x + "\n";
    }
    out += "\n";
  } else {
    out += st.c("1;32", "No problem found.") + "\n\n";
  }
  int n = 1;
  for (const auto& l : report.layers) {
    std::snprintf(buf, sizeof buf, " %d %-18s ", n++, layer_title(l.layer));
    out += st.verdict(l.verdict) + buf + l.summary + "\n";
    for (const auto& f : l.findings) {
      out += std::string("        ") + mark(f.verdict) + " " + f.summary + "\n";
      for (const auto& e : f.evidence) out += "            " + st.c("2", e) + "\n";
      if (f.verdict == Verdict::fail || f.verdict == Verdict::warn) {
        if (!f.cause.empty() && &f != first_problem_finding(l)) out += "            cause: " + f.cause + "\n";
        for (const auto& x : f.fixes) out += "            fix: " + x + "\n";
      }
    }
    for (const auto& nc : l.not_checked) out += "        " + st.c("2", "? not checked: " + nc) + "\n";
  }
  out += "\n";
  out += report.exit_code() == 0 ? "Healthy (exit 0).\n" : "Problems found (exit 1).\n";
  return out;
}

std::string render_json(const Report& report) {
  using nlohmann::json;
  json j;
  j["schema"] = "strata-doctor/1";
  j["exit_code"] = report.exit_code();
  j["healthy"] = report.exit_code() == 0;
  j["seconds"] = report.seconds;
  if (const LayerReport* p = report.first_problem()) {
    const Finding* f = first_problem_finding(*p);
    j["first_problem"] = {{"layer", layer_name(p->layer)}, {"verdict", verdict_name(p->verdict)},
                          {"finding", f ? finding_json(*f) : json(nullptr)}};
  } else {
    j["first_problem"] = nullptr;
  }
  json layers = json::array();
  for (const auto& l : report.layers) {
    json fs = json::array();
    for (const auto& f : l.findings) fs.push_back(finding_json(f));
    layers.push_back({{"layer", layer_name(l.layer)}, {"title", layer_title(l.layer)}, {"verdict", verdict_name(l.verdict)},
                      {"summary", l.summary}, {"seconds", l.seconds}, {"findings", fs}, {"not_checked", l.not_checked}});
  }
  j["layers"] = layers;
  const Facts& f = report.facts;
  json gpus = json::array();
  for (const auto& g : f.gpus)
    gpus.push_back({{"pci_address", g.pci_address}, {"device_id", g.device_id}, {"name", g.name},
                    {"compute_capability", g.sm() ? std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor) : ""},
                    {"compute_capability_source", g.cc_source}});
  auto copies = [](const std::vector<LibraryCopy>& v) {
    json a = json::array();
    for (const auto& c : v)
      a.push_back({{"name", c.name}, {"path", c.path}, {"real_path", c.real_path}, {"version", c.version ? c.version->str() : ""},
                   {"version_source", c.version_source}, {"wins", c.wins}});
    return a;
  };
  json fws = json::array();
  for (const auto& x : f.frameworks)
    fws.push_back({{"python", x.python}, {"package", x.package}, {"version", x.version}, {"cuda", x.cuda}, {"cudnn", x.cudnn},
                   {"arch_list", x.arch_list}, {"available", x.available}, {"unavailable_reason", x.unavailable_reason},
                   {"device_count", x.device_count}, {"nvidia_wheels", x.nvidia_wheels}});
  j["facts"] = {{"gpus", gpus},
                {"wsl", f.wsl},
                {"jetson", f.jetson},
                {"container", f.container},
                {"nvidia_module_loaded", f.nvidia_module_loaded},
                {"kernel_driver", f.kernel_driver ? f.kernel_driver->str() : ""},
                {"libcuda", f.libcuda_path.value_or("")},
                {"libcuda_version", f.libcuda_version ? f.libcuda_version->str() : ""},
                {"driver_max_cuda", f.driver_max_cuda ? f.driver_max_cuda->str() : ""},
                {"driver_api", {{"ran", f.driver_api.ran}, {"cuInit", f.driver_api.init_result},
                                {"driver_version", f.driver_api.driver_version}, {"device_count", f.driver_api.device_count},
                                {"error", f.driver_api.error}, {"timed_out", f.driver_api.timed_out}}},
                {"runtimes", copies(f.runtimes)},
                {"toolkit", {{"path", f.toolkit_path}, {"version", f.toolkit_version ? f.toolkit_version->str() : ""}}},
                {"libraries", copies(f.libraries)},
                {"frameworks", fws},
                {"pythons", f.pythons}};
  return j.dump(2);
}

}  // namespace strata::doctor
