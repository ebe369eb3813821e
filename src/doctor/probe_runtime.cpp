// Layer 4, CUDA runtime: every libcudart reachable (resolved as ld.so would), the toolkits and
// nvcc, each compared with what the driver supports.
#include "probes.hpp"

namespace strata::doctor {

namespace {

const char* kCudartSonames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so.10.2",
                                "libcudart.so.10.1", "libcudart.so.10.0"};

// Major.minor the runtime implements: the version if known, else the soname's major.
std::optional<Version> runtime_cuda(const LibraryCopy& c) {
  if (c.version) return c.version->prefix(2);
  auto pos = c.name.find(".so.");
  if (auto v = Version::parse(c.name.substr(pos + 4))) return v->prefix(2);
  return std::nullopt;
}

}  // namespace

LayerReport probe_runtime(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::runtime;
  Facts& f = ctx.facts;
  std::optional<Version> driver = f.kernel_driver ? f.kernel_driver : f.libcuda_version;

  for (const char* soname : kCudartSonames) {
    for (auto& c : find_copies(ctx, soname)) {
      std::string line = c.real_path + (c.version ? " (" + c.version->str() + ")" : " (version unknown)");
      auto cuda = runtime_cuda(c);
      Verdict v = Verdict::ok;
      std::string why;
      if (cuda && driver) {
        DriverSupport s = ctx.kb.runtime_support(*cuda, *driver, &why);
        v = s == DriverSupport::insufficient ? Verdict::fail : s == DriverSupport::minor_compat ? Verdict::warn : Verdict::ok;
        line += ": " + std::string(driver_support_name(s)) + " with driver " + driver->str();
      }
      auto& fd = L.add(v, line);
      if (c.wins) fd.evidence.push_back("a plain dlopen(\"" + c.name + "\") loads this copy");
      if (!c.version_source.empty()) fd.evidence.push_back("version from " + c.version_source);
      if (!why.empty()) fd.evidence.push_back(why);
      if (v == Verdict::fail) {
        fd.cause_id = "driver_too_old";
        fd.cause = "This CUDA " + cuda->str() + " runtime needs a newer driver than " + driver->str() + ".";
        if (const DriverRequirement* r = ctx.kb.requirement_for_cuda(*cuda))
          fd.fixes = {"Upgrade the NVIDIA driver to >= " + r->toolkit_min.str() + " (" + r->label + ")",
                      "or use a build made for CUDA <= " + (f.driver_max_cuda ? f.driver_max_cuda->str() : std::string("the driver's CUDA"))};
      }
      f.runtimes.push_back(std::move(c));
    }
  }
  if (f.runtimes.empty())
    L.add(Verdict::not_applicable, "No libcudart found on the loader path or in toolkits/pip wheels")
        .evidence.push_back("applications may still bundle their own (statically linked or in a wheel not found here)");

  for (const auto& root : toolkit_roots(ctx)) {
    auto v = toolkit_version(ctx.sys, root);
    if (!f.toolkit_version && v) {
      f.toolkit_version = v->version;
      f.toolkit_path = root;
    }
    bool nvcc = ctx.sys.exists(root + "/bin/nvcc");
    std::string line = "CUDA toolkit " + (v ? v->version.str() : std::string("(version unknown)")) + " at " + root +
                       (nvcc ? ", nvcc present" : ", no nvcc");
    Verdict verdict = Verdict::ok;
    std::string why;
    if (v && driver) {
      DriverSupport s = ctx.kb.runtime_support(v->version.prefix(2), *driver, &why);
      verdict = s == DriverSupport::insufficient ? Verdict::warn : Verdict::ok;  // programs may bundle older runtimes
      line += ": " + std::string(driver_support_name(s)) + " with driver " + driver->str();
    }
    auto& fd = L.add(verdict, line);
    if (v) fd.evidence.push_back("version from " + v->source);
    if (!why.empty()) fd.evidence.push_back(why);
    if (v)
      if (const ToolkitArchRow* a = ctx.kb.toolkit_arch(v->version))
        fd.evidence.push_back("compiles for sm_" + std::to_string(a->min_sm) + " .. sm_" + std::to_string(a->max_sm) +
                              (a->uncertain ? " (uncertain)" : ""));
  }
  // The nvcc a user gets by typing `nvcc`.
  for (const auto& d : ctx.sys.env_list("PATH")) {
    if (!d.starts_with('/') || !ctx.sys.exists(d + "/nvcc")) continue;
    std::string real = ctx.sys.canonical(d + "/nvcc").value_or(d + "/nvcc");
    std::string root = path_dirname(path_dirname(real));
    if (!f.toolkit_path.empty() && root != f.toolkit_path) {
      auto v = toolkit_version(ctx.sys, root);
      L.add(Verdict::warn, "nvcc on PATH (" + real + ") is from another toolkit than " + f.toolkit_path +
                               (v ? " (" + v->version.str() + ")" : ""));
    } else {
      L.findings.back().evidence.push_back("nvcc on PATH: " + real);
    }
    break;
  }
  if (!driver) L.not_checked.push_back("runtime/driver compatibility not checked: no driver version known");
  L.summary = f.runtimes.empty() ? "no libcudart" : std::to_string(f.runtimes.size()) + " libcudart copy(ies)";
  return L;
}

}  // namespace strata::doctor
