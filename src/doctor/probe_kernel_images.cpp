// Layer 7, kernel images: lists the SASS/PTX in the framework's CUDA libraries and in the
// binaries the user names, and predicts "no kernel image is available" for each GPU.
#include "probes.hpp"
#include "strata/doctor/kernel_compat.hpp"

namespace strata::doctor {

namespace {

struct Target {
  std::string path, why;
  bool torch = false;
};

// Fixes for "no kernel image" on one GPU, naming its architecture: for PyTorch the first release
// whose wheels carry SASS for it (pytorch_wheels.tsv), for other binaries the -gencode to add.
std::vector<std::string> no_image_fixes(ProbeContext& ctx, const GpuFact& g, bool torch) {
  std::vector<std::string> fixes;
  const int sm = g.sm();
  const std::string cc = std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor), sms = std::to_string(sm);
  if (torch) {
    const TorchWheel* first = nullptr;
    for (const auto& w : ctx.kb.torch_wheels) {
      bool runs = false;  // SASS of the same major and a lower or equal minor
      for (int s : w.sass) runs |= s / 10 == sm / 10 && s <= sm;
      if (runs && (!first || w.torch < first->torch || (w.torch == first->torch && w.cuda < first->cuda))) first = &w;
    }
    if (first)
      fixes.push_back("pip install 'torch>=" + first->torch.str() + "' --index-url https://download.pytorch.org/whl/" + first->variant +
                      "   (PyTorch " + first->torch.str() + " " + first->variant + " is the first wheel with sm_" + sms + " kernels)");
  } else {
    fixes.push_back("Rebuild with -gencode arch=compute_" + sms + ",code=sm_" + sms + " for compute capability " + cc +
                    " (CMake: CMAKE_CUDA_ARCHITECTURES=" + sms + " or native; OpenCV-style builds: CUDA_ARCH_BIN=" + cc + ")");
  }
  if (const Cause* c = ctx.kb.cause("no_kernel_image")) fixes.insert(fixes.end(), c->fixes.begin(), c->fixes.end());
  return fixes;
}

}  // namespace

