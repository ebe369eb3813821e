// Parses the embedded knowledge-base tables once and answers the compatibility questions.
#include "strata/doctor/knowledge.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <sstream>

#include "embedded_data.hpp"

namespace strata::doctor {

namespace {

// Rows as maps from the header's column names.
std::vector<std::map<std::string, std::string>> table(std::string_view file) {
  std::vector<std::map<std::string, std::string>> out;
  auto text = detail::embedded_file(file);
  if (!text) return out;
  auto rows = parse_tsv(*text);
  if (rows.empty()) return out;
  const auto& header = rows[0];
  for (std::size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < header.size(); ++c) row[header[c]] = c < rows[r].size() ? rows[r][c] : "";
    out.push_back(std::move(row));
  }
  return out;
}

bool truthy(const std::string& s) { return !s.empty() && s != "no"; }

std::set<int> arch_numbers(const std::string& list, std::string_view prefix) {
  std::set<int> out;
  std::istringstream is(list);
  for (std::string w; is >> w;) {
    if (!w.starts_with(prefix)) continue;
    int v = 0;
    std::size_t i = prefix.size();
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) v = v * 10 + (w[i++] - '0');
    if (v > 0) out.insert(v);
  }
  return out;
}

int sm_of(const std::string& cc) {
  auto v = Version::parse(cc);
  return v ? v->major() * 10 + v->minor() : 0;
}

// "12.0-12.7" / "11.8" / "13.1-13.2" -> [first, last]
std::pair<Version, Version> release_range(const std::string& s) {
  auto dash = s.find('-');
  auto a = Version::parse(s.substr(0, dash));
  auto b = dash == std::string::npos ? a : Version::parse(s.substr(dash + 1));
  return {a.value_or(Version{}), b.value_or(Version{})};
}

std::vector<std::string> split_fixes(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = s.find(";;", i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
    i = j + 2;
  }
  return out;
}

