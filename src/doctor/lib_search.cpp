// Finding library copies and their versions, the way a user would when asked "which cuDNN do
// I have?": loader path, toolkits, pip wheels, conda, with the version read from files.
#include <algorithm>
#include <regex>
#include <set>

#include "probes.hpp"

namespace strata::doctor {

namespace {

// pip distribution prefix for a library stem (dist-info dirs are named <prefix>[_cuXX]-<ver>.dist-info).
const char* dist_prefix(std::string_view stem) {
  struct Map { const char* stem; const char* dist; };
  static const Map maps[] = {{"libcudart", "nvidia_cuda_runtime"}, {"libcublasLt", "nvidia_cublas"},
                             {"libcublas", "nvidia_cublas"},       {"libcudnn", "nvidia_cudnn"},
                             {"libnccl", "nvidia_nccl"},           {"libnvJitLink", "nvidia_nvjitlink"},
                             {"libnvrtc", "nvidia_cuda_nvrtc"},    {"libcufft", "nvidia_cufft"},
                             {"libcurand", "nvidia_curand"},       {"libcusparse", "nvidia_cusparse"},
                             {"libcusolver", "nvidia_cusolver"},   {"libcupti", "nvidia_cuda_cupti"}};
  for (const auto& m : maps)
    if (stem == m.stem || (std::string_view(m.stem) == "libcudnn" && stem.starts_with("libcudnn"))) return m.dist;
  return nullptr;
}

// Version from "nvidia_cudnn_cu13-9.19.0.56.dist-info" if it starts with `prefix`.
std::optional<Version> dist_version(const std::string& name, std::string_view prefix) {
  if (!name.starts_with(prefix) || !name.ends_with(".dist-info")) return std::nullopt;
  std::string rest = name.substr(prefix.size(), name.size() - prefix.size() - 10);
  // Allow an optional "_cuXX" flavour between the prefix and the version.
  static const std::regex re("^(_cu[0-9]+)?-([0-9][0-9.]*)$");
  std::smatch m;
  if (!std::regex_match(rest, m, re)) return std::nullopt;
  return Version::parse(m[2].str());
}

std::optional<FoundVersion> version_from_header(const SystemView& sys, const std::string& include_dir,
                                                std::string_view stem) {
  if (stem == "libcudart") {
    if (auto h = sys.read_text(include_dir + "/cuda_runtime_api.h", 1 << 20)) {
      static const std::regex re("#define\\s+CUDART_VERSION\\s+([0-9]+)");
      std::smatch m;
      if (std::regex_search(*h, m, re)) {
        int v = std::stoi(m[1].str());
        Version ver;
        ver.parts = {v / 1000, (v % 1000) / 10};
        return FoundVersion{ver, include_dir + "/cuda_runtime_api.h"};
      }
    }
  }
  if (stem.starts_with("libcudnn")) {
    if (auto h = sys.read_text(include_dir + "/cudnn_version.h", 1 << 16)) {
      static const std::regex re("#define\\s+CUDNN_MAJOR\\s+([0-9]+)[\\s\\S]*#define\\s+CUDNN_MINOR\\s+([0-9]+)[\\s\\S]*#define\\s+CUDNN_PATCHLEVEL\\s+([0-9]+)");
      std::smatch m;
      if (std::regex_search(*h, m, re)) {
        Version ver;
        ver.parts = {std::stoi(m[1].str()), std::stoi(m[2].str()), std::stoi(m[3].str())};
        return FoundVersion{ver, include_dir + "/cudnn_version.h"};
      }
    }
  }
  return std::nullopt;
}

void add_unique(std::vector<std::string>& v, std::set<std::string>& seen, const std::string& d) {
  if (d.empty()) return;
  std::string n = path_normalize(d);
  if (seen.insert(n).second) v.push_back(n);
}

}  // namespace

std::string soname_stem(std::string_view soname) {
  auto pos = soname.find(".so");
  return std::string(pos == std::string_view::npos ? soname : soname.substr(0, pos));
}

std::optional<FoundVersion> library_version(const SystemView& sys, const std::string& real_path, std::string_view stem) {
  // 1. A full version in the file name: libcudart.so.12.4.127, libcuda.so.580.65.06.
  std::string base = path_basename(real_path);
  if (auto pos = base.find(".so."); pos != std::string::npos) {
    if (auto v = Version::parse(base.substr(pos + 4)); v && v->parts.size() >= 2)
      return FoundVersion{*v, "file name " + base};
  }
  // 2. A pip dist-info (wheel layout: site-packages/nvidia/<pkg>/lib/lib.so; or a toolkit
  //    installed from wheels with a dist-info/ folder next to lib64/).
  if (const char* prefix = dist_prefix(stem)) {
    std::string dir = path_dirname(real_path);
    for (int up = 0; up < 4 && dir != "/"; ++up) {
      dir = path_dirname(dir);
      for (const std::string& where : {dir, dir + "/dist-info"}) {
        for (const auto& e : sys.list_dir(where, 20000)) {
          if (!e.is_dir) continue;
          if (auto v = dist_version(e.name, prefix)) return FoundVersion{*v, "dist-info " + e.name};
        }
      }
    }
  }
  // 3. version.json of a toolkit (CUDA >= 11.1) for the runtime.
  std::string root = path_dirname(path_dirname(real_path));
  if (stem == "libcudart") {
    if (auto j = sys.read_text(root + "/version.json", 1 << 16)) {
      static const std::regex re("\"cuda_cudart\"\\s*:\\s*\\{[^}]*\"version\"\\s*:\\s*\"([0-9.]+)\"");
      std::smatch m;
      if (std::regex_search(*j, m, re))
        if (auto v = Version::parse(m[1].str())) return FoundVersion{*v, root + "/version.json"};
    }
  }
  // 4. Headers next to the library.
  for (const std::string& inc : {root + "/include", path_dirname(real_path) + "/../include"})
    if (auto v = version_from_header(sys, path_normalize(inc), stem)) return v;
  return std::nullopt;
}

std::vector<std::string> toolkit_roots(ProbeContext& ctx) {
  std::vector<std::string> roots;
  std::set<std::string> seen;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (auto v = ctx.sys.env(var); v && ctx.sys.is_dir(*v)) add_unique(roots, seen, ctx.sys.canonical(*v).value_or(*v));
  for (const std::string& base : {std::string("/usr/local"), std::string("/opt")}) {
    for (const auto& e : ctx.sys.list_dir(base, 4096)) {
      if (!e.is_dir || !(e.name == "cuda" || e.name.starts_with("cuda-"))) continue;
      std::string p = base + "/" + e.name;
      if (ctx.sys.exists(p + "/bin/nvcc") || ctx.sys.is_dir(p + "/lib64") || ctx.sys.is_dir(p + "/targets"))
        add_unique(roots, seen, ctx.sys.canonical(p).value_or(p));
    }
  }
  return roots;
}

std::optional<FoundVersion> toolkit_version(const SystemView& sys, const std::string& root) {
  if (auto j = sys.read_text(root + "/version.json", 1 << 16)) {
    static const std::regex re("\"cuda\"\\s*:\\s*\\{[^}]*\"version\"\\s*:\\s*\"([0-9.]+)\"");
    std::smatch m;
    if (std::regex_search(*j, m, re))
      if (auto v = Version::parse(m[1].str())) return FoundVersion{*v, root + "/version.json"};
  }
  if (auto t = sys.read_text(root + "/version.txt", 4096))
    if (auto v = Version::find_in(*t, 2)) return FoundVersion{*v, root + "/version.txt"};
  for (const auto& e : sys.list_dir(root + "/dist-info", 1000))
    if (auto v = dist_version(e.name, "nvidia_cuda_nvcc")) return FoundVersion{*v, root + "/dist-info/" + e.name};
  if (auto h = sys.read_text(root + "/include/cuda.h", 1 << 22)) {
    static const std::regex re("#define\\s+CUDA_VERSION\\s+([0-9]+)");
    std::smatch m;
    if (std::regex_search(*h, m, re)) {
      int v = std::stoi(m[1].str());
      Version ver;
      ver.parts = {v / 1000, (v % 1000) / 10};
      return FoundVersion{ver, root + "/include/cuda.h"};
    }
  }
  return std::nullopt;
}

std::vector<std::string> find_pythons(ProbeContext& ctx) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::vector<std::string> dirs;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (auto v = ctx.sys.env(var)) dirs.push_back(*v + "/bin");
  for (const auto& d : ctx.sys.env_list("PATH")) dirs.push_back(d);
  for (const auto& d : dirs) {
    if (!d.starts_with('/')) continue;
    for (const char* name : {"python3", "python"}) {
      std::string p = path_join(d, name);
      if (!ctx.sys.is_regular(p)) continue;
      std::string real = ctx.sys.canonical(p).value_or(p);
      // pyenv shims are shell scripts that pick an interpreter; keep them (they honour the env).
      if (seen.insert(real).second) out.push_back(p);
      break;
    }
    if (out.size() >= 8) break;
  }
  return out;
}