LayerReport probe_kernel_images(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::kernel_image;
  Facts& f = ctx.facts;
  std::optional<Version> driver = f.kernel_driver ? f.kernel_driver : f.libcuda_version;
  std::vector<Target> targets;  // `torch` marks PyTorch's own libraries (fixes name a wheel)
  for (const auto& p : ctx.opt.kernel_paths) targets.push_back({p, "named on the command line", false});
  for (const auto& fw : f.frameworks) {
    if (fw.package != "torch" || fw.lib_dir.empty() || fw.cuda.empty()) continue;
    for (const char* lib : {"libtorch_cuda.so"})
      if (ctx.sys.exists(fw.lib_dir + "/" + lib)) targets.push_back({fw.lib_dir + "/" + lib, "PyTorch " + fw.version, true});
    // torch's own answer, when Python was asked.
    if (!fw.arch_list.empty()) {
      std::set<ImageTarget> ts;
      for (const auto& a : fw.arch_list)
        if (auto t = parse_target_name(a)) ts.insert(*t);
      for (const auto& g : f.gpus) {
        if (!g.sm()) continue;
        RunCheck rc = check_gpu(ts, g.sm());
        auto& fd = L.add(rc.how == RunCheck::How::no_image ? Verdict::fail : Verdict::ok,
                         "PyTorch " + fw.version + " arch list on " + (g.name.empty() ? g.pci_address : g.name) + ": " + rc.detail);
        if (rc.how == RunCheck::How::no_image) {
          fd.cause_id = "no_kernel_image";
          fd.fixes = no_image_fixes(ctx, g, true);
        }
      }
    }
  }
  if (ctx.opt.deep_libraries)
    for (const auto& c : f.libraries) {
      if (!c.wins || c.name.rfind("libnvJitLink", 0) == 0) continue;  // nvJitLink is host code only
      // cuDNN 9's libcudnn.so.9 only dispatches: its GPU code is in the engine sub-libraries.
      std::string engines = path_dirname(c.real_path) + "/libcudnn_engines_precompiled.so.9";
      if (c.name == "libcudnn.so.9" && ctx.sys.exists(engines))
        targets.push_back({ctx.sys.canonical(engines).value_or(engines),
                           "GPU code of the cuDNN that wins the loader search (libcudnn.so.9 only dispatches)", false});
      else
        targets.push_back({c.real_path, "library that wins the loader search", false});
    }
  // Toolkit floors: CUDA 13 libraries start at sm_75, CUDA 12 at sm_50 ...
  for (const auto& rt : f.runtimes) {
    if (!rt.wins || !rt.version) continue;
    const ToolkitArchRow* row = ctx.kb.toolkit_arch(*rt.version);
    if (!row) continue;
    for (const auto& g : f.gpus)
      if (g.sm() && g.sm() < row->min_sm) {
        auto& fd = L.add(Verdict::warn, "CUDA " + rt.version->prefix(2).str() + " targets sm_" + std::to_string(row->min_sm) +
                                            " and newer; " + (g.name.empty() ? g.pci_address : g.name) + " is compute capability " +
                                            std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor));
        fd.evidence.push_back("libraries built with this toolkit have no code for the GPU (removed: " + row->removed + ")");
        fd.cause_id = "no_kernel_image";
      }
  }
  for (const auto& t : targets) {
    std::string err;
    auto file = ctx.sys.map(t.path, 8ull << 30, &err);
    if (!file) {
      L.add(Verdict::warn, "cannot read " + t.path + ": " + err);
      continue;
    }
    FatbinScanOptions opts;
    FatbinReport r = scan_any(file->bytes(), opts, &err);
    if (!err.empty()) {
      L.add(Verdict::warn, t.path + ": " + err);
      continue;
    }
    const auto scope = FatbinReport::Scope::runnable;
    std::string sass = r.listing(ImageKind::sass, scope), ptx = r.listing(ImageKind::ptx, scope);
    auto isa = r.max_ptx_isa(scope);
    auto& head = L.add(r.has_gpu_code() ? Verdict::ok : Verdict::not_applicable,
                       t.path + ": " + (r.has_gpu_code() ? "SASS " + (sass.empty() ? "none" : sass) + "; PTX " +
                                                               (ptx.empty() ? "none" : ptx + " (ISA " + isa->str() + ")")
                                                         : "no GPU code"));
    head.evidence.push_back(t.why + "; " + std::to_string(r.containers) + " fatbin containers, " + std::to_string(r.entries) + " entries");
    for (const auto& s : r.sections)
      if (s.name != ".nv_fatbin") head.evidence.push_back(std::to_string(s.entries) + " entries in " + s.name);
    for (const auto& w : r.warnings) head.evidence.push_back("warning: " + w);
    if (r.truncated) head.evidence.push_back("listing truncated at the scan limits");
    if (!r.has_gpu_code()) continue;
    for (const auto& g : f.gpus) {
      if (!g.sm()) continue;
      RunCheck rc = check_gpu(r, scope, g.sm(), driver, ctx.kb);
      Verdict v = rc.how == RunCheck::How::sass ? Verdict::ok
                  : rc.how == RunCheck::How::ptx_jit ? Verdict::warn
                                                     : Verdict::fail;
      auto& fd = L.add(v, "on " + (g.name.empty() ? g.pci_address : g.name) + ": " + rc.detail);
      if (rc.how == RunCheck::How::no_image) {
        fd.cause_id = "no_kernel_image";
        if (const Cause* c = ctx.kb.cause("no_kernel_image")) fd.cause = c->explanation;
        fd.fixes = no_image_fixes(ctx, g, t.torch);
      } else if (rc.how == RunCheck::How::ptx_needs_newer_driver) {
        fd.cause_id = "ptx_jit_too_old";
        if (const Cause* c = ctx.kb.cause("ptx_jit_too_old")) fd.fixes = c->fixes;
      } else if (rc.how == RunCheck::How::ptx_jit) {
        fd.evidence.push_back("first launch is slow (JIT); set CUDA_CACHE_MAXSIZE so the JIT cache keeps the result");
      }
    }
  }
  if (targets.empty() && L.findings.empty())
    L.add(Verdict::not_applicable, "No framework CUDA libraries or named binaries to inspect")
        .evidence.push_back("use `strata doctor kernels PATH...` (or --deep for the CUDA libraries)");
  if (f.gpus.empty() || std::none_of(f.gpus.begin(), f.gpus.end(), [](const GpuFact& g) { return g.sm() > 0; }))
    L.not_checked.push_back("no GPU with a known compute capability: images listed, not matched against a GPU");
  L.summary = std::to_string(targets.size()) + " binary(ies) inspected";
  return L;
}

}  // namespace strata::doctor