KnowledgeBase load() {
  KnowledgeBase kb;
  for (auto& r : table("cuda_driver_min.tsv")) {
    DriverRequirement d;
    auto cuda = Version::parse(r["cuda_version"]);
    auto min = Version::parse(r["toolkit_driver_min_linux_x86_64"]);
    if (!cuda || !min) continue;
    d.cuda = *cuda;
    d.label = r["release_label"];
    d.toolkit_min = *min;
    d.minor_compat_min = Version::parse(r["minor_compat_min_linux"]);
    // Before CUDA 11 the "minor compat" column repeats the toolkit minimum: no such feature.
    if (d.cuda.major() < 11) d.minor_compat_min.reset();
    kb.driver_requirements.push_back(std::move(d));
  }
  for (auto& r : table("gpu_compute_capability.tsv")) {
    auto cc = Version::parse(r["compute_capability"]);
    if (!cc) continue;
    kb.gpus.push_back({r["gpu_name"], cc->major(), cc->minor(), r["architecture"], truthy(r["uncertain"])});
  }
  for (auto& r : table("ptx_isa_versions.tsv")) {
    auto isa = Version::parse(r["ptx_isa"]);
    auto cuda = Version::parse(r["first_cuda"]);
    if (!isa || !cuda) continue;
    std::string drv = r["min_driver_linux_for_jit"];
    bool uncertain = !drv.empty() && drv.back() == '?';
    if (uncertain) drv.pop_back();
    kb.ptx_isas.push_back({*isa, *cuda, Version::parse(drv), uncertain});
  }
  for (auto& r : table("cuda_toolkit_arch_support.tsv")) {
    auto [first, last] = release_range(r["cuda_version"]);
    kb.toolkit_archs.push_back({first, last, sm_of(r["min_cc"]), sm_of(r["max_cc"]), r["removed_in_this_release"],
                                truthy(r["uncertain"])});
  }
  for (auto& r : table("pytorch_wheels.tsv")) {
    TorchWheel w;
    auto torch = Version::parse(r["torch_release"]);
    auto cuda = Version::parse(r["cuda_version"]);
    if (!torch || !cuda) continue;
    w.torch = *torch;
    w.variant = r["wheel_variant"];
    w.cuda = *cuda;
    w.role = r["role"];
    w.cudnn = r["cudnn_bundled_or_pinned"];
    w.sass = arch_numbers(r["resulting_sass"], "sm_");
    w.ptx = arch_numbers(r["ptx"], "compute_");
    w.ptx_uncertain = r["ptx"].find('?') != std::string::npos;
    w.uncertain = r["uncertain"];
    kb.torch_wheels.push_back(std::move(w));
  }
  for (auto& r : table("cudnn_cuda_support.tsv"))
    kb.cudnn.push_back({r["cudnn_version"], r["cuda_major_build"], r["cuda_toolkit_versions"], r["driver_min_linux"],
                        r["compute_capabilities"], truthy(r["uncertain"])});
  for (auto& r : table("xid_codes.tsv"))
    kb.xids.push_back({std::atoi(r["xid"].c_str()), r["meaning"], r["layer"], r["action"], truthy(r["uncertain"])});
  for (auto& r : table("cuda_errors.tsv"))
    kb.cuda_errors.push_back({r["api"], std::atoi(r["code"].c_str()), r["name"], r["layer"], r["meaning"]});
  for (auto& r : table("failures.tsv"))
    kb.failures.push_back({r["id"], r["error_text"], r["environment"], r["layer"], r["root_cause"], r["fix"],
                           r["source_url"], r["cause_basis"]});
  for (auto& r : table("causes.tsv"))
    kb.causes.push_back({r["cause_id"], r["layer"], r["title"], r["explanation"], split_fixes(r["fix"])});
  for (auto& r : table("error_patterns.tsv")) {
    ErrorPattern p;
    p.id = r["pattern_id"];
    p.regex_text = r["regex"];
    p.re = std::regex(p.regex_text, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    std::istringstream is(r["causes"]);
    for (std::string c; is >> c;) p.causes.push_back(c);
    kb.patterns.push_back(std::move(p));
  }
  return kb;
}

// Model names as searchable keys: vendor words dropped, parenthesised aliases kept as extra keys.
std::vector<std::string> model_keys(const std::string& name) {
  std::vector<std::string> keys;
  std::string base = name, alias;
  if (auto open = name.find('('); open != std::string::npos) {
    base = name.substr(0, open);
    auto close = name.find(')', open);
    alias = name.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
  }
  auto strip_vendor = [](std::string s) {
    s = normalize_model_text(s);
    for (const char* v : {"nvidia ", "geforce ", "tesla "})
      if (s.starts_with(v)) s = s.substr(std::strlen(v));
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  keys.push_back(strip_vendor(base));
  if (alias.find(' ') != std::string::npos) keys.push_back(strip_vendor(alias));
  return keys;
}

}  // namespace

const char* driver_support_name(DriverSupport s) {
  switch (s) {
    case DriverSupport::ok: return "ok";
    case DriverSupport::minor_compat: return "ok only through minor-version compatibility";
    case DriverSupport::insufficient: return "insufficient";
    default: return "unknown";
  }
}

std::vector<std::vector<std::string>> parse_tsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::size_t i = 0;
  while (i < text.size() && rows.size() < 100000) {
    std::size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view line = text.substr(i, j - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) {
      std::vector<std::string> fields;
      std::size_t a = 0;
      while (a <= line.size()) {
        std::size_t b = line.find('\t', a);
        if (b == std::string_view::npos) b = line.size();
        std::string f(line.substr(a, b - a));
        // Fields quoted by the TSV writer: "a ""b""" -> a "b"
        if (f.size() >= 2 && f.front() == '"' && f.back() == '"') {
          f = f.substr(1, f.size() - 2);
          std::string unq;
          for (std::size_t k = 0; k < f.size(); ++k) {
            unq += f[k];
            if (f[k] == '"' && k + 1 < f.size() && f[k + 1] == '"') ++k;
          }
          f = unq;
        }
        fields.push_back(std::move(f));
        a = b + 1;
      }
      rows.push_back(std::move(fields));
    }
    i = j + 1;
  }
  return rows;
}

std::optional<std::string_view> knowledge_file(std::string_view name) { return detail::embedded_file(name); }