const std::vector<std::string>& site_packages_dirs(ProbeContext& ctx) {
  if (ctx.site_dirs_cache) return *ctx.site_dirs_cache;
  auto& dirs = ctx.site_dirs_cache.emplace();
  std::set<std::string> seen;
  std::vector<std::string> prefixes;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (auto v = ctx.sys.env(var)) prefixes.push_back(*v);
  for (const auto& py : find_pythons(ctx)) {
    std::string real = ctx.sys.canonical(py).value_or(py);
    prefixes.push_back(path_dirname(path_dirname(real)));
    prefixes.push_back(path_dirname(path_dirname(py)));
  }
  if (auto home = ctx.sys.env("HOME")) prefixes.push_back(*home + "/.local");
  prefixes.push_back("/usr");
  prefixes.push_back("/usr/local");
  for (const auto& p : prefixes) {
    for (const std::string& lib : {p + "/lib", p + "/lib64"}) {
      for (const auto& e : ctx.sys.list_dir(lib, 4096)) {
        if (!e.is_dir || !e.name.starts_with("python3")) continue;
        for (const char* sub : {"site-packages", "dist-packages"}) {
          std::string d = lib + "/" + e.name + "/" + sub;
          if (ctx.sys.is_dir(d)) add_unique(dirs, seen, ctx.sys.canonical(d).value_or(d));
        }
      }
    }
  }
  if (ctx.sys.is_dir("/usr/lib/python3/dist-packages")) add_unique(dirs, seen, "/usr/lib/python3/dist-packages");
  return dirs;
}

