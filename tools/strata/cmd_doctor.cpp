// `strata doctor`: diagnose the GPU compute stack layer by layer (doctor.hpp), `explain` an
// error message, list the GPU code in binaries (`kernels`), and measure achieved vs theoretical
// compute (--compute). Also hosts the hidden child modes the doctor runs in separate processes.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "commands.hpp"
#include "strata/core/timer.hpp"
#include "strata/doctor/doctor.hpp"
#include "strata/doctor/explain.hpp"
#include "strata/doctor/fatbin.hpp"
#include "strata/doctor/kernel_compat.hpp"
#include "strata/doctor/loader.hpp"

#ifdef STRATA_CLI_BENCH
#include "strata/blas/level3.hpp"
#endif

namespace strata::cli {

namespace {

namespace dr = strata::doctor;

std::string self_executable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, std::size_t(n)) : std::string();
}

// Achieved single-precision GEMM rate through strata::blas: n^3 with n = 1024 up to 2 threads,
// growing with the cube root of the thread count (2048 at 16), after one untimed call, best of
// three. A fixed 1024^3 gave each of 16 threads two row panels and ~0.5 ms: on a healthy
// 16-core VM the doctor read 27% of peak and warned.
dr::GemmBenchmark make_cpu_gemm() {
#ifdef STRATA_CLI_BENCH
  return [](int threads) {
    const double scale = std::cbrt(std::max(1.0, threads / 2.0));
    const blas::index_t n = std::min<blas::index_t>(4096, blas::index_t(std::lround(1024 * scale / 256)) * 256);
    std::vector<float> a(std::size_t(n) * n, 1.0f), b(std::size_t(n) * n, 0.5f), c(std::size_t(n) * n, 0.0f);
    blas::Handle h;
    h.set_num_threads(threads);
    blas::gemm<float>(h, blas::Op::N, blas::Op::N, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      strata::Timer t;
      blas::gemm<float>(h, blas::Op::N, blas::Op::N, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      double s = t.seconds();
      if (s > 0) best = std::max(best, 2.0 * double(n) * n * n / s * 1e-9);
    }
    return best;
  };
#else
  return {};
#endif
}

struct DoctorArgs {
  bool json = false, no_python = false, compute = false, deep = false, no_driver_api = false;
  std::string colour = "auto", root;
  double timeout = 10;
  double compute_timeout = 120;
  std::vector<std::string> child;
  // explain
  std::vector<std::string> explain_text;
  bool explain_no_probe = false, explain_json = false;
  // kernels
  std::vector<std::string> kernel_paths;
  std::vector<std::string> kernel_gpus;
  bool kernels_json = false;
};

dr::SystemView make_view(const DoctorArgs& a) {
  dr::SystemView live = dr::SystemView::live();
  if (a.root.empty()) return live;
  return dr::SystemView(a.root, live.environment());
}

bool use_colour(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return isatty(1) && !std::getenv("NO_COLOR");
}

dr::DoctorOptions options_from(const DoctorArgs& a) {
  dr::DoctorOptions o;
  o.helper_executable = self_executable();
  o.child_timeout_s = a.timeout;
  o.compute_timeout_s = a.compute_timeout;
  o.probe_python = !a.no_python;
  o.driver_api = !a.no_driver_api;
  o.deep_libraries = a.deep;
  o.compute = a.compute;
  o.cpu_gemm = make_cpu_gemm();
  o.kernel_paths = a.kernel_paths;
  return o;
}

int run_child_mode(const std::vector<std::string>& c) {
  if (c.size() == 2 && c[0] == "driver-api") return dr::child_driver_api(c[1]);
  if (c.size() == 3 && c[0] == "gpu-compute") return dr::child_gpu_compute(c[1], c[2]);
  std::fprintf(stderr, "strata doctor: unknown child mode\n");
  return 2;
}

int run_kernels(const DoctorArgs& a) {
  std::vector<int> sms;
  for (const auto& g : a.kernel_gpus) {
    auto v = dr::Version::parse(g);
    if (!v || v->parts.size() != 2) {
      std::fprintf(stderr, "strata doctor kernels: --gpu wants a compute capability such as 8.6, got '%s'\n", g.c_str());
      return 2;
    }
    sms.push_back(v->major() * 10 + v->minor());
  }
  const auto& kb = dr::KnowledgeBase::get();
  nlohmann::json out = nlohmann::json::array();
  int rc = 0;
  for (const auto& path : a.kernel_paths) {
    std::string err;
    auto f = dr::MappedFile::open(path, 8ull << 30, &err);
    dr::FatbinReport r;
    if (f) r = dr::scan_any(f->bytes(), {}, &err);
    if (!f || !err.empty()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), err.c_str());
      rc = 1;
      continue;
    }
    const auto scope = dr::FatbinReport::Scope::runnable;
    nlohmann::json entry = {{"path", path}, {"containers", r.containers}, {"entries", r.entries}, {"truncated", r.truncated}};
    nlohmann::json targets = nlohmann::json::array();
    for (const auto& [t, st] : r.targets) {
      std::vector<std::string> secs(st.sections.begin(), st.sections.end());
      targets.push_back({{"target", t.name()}, {"entries", st.entries}, {"version", st.max_version.str()}, {"sections", secs},
                         {"zstd", st.compressed_zstd}, {"lz4", st.compressed_lz4}});
    }
    entry["targets"] = targets;
    entry["sass"] = r.listing(dr::ImageKind::sass, scope);
    entry["ptx"] = r.listing(dr::ImageKind::ptx, scope);
    entry["ltoir"] = r.listing(dr::ImageKind::ltoir, dr::FatbinReport::Scope::all);
    nlohmann::json checks = nlohmann::json::array();
    for (int sm : sms) {
      dr::RunCheck c = dr::check_gpu(r, scope, sm, std::nullopt, kb);
      checks.push_back({{"compute_capability", std::to_string(sm / 10) + "." + std::to_string(sm % 10)},
                        {"runs", c.how != dr::RunCheck::How::no_image}, {"via", c.target}, {"detail", c.detail}});
      if (c.how == dr::RunCheck::How::no_image) rc = 1;
    }
    entry["gpus"] = checks;
    if (!a.kernels_json) {
      std::printf("%s\n", path.c_str());
      std::printf("  SASS   %s\n", entry["sass"].get<std::string>().empty() ? "none" : entry["sass"].get<std::string>().c_str());
      auto isa = r.max_ptx_isa(scope);
      std::printf("  PTX    %s%s\n", entry["ptx"].get<std::string>().empty() ? "none" : entry["ptx"].get<std::string>().c_str(),
                  isa ? (" (ISA " + isa->str() + ")").c_str() : "");
      if (!entry["ltoir"].get<std::string>().empty()) std::printf("  LTO-IR %s\n", entry["ltoir"].get<std::string>().c_str());
      for (const auto& s : r.sections)
        std::printf("  %-16s %llu containers, %llu entries%s\n", s.name.c_str(), static_cast<unsigned long long>(s.containers),
                    static_cast<unsigned long long>(s.entries), s.name == "__nv_relfatbin" ? " (pre-link, not loaded)" : "");
      for (const auto& w : r.warnings) std::printf("  warning: %s\n", w.c_str());
      for (const auto& c : checks)
        std::printf("  on %s: %s\n", c["compute_capability"].get<std::string>().c_str(), c["detail"].get<std::string>().c_str());
    }
    out.push_back(entry);
  }
  if (a.kernels_json) std::printf("%s\n", out.dump(2).c_str());
  return rc;
}

