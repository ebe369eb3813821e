// Layer 5, libraries: cuBLAS, cuBLASLt, cuDNN (and its sub-libraries), NCCL, nvJitLink: every
// copy, which one wins, shadowing, the CUDA major each was built for, and that major against
// the driver.
#include <map>
#include <regex>

#include "probes.hpp"

namespace strata::doctor {

namespace {

struct Family {
  const char* label;
  std::vector<const char*> sonames;
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"cuBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}},
      {"cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"}},
      {"cuDNN", {"libcudnn.so.9", "libcudnn.so.8"}},
      {"NCCL", {"libnccl.so.2"}},
      {"nvJitLink", {"libnvJitLink.so.13", "libnvJitLink.so.12"}},
  };
  return f;
}

// The CUDA major a library copy was built for: the soname for cuBLAS/nvJitLink, the wheel flavour
// (nvidia_cudnn_cu12, .../cu13/lib) or a NEEDED libcudart/libcublas for cuDNN and NCCL.
std::optional<int> built_for_cuda(ProbeContext& ctx, const LibraryCopy& c) {
  std::string stem = soname_stem(c.name);
  if (stem == "libcublas" || stem == "libcublasLt" || stem == "libnvJitLink") {
    auto v = Version::parse(c.name.substr(c.name.find(".so.") + 4));
    if (v) return v->major();
  }
  static const std::regex cu("(?:_cu|/cu)([0-9]{2})\\b");
  std::smatch m;
  if (std::regex_search(c.version_source, m, cu) || std::regex_search(c.real_path, m, cu)) return std::stoi(m[1].str());
  if (auto req = ctx.loader.load_requester(c.real_path))
    for (const auto& n : req->elf.needed)
      if (n.starts_with("libcudart.so.") || n.starts_with("libcublas.so.") || n.starts_with("libcublasLt.so."))
        if (auto v = Version::parse(n.substr(n.find(".so.") + 4))) return v->major();
  return std::nullopt;
}

}  // namespace

LayerReport probe_libraries(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::library;
  Facts& f = ctx.facts;
  for (const auto& fam : families()) {
    std::vector<LibraryCopy> copies;
    for (const char* s : fam.sonames)
      for (auto& c : find_copies(ctx, s)) copies.push_back(std::move(c));
    if (copies.empty()) continue;
    for (auto& c : copies) {
      auto major = built_for_cuda(ctx, c);
      std::string line = fam.label + std::string(" ") + (c.version ? c.version->str() : "(version unknown)") + " at " + c.real_path;
      if (major) line += ", built for CUDA " + std::to_string(*major);
      Verdict v = Verdict::ok;
      auto& fd = L.add(v, line);
      if (c.wins) fd.evidence.push_back("a plain dlopen(\"" + c.name + "\") loads this copy");
      if (!c.version_source.empty()) fd.evidence.push_back("version from " + c.version_source);
      if (major && f.driver_max_cuda && *major > f.driver_max_cuda->major()) {
        fd.verdict = Verdict::fail;
        L.verdict = worse(L.verdict, Verdict::fail);
        fd.cause_id = "driver_too_old";
        fd.cause = "Built for CUDA " + std::to_string(*major) + " but the driver supports CUDA up to " + f.driver_max_cuda->str() + ".";
        if (const DriverRequirement* r = ctx.kb.requirement_for_cuda(Version{{*major, 0}, ""}))
          fd.fixes = {"Upgrade the driver to >= " + r->toolkit_min.str(), "or install the CUDA " +
                      f.driver_max_cuda->prefix(1).str() + " build of " + fam.label};
      }
      // A library built for CUDA N needs a libcudart of major N somewhere (its wheel or toolkit).
      if (major && !f.runtimes.empty()) {
        bool runtime_found = false;
        for (const auto& rt : f.runtimes)
          if (rt.name.find(".so." + std::to_string(*major)) != std::string::npos) runtime_found = true;
        if (!runtime_found) {
          fd.verdict = worse(fd.verdict, Verdict::warn);
          L.verdict = worse(L.verdict, Verdict::warn);
          fd.evidence.push_back("no CUDA " + std::to_string(*major) + " runtime (libcudart.so." + std::to_string(*major) +
                                ") was found for it");
        }
      }
      // cuDNN 9 is split into sub-libraries that must sit next to libcudnn.so.9.
      if (c.name == "libcudnn.so.9") {
        std::string dir = path_dirname(c.path), missing;
        for (const char* sub : {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
                                "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
                                "libcudnn_heuristic.so.9"})
          if (!ctx.sys.exists(dir + "/" + sub)) missing += std::string(missing.empty() ? "" : ", ") + sub;
        if (!missing.empty()) {
          auto& w = L.add(Verdict::warn, "cuDNN 9 at " + dir + " lacks sub-libraries: " + missing);
          w.fixes = {"Reinstall cuDNN completely (pip install --force-reinstall nvidia-cudnn-cuXX)"};
        }
      }
      f.libraries.push_back(c);
    }
    // Shadowing: the winner of a soname is older than another copy of the same soname.
    std::map<std::string, std::vector<const LibraryCopy*>> by_name;
    for (const auto& c : copies) by_name[c.name].push_back(&c);
    for (const auto& [name, list] : by_name) {
      const LibraryCopy* win = nullptr;
      const LibraryCopy* newest = nullptr;
      for (const auto* c : list) {
        if (c->wins) win = c;
        if (c->version && (!newest || *newest->version < *c->version)) newest = c;
      }
      if (win && newest && win->version && *win->version < *newest->version) {
        auto res = ctx.loader.resolve(name);
        const std::string line = name + ": the loader picks " + win->real_path + " (" + win->version->str() +
                                 ") although a newer " + newest->version->str() + " is at " + newest->real_path;
        // Only LD_LIBRARY_PATH (and RPATH) come before a program's own DT_RUNPATH. An older copy
        // found through ld.so.cache or the system folders is what a plain dlopen gets, but the
        // programs shipped with the newer copy (pip wheels: torch) still load theirs through
        // RUNPATH, so it is a fact to know, not a fault (NVIDIA's CUDA images have both).
        if (res.via == "ld.so.cache" || res.via == "system dir") {
          auto& fd = L.add(Verdict::ok, line);
          fd.evidence.push_back(res.summary());
          fd.evidence.push_back("programs whose RUNPATH leads to " + path_dirname(newest->real_path) +
                                " still load the newer copy: RUNPATH is searched before " + res.via);
          continue;
        }
        auto& fd = L.add(Verdict::warn, line);
        fd.cause_id = "shadowed_library";
        fd.cause = "Programs built against the newer copy (pip wheels found through RUNPATH) get the older one when it "
                   "comes first: LD_LIBRARY_PATH beats DT_RUNPATH.";
        fd.evidence.push_back(res.summary());
        if (res.via == "LD_LIBRARY_PATH")
          fd.fixes = {"Remove " + path_dirname(*res.path) + " from LD_LIBRARY_PATH"};
        else
          fd.fixes = {"Remove or update the old copy, or put the newer directory first"};
      }
    }
  }
  if (L.findings.empty()) L.add(Verdict::not_applicable, "No cuBLAS, cuDNN, NCCL or nvJitLink found");
  if (!f.driver_max_cuda) L.not_checked.push_back("library/driver compatibility not checked: no driver version known");
  L.summary = std::to_string(f.libraries.size()) + " library copy(ies)";
  return L;
}

}  // namespace strata::doctor