const std::vector<std::string>& extra_library_dirs(ProbeContext& ctx) {
  if (ctx.extra_dirs_cache) return *ctx.extra_dirs_cache;
  auto& dirs = ctx.extra_dirs_cache.emplace();
  std::set<std::string> seen;
  for (const auto& root : toolkit_roots(ctx)) {
    for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib", "/targets/sbsa-linux/lib", "/compat"})
      if (ctx.sys.is_dir(root + sub)) add_unique(dirs, seen, ctx.sys.canonical(root + sub).value_or(root + sub));
  }
  for (const auto& sp : site_packages_dirs(ctx)) {
    // pip wheels: nvidia/<component>/lib (cu12) and nvidia/cu13/lib (CUDA 13 wheels).
    for (const auto& e : ctx.sys.list_dir(sp + "/nvidia", 256))
      if (e.is_dir && ctx.sys.is_dir(sp + "/nvidia/" + e.name + "/lib")) add_unique(dirs, seen, sp + "/nvidia/" + e.name + "/lib");
    if (ctx.sys.is_dir(sp + "/torch/lib")) add_unique(dirs, seen, sp + "/torch/lib");
  }
  if (auto conda = ctx.sys.env("CONDA_PREFIX")) add_unique(dirs, seen, *conda + "/lib");
  if (ctx.sys.is_dir("/usr/lib/wsl/lib")) add_unique(dirs, seen, "/usr/lib/wsl/lib");
  return dirs;
}

std::vector<LibraryCopy> find_copies(ProbeContext& ctx, const std::string& soname) {
  std::vector<LibraryCopy> out;
  std::set<std::string> seen_real;
  Resolution winner = ctx.loader.resolve(soname);
  std::string winner_real = winner.path ? ctx.sys.canonical(*winner.path).value_or(*winner.path) : "";
  std::vector<std::string> dirs;
  for (const auto& [d, src] : ctx.loader.search_dirs()) dirs.push_back(d);
  if (winner.path) dirs.insert(dirs.begin(), path_dirname(*winner.path));
  if (const auto* e = ctx.loader.cache().find(soname, ctx.loader.machine())) dirs.push_back(path_dirname(e->path));
  for (const auto& d : system_library_dirs(ctx.loader.machine())) dirs.push_back(d);
  for (const auto& d : extra_library_dirs(ctx)) dirs.push_back(d);
  for (const auto& d : dirs) {
    std::string p = path_join(d, soname);
    if (ctx.loader.check_candidate(p) != "found") continue;
    std::string real = ctx.sys.canonical(p).value_or(p);
    if (!seen_real.insert(real).second) continue;
    LibraryCopy c;
    c.name = soname;
    c.path = p;
    c.real_path = real;
    if (auto v = library_version(ctx.sys, real, soname_stem(soname))) {
      c.version = v->version;
      c.version_source = v->source;
    }
    c.wins = !winner_real.empty() && real == winner_real;
    out.push_back(std::move(c));
    if (out.size() >= 32) break;
  }
  return out;
}

}  // namespace strata::doctor