std::string normalize_model_text(std::string_view text) {
  std::string out;
  char prev = ' ';
  for (char c0 : text) {
    char c = char(std::tolower(static_cast<unsigned char>(c0)));
    bool alnum = std::isalnum(static_cast<unsigned char>(c));
    if (!alnum) c = ' ';
    // Split letter->digit boundaries so "rtx5080" reads as "rtx 5080" (but keep "5090d").
    if (alnum && std::isdigit(static_cast<unsigned char>(c)) && std::isalpha(static_cast<unsigned char>(prev)))
      out += ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) {
      prev = c;
      continue;
    }
    out += c;
    prev = c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

const KnowledgeBase& KnowledgeBase::get() {
  static const KnowledgeBase kb = load();
  return kb;
}

const DriverRequirement* KnowledgeBase::max_cuda_for_driver(const Version& driver) const {
  const DriverRequirement* best = nullptr;
  for (const auto& d : driver_requirements)
    if (d.toolkit_min <= driver && (!best || best->cuda < d.cuda)) best = &d;
  return best;
}

const DriverRequirement* KnowledgeBase::requirement_for_cuda(const Version& cuda) const {
  const DriverRequirement* ga = nullptr;
  for (const auto& d : driver_requirements) {
    if (cuda.parts.size() >= 3 && d.cuda == cuda) return &d;
    if (d.cuda.major() == cuda.major() && d.cuda.minor() == cuda.minor()) {
      // The lowest release of that minor is the GA (or the first published one).
      if (!ga || d.cuda < ga->cuda) ga = &d;
    }
  }
  return ga;
}

DriverSupport KnowledgeBase::runtime_support(const Version& cuda, const Version& driver, std::string* why) const {
  const DriverRequirement* req = requirement_for_cuda(cuda);
  if (!req) {
    if (why) *why = "CUDA " + cuda.str() + " is not in the driver table";
    return DriverSupport::unknown;
  }
  if (req->toolkit_min <= driver) {
    if (why) *why = req->label + " needs driver >= " + req->toolkit_min.str() + "; found " + driver.str();
    return DriverSupport::ok;
  }
  if (req->minor_compat_min && *req->minor_compat_min <= driver) {
    if (why)
      *why = req->label + " needs driver >= " + req->toolkit_min.str() + " for full support; " + driver.str() +
             " runs it only through minor-version compatibility (>= " + req->minor_compat_min->str() +
             "): no PTX JIT of its PTX, and APIs newer than the driver fail with cudaErrorCallRequiresNewerDriver";
    return DriverSupport::minor_compat;
  }
  if (why)
    *why = req->label + " needs driver >= " + req->toolkit_min.str() +
           (req->minor_compat_min ? " (>= " + req->minor_compat_min->str() + " with minor-version compatibility)" : "") +
           "; found " + driver.str();
  return DriverSupport::insufficient;
}

const GpuModel* KnowledgeBase::gpu_in_text(std::string_view text) const {
  const std::string hay = " " + normalize_model_text(text) + " ";
  const GpuModel* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& g : gpus) {
    for (const auto& key : model_keys(g.name)) {
      if (key.size() < 2) continue;
      std::size_t pos = 0;
      while ((pos = hay.find(key, pos)) != std::string::npos) {
        bool start_ok = hay[pos - 1] == ' ';
        char next = hay[pos + key.size()];
        bool end_ok = !std::isdigit(static_cast<unsigned char>(next));
        // "rtx 4060 ti" must not be taken for "rtx 4060": longest key wins below.
        if (start_ok && end_ok && key.size() > best_len) {
          best = &g;
          best_len = key.size();
        }
        ++pos;
      }
    }
  }
  return best;
}

const PtxIsaRow* KnowledgeBase::ptx_isa(const Version& isa) const {
  for (const auto& p : ptx_isas)
    if (p.isa.major() == isa.major() && p.isa.minor() == isa.minor()) return &p;
  return nullptr;
}

const PtxIsaRow* KnowledgeBase::ptx_isa_for_cuda(const Version& cuda) const {
  const PtxIsaRow* best = nullptr;
  for (const auto& p : ptx_isas)
    if (p.cuda.prefix(2) <= cuda.prefix(2) && (!best || best->isa < p.isa)) best = &p;
  return best;
}

const ToolkitArchRow* KnowledgeBase::toolkit_arch(const Version& cuda) const {
  Version mm = cuda.prefix(2);
  for (const auto& t : toolkit_archs)
    if (t.first.prefix(2) <= mm && mm <= t.last.prefix(2)) return &t;
  return nullptr;
}

std::vector<const TorchWheel*> KnowledgeBase::wheels(std::optional<Version> torch, std::string_view variant) const {
  std::vector<const TorchWheel*> out;
  for (const auto& w : torch_wheels) {
    if (torch && !(w.torch.major() == torch->major() && w.torch.minor() == torch->minor())) continue;
    if (!variant.empty() && w.variant != variant) continue;
    out.push_back(&w);
  }
  return out;
}

const XidCode* KnowledgeBase::xid(int code) const {
  for (const auto& x : xids)
    if (x.xid == code) return &x;
  return nullptr;
}

const CudaErrorCode* KnowledgeBase::cuda_error(std::string_view api, int code) const {
  for (const auto& e : cuda_errors)
    if (e.api == api && e.code == code) return &e;
  return nullptr;
}

const Cause* KnowledgeBase::cause(std::string_view id) const {
  for (const auto& c : causes)
    if (c.id == id) return &c;
  return nullptr;
}

}  // namespace strata::doctor