int run_explain(const DoctorArgs& a) {
  std::string text;
  for (const auto& t : a.explain_text) text += (text.empty() ? "" : " ") + t;
  if (text.empty() || text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    std::fprintf(stderr, "strata doctor explain: give the error text as an argument or on stdin\n");
    return 2;
  }
  dr::SystemView sys = make_view(a);
  std::optional<dr::Report> report;
  std::optional<dr::LoaderModel> loader;
  dr::MachineEvidence m;
  if (!a.explain_no_probe) {
    dr::DoctorOptions o = options_from(a);
    o.probe_python = false;  // fast: explain is interactive
    o.compute = false;
    report = dr::run_doctor(sys, o);
    loader.emplace(sys);
    m = {&*report, &*loader};
  }
  dr::Explanation e = dr::explain(text, dr::KnowledgeBase::get(), m);
  if (a.explain_json) std::printf("%s\n", dr::render_explanation_json(e).c_str());
  else std::printf("%s", dr::render_explanation_text(e, use_colour(a.colour)).c_str());
  return e.causes.empty() ? 1 : 0;
}

}  // namespace

void add_doctor_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DoctorArgs>();
  auto* cmd = app.add_subcommand("doctor", "Diagnose the GPU compute stack layer by layer; explain errors; measure compute");
  cmd->add_flag("--json", args->json, "Print the report as JSON (schema strata-doctor/1, see docs/doctor.md)");
  cmd->add_flag("--no-python", args->no_python, "Do not run Python to ask PyTorch/JAX/CuPy (read files only)");
  cmd->add_flag("--no-driver-api", args->no_driver_api, "Do not query the CUDA driver API in a child process");
  cmd->add_flag("--compute", args->compute, "Also measure achieved vs theoretical compute (CPU GEMM; GPU cuBLAS)");
  cmd->add_flag("--deep", args->deep, "Also list the GPU code inside the CUDA libraries found (slower)");
  cmd->add_option("--color", args->colour, "Colour: auto (terminal only), always, never")->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("--root", args->root, "Inspect a system image rooted at DIR instead of / (fixtures, chroots)")->check(CLI::ExistingDirectory);
  cmd->add_option("--timeout", args->timeout, "Seconds allowed for each child process (driver API)")->check(CLI::PositiveNumber);
  cmd->add_option("--compute-timeout", args->compute_timeout,
                  "Seconds allowed for the GPU measurement child of --compute (default 120)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--child", args->child, "internal: run a child helper mode")->group("")->expected(1, 3);
  cmd->require_subcommand(0, 1);

  auto* ex = cmd->add_subcommand("explain", "Explain a CUDA/driver error message (argument or stdin)");
  ex->add_option("text", args->explain_text, "The error text ('-' or nothing: read stdin)");
  ex->add_flag("--no-probe", args->explain_no_probe, "Judge from the text only; do not probe this machine");
  ex->add_flag("--json", args->explain_json, "Print JSON (schema strata-doctor-explain/1)");
  ex->callback([args, &exit_code] { exit_code = run_explain(*args); });

  auto* kc = cmd->add_subcommand("kernels", "List SASS/PTX targets in binaries and check them against GPUs");
  kc->add_option("paths", args->kernel_paths, "Shared objects, executables, objects or .fatbin files")->required()->check(CLI::ExistingFile);
  kc->add_option("--gpu", args->kernel_gpus, "Compute capability to check against, e.g. 8.6 (repeatable)");
  kc->add_flag("--json", args->kernels_json, "Print JSON");
  kc->callback([args, &exit_code] { exit_code = run_kernels(*args); });

  cmd->callback([cmd, args, &exit_code] {
    if (!args->child.empty()) {
      exit_code = run_child_mode(args->child);
      return;
    }
    if (!cmd->get_subcommands().empty()) return;  // explain / kernels ran their own callbacks
    dr::SystemView sys = make_view(*args);
    dr::Report report = dr::run_doctor(sys, options_from(*args));
    std::string text = args->json ? dr::render_json(report) + "\n" : dr::render_text(report, use_colour(args->colour));
    std::fwrite(text.data(), 1, text.size(), stdout);
    exit_code = report.exit_code();
  });
}

}  // namespace strata::cli
