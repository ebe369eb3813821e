// Internal: the context every probe shares and the probe entry points, one file each.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "strata/doctor/doctor.hpp"
#include "strata/doctor/knowledge.hpp"
#include "strata/doctor/loader.hpp"

namespace strata::doctor {

struct ProbeContext {
  ProbeContext(const SystemView& s, const DoctorOptions& o) : sys(s), opt(o), kb(KnowledgeBase::get()), loader(s) {}
  const SystemView& sys;
  const DoctorOptions& opt;
  const KnowledgeBase& kb;
  LoaderModel loader;
  Facts facts;
  std::optional<std::vector<std::string>> site_dirs_cache, extra_dirs_cache;  // filled on first use
};

LayerReport probe_hardware(ProbeContext& ctx);
LayerReport probe_kernel_driver(ProbeContext& ctx);
LayerReport probe_driver_userspace(ProbeContext& ctx);
LayerReport probe_runtime(ProbeContext& ctx);
LayerReport probe_libraries(ProbeContext& ctx);
LayerReport probe_frameworks(ProbeContext& ctx);
LayerReport probe_kernel_images(ProbeContext& ctx);
LayerReport probe_compute(ProbeContext& ctx);

// ---- shared helpers (lib_search.cpp) --------------------------------------------------------

struct FoundVersion {
  Version version;
  std::string source;  // "file name", "dist-info nvidia_cuda_runtime-13.0.96", "cuda_runtime_api.h"
};
// Version of the library at `real_path` (a path inside the view) named by its soname stem
// ("libcudart"): from a full version suffix, a nearby pip dist-info, version.json or a header.
std::optional<FoundVersion> library_version(const SystemView& sys, const std::string& real_path, std::string_view stem);
// "libcudnn_ops.so.9" -> "libcudnn_ops"
std::string soname_stem(std::string_view soname);
// Every copy of `soname` in the places ld.so or users would look, the winner marked.
std::vector<LibraryCopy> find_copies(ProbeContext& ctx, const std::string& soname);
// Directories holding CUDA libraries outside the loader's normal path (toolkits, pip wheels,
// conda), searched once and cached in the context's order.
const std::vector<std::string>& extra_library_dirs(ProbeContext& ctx);
// Python site-packages directories reachable from PATH, CONDA_PREFIX, VIRTUAL_ENV and ~/.local.
const std::vector<std::string>& site_packages_dirs(ProbeContext& ctx);
// Python interpreters on PATH (and in CONDA_PREFIX / VIRTUAL_ENV), deduplicated.
std::vector<std::string> find_pythons(ProbeContext& ctx);
// The CUDA toolkits installed (CUDA_HOME, CUDA_PATH, /usr/local/cuda, /usr/local/cuda-*, /opt/cuda).
std::vector<std::string> toolkit_roots(ProbeContext& ctx);
std::optional<FoundVersion> toolkit_version(const SystemView& sys, const std::string& root);

// "host path" for a path inside the view (for child processes, which see the real machine).
inline std::string host(const ProbeContext& ctx, const std::string& p) { return ctx.sys.host_path(p); }

}  // namespace strata::doctor
