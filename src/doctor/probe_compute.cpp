// Layer 8, compute (--compute): theoretical peak against what a GEMM actually reaches, on the
// CPU (strata's measured peak vs the caller's GEMM) and on each GPU (SMs x FP32 lanes x clock vs
// a cuBLAS SGEMM, and bus width x memory clock vs a device-to-device copy, run in a child).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include "probes.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/env.hpp"
#include "strata/core/peak.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/doctor/child_process.hpp"

namespace strata::doctor {

namespace {

std::string fmt(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, unit);
  return buf;
}

// FP32 FMA lanes per SM by architecture (CUDA programming guide's throughput table).
int fp32_lanes_per_sm(int sm) {
  switch (sm / 10) {
    case 6: return sm == 60 ? 64 : 128;
    case 7: return 64;
    case 8: return sm == 80 ? 64 : 128;
    default: return 128;
  }
}

// cuBLAS status codes (cublas_api.h, cublasStatus_t) with what they mean for this measurement;
// cuda_errors.tsv covers the runtime's codes.
struct CublasStatus {
  int code;
  const char* name;
  const char* meaning;
};
constexpr CublasStatus kCublasStatus[] = {
    {1, "CUBLAS_STATUS_NOT_INITIALIZED",
     "cuBLAS could not initialise: the CUDA runtime under it could not set up the GPU (a driver, runtime or device problem) "
     "or could not get the resources it needs"},
    {3, "CUBLAS_STATUS_ALLOC_FAILED", "cuBLAS could not allocate GPU memory for its workspace"},
    {7, "CUBLAS_STATUS_INVALID_VALUE", "cuBLAS rejected a parameter"},
    {8, "CUBLAS_STATUS_ARCH_MISMATCH", "this cuBLAS does not support the GPU's architecture"},
    {11, "CUBLAS_STATUS_MAPPING_ERROR", "cuBLAS could not access GPU memory"},
    {13, "CUBLAS_STATUS_EXECUTION_FAILED", "the GPU failed to run the cuBLAS kernel (no kernel image for this GPU, or a launch failure)"},
    {14, "CUBLAS_STATUS_INTERNAL_ERROR", "an operation inside cuBLAS failed, usually a CUDA runtime call"},
    {15, "CUBLAS_STATUS_NOT_SUPPORTED", "cuBLAS does not support this operation on this configuration"},
    {16, "CUBLAS_STATUS_LICENSE_ERROR", "cuBLAS found a licensing problem"},
};

// One failed call reported by the child ("cublasCreate_v2:1").
struct ChildError {
  std::string function;
  int code = 0;
};

std::optional<ChildError> parse_child_error(const std::string& v) {
  auto colon = v.rfind(':');
  if (colon == std::string::npos || colon + 1 == v.size()) return std::nullopt;
  ChildError e{v.substr(0, colon), std::atoi(v.c_str() + colon + 1)};
  if (e.function.empty() || e.function.find(' ') != std::string::npos) return std::nullopt;
  return e;
}

void apply_cause(const KnowledgeBase& kb, Finding& fd, const char* id) {
  fd.cause_id = id;
  if (const Cause* c = kb.cause(id)) {
    if (fd.cause.empty()) fd.cause = c->explanation;
    if (fd.fixes.empty()) fd.fixes = c->fixes;
  }
}

// A finding for a call that failed in the child, its code explained: "cudaMalloc returned 2
// (cudaErrorMemoryAllocation: ...)". Out of memory is a warning (other processes hold the
// memory; the GPU itself works), anything else means the GPU cannot compute through cuBLAS.
void add_child_error(ProbeContext& ctx, LayerReport& L, const std::string& who, const ChildError& e) {
  std::string name, meaning;
  if (e.function.starts_with("cublas")) {
    for (const auto& st : kCublasStatus)
      if (st.code == e.code) name = st.name, meaning = st.meaning;
  } else if (const CudaErrorCode* c = ctx.kb.cuda_error("runtime", e.code)) {
    name = c->name, meaning = c->meaning;
  }
  const bool oom = (e.function == "cudaMalloc" && e.code == 2) || (e.function.starts_with("cublasCreate") && e.code == 3);
  std::string text = who + ": " + e.function + " returned " + std::to_string(e.code);
  if (!name.empty()) text += " (" + name + ")";
  if (!meaning.empty()) text += ": " + meaning;
  auto& fd = L.add(oom ? Verdict::warn : Verdict::fail, text);
  fd.evidence.push_back("reported by the gpu-compute child (cuBLAS SGEMM and device-to-device copy)");
  if (oom) {
    fd.evidence.push_back("the measurement needs 3 x 64 MiB of GPU memory");
    apply_cause(ctx.kb, fd, "gpu_out_of_memory");
  } else {
    fd.cause = !meaning.empty() ? meaning : e.function.starts_with("cublas") ? "cuBLAS returned an unknown status" : "the CUDA runtime returned an error";
    fd.fixes = {"Check the layers below (driver, runtime, libraries) in this report",
                "nvidia-smi; sudo dmesg | grep -i xid (a GPU in an error state fails every call)"};
  }
}

// The GPU half of layer 8: cuBLAS SGEMM and a device-to-device copy in a child, against the
// peak from the driver API's attributes. Appends to `L`.
void probe_gpu_compute(ProbeContext& ctx, LayerReport& L) {
  const auto& api = ctx.facts.driver_api;
  if (api.devices.empty()) {
    const std::string why = !ctx.opt.driver_api ? "the driver API was not queried (disabled)"
                            : !api.ran          ? "the driver API was not queried (see driver user space)"
                            : api.timed_out     ? "the driver API did not answer"
                            : api.init_result != 0 ? "cuInit failed (" + std::to_string(api.init_result) + ")"
                                                   : "the driver API reports no device";
    L.add(Verdict::not_applicable, "GPU: nothing to measure: " + why);
    L.summary += "; no GPU";
    return;
  }
  // A runtime and a cuBLAS of the same CUDA major, the newest the driver supports: a runtime
  // newer than the driver cannot initialise, and the runtime layer already reports that.
  Resolution cudart, cublas;
  std::string tried, skipped;
  for (int major : {13, 12, 11}) {
    const std::string m = std::to_string(major), rt_name = "libcudart.so." + m + (major == 11 ? ".0" : "");
    if (ctx.facts.driver_max_cuda && major > ctx.facts.driver_max_cuda->major()) {
      skipped += std::string(skipped.empty() ? "" : ", ") + "CUDA " + m;
      continue;
    }
    tried += std::string(tried.empty() ? "" : ", ") + rt_name;
    Resolution rt = ctx.loader.resolve(rt_name);
    Resolution bl = ctx.loader.resolve("libcublas.so." + m);
    if (rt.path && bl.path) {
      cudart = rt, cublas = bl;
      break;
    }
    if (!cudart.path && rt.path) cudart = rt;  // named in the reason below
  }
  std::string not_measured;
  if (!cudart.path)
    not_measured = "no libcudart the loader finds (tried " + (tried.empty() ? std::string("none") : tried) + ")" +
                   (skipped.empty() ? "" : "; " + skipped + " skipped: newer than the driver supports");
  else if (!cublas.path)
    not_measured = "no libcublas of the same CUDA major as " + *cudart.path + " (cuBLAS is not installed or not on the loader path)";
  else if (ctx.opt.helper_executable.empty())
    not_measured = "no helper executable to run the child process";

  ChildResult cr;
  std::vector<std::string> argv;
  std::map<std::string, std::string> values;
  if (not_measured.empty()) {
    argv = {ctx.opt.helper_executable, "doctor", "--child", "gpu-compute", host(ctx, *cudart.path), host(ctx, *cublas.path)};
    cr = run_child(argv, ctx.sys.environment(), ctx.opt.compute_timeout_s);
    std::istringstream is(cr.out);
    for (std::string line; std::getline(is, line);)
      if (auto eq = line.find('='); eq != std::string::npos) {
        std::string& v = values[line.substr(0, eq)];
        v += (v.empty() ? "" : "\n") + line.substr(eq + 1);  // repeated keys (errors) kept in order
      }
    std::string command = "child:";
    for (const auto& a : argv) command += " " + a;
    if (!cr.started) {
      not_measured = "the child process could not start: " + cr.error;
    } else if (cr.timed_out) {
      auto& fd = L.add(Verdict::fail, "GPU: the cuBLAS SGEMM / device-to-device copy did not finish within " +
                                          fmt(ctx.opt.compute_timeout_s, "s") + "; the child was stopped");
      fd.evidence.push_back(command);
      if (!cr.out.empty()) {
        std::string last = cr.out.substr(cr.out.size() > 300 ? cr.out.size() - 300 : 0);
        while (!last.empty() && last.back() == '\n') last.pop_back();
        fd.evidence.push_back("output before it was stopped: " + last);
      }
      fd.cause = "A GPU that does not complete a few seconds of work is hung or wedged (an Xid error, a stuck context), or the "
                 "CUDA runtime blocks on initialisation.";
      fd.fixes = {"sudo dmesg | grep -i xid", "nvidia-smi -q -d PERFORMANCE,CLOCK; reset the GPU (nvidia-smi -r) or reboot"};
      not_measured = "the child was stopped after " + fmt(ctx.opt.compute_timeout_s, "s");
    } else if (values.count("error")) {
      // A failure before any device: a library that does not load, or cudaGetDeviceCount.
      const std::string& v = values["error"];
      if (auto e = parse_child_error(v)) {
        add_child_error(ctx, L, "GPU", *e);
      } else {
        auto& fd = L.add(Verdict::fail, "GPU: the compute child failed: " + v);
        fd.evidence.push_back(command);
        fd.cause = "The CUDA runtime or cuBLAS the loader finds cannot be loaded or lacks the functions the check calls.";
        fd.fixes = {"ldd " + host(ctx, *cublas.path) + " (a missing dependency such as libcublasLt)"};
      }
      not_measured = "see the error above";
    } else if (cr.signal != 0 || cr.exit_code != 0) {
      auto& fd = L.add(Verdict::fail, "GPU: the compute child " + (cr.signal ? "was killed by signal " + std::to_string(cr.signal)
                                                                              : "exited with code " + std::to_string(cr.exit_code)));
      fd.evidence.push_back(command);
      if (!cr.err.empty()) fd.evidence.push_back("stderr: " + cr.err.substr(0, 300));
      not_measured = "the child failed";
    }
  }

  int measured = 0;
  for (std::size_t i = 0; i < api.devices.size(); ++i) {
    const auto& d = api.devices[i];
    const int sm = d.cc_major * 10 + d.cc_minor;
    const double peak_gflops = double(d.sms) * fp32_lanes_per_sm(sm) * 2.0 * d.clock_khz * 1e-6;
    const double peak_gbps = 2.0 * d.mem_clock_khz * 1e3 * (d.bus_width / 8.0) * 1e-9;
    const std::string key = "device" + std::to_string(i) + ".";
    auto value = [&](const char* k) {
      auto it = values.find(key + k);
      return it == values.end() ? 0.0 : std::atof(it->second.c_str());
    };
    const double gflops = value("sgemm_gflops"), gbps = value("d2d_gbps");
    const std::string name = "GPU " + std::to_string(i) + " (" + d.name + ")";
    bool errors = false;
    if (auto it = values.find(key + "error"); it != values.end()) {
      std::istringstream es(it->second);
      for (std::string v; std::getline(es, v);)
        if (auto e = parse_child_error(v)) {
          add_child_error(ctx, L, name, *e);
          errors = true;
        }
    }
    const std::string theory = "theoretical " + fmt(peak_gflops, "GFLOPS") + " f32, " + fmt(peak_gbps, "GB/s");
    if (gflops <= 0 && gbps <= 0) {
      std::string why = !not_measured.empty() ? not_measured
                        : errors             ? "see the error above"
                        : i >= std::size_t(std::atoi(values["device_count"].c_str()))
                            ? "the CUDA runtime sees only " + values["device_count"] + " device(s) (CUDA_VISIBLE_DEVICES?)"
                            : "the child reported nothing for it";
      auto& fd = L.add(Verdict::not_applicable, name + ": " + theory + "; achieved not measured: " + why);
      if (cr.started && !cr.err.empty()) fd.evidence.push_back("child stderr: " + cr.err.substr(0, 300));
      continue;
    }
    ++measured;
    const double ratio = peak_gflops > 0 ? gflops / peak_gflops : 0;
    const double copy_ratio = peak_gbps > 0 ? gbps / peak_gbps : 0;
    const bool low = (gflops > 0 && ratio < 0.5) || (gbps > 0 && copy_ratio < 0.5);
    std::string text = name + ": SGEMM " +
                       (gflops > 0 ? fmt(gflops, "GFLOPS") + " of " + fmt(peak_gflops, "GFLOPS") + " (" + fmt(100 * ratio, "%") + ")"
                                   : "not measured (theoretical " + fmt(peak_gflops, "GFLOPS") + ")") +
                       "; copy " +
                       (gbps > 0 ? fmt(gbps, "GB/s") + " of " + fmt(peak_gbps, "GB/s") + " (" + fmt(100 * copy_ratio, "%") + ")"
                                 : "not measured (theoretical " + fmt(peak_gbps, "GB/s") + ")");
    auto& fd = L.add(low ? Verdict::warn : Verdict::ok, text);
    fd.evidence.push_back("theoretical = " + std::to_string(d.sms) + " SMs x " + std::to_string(fp32_lanes_per_sm(sm)) +
                          " FP32 lanes x 2 x " + fmt(d.clock_khz * 1e-3, "MHz") + " (boost clock from the driver)");
    fd.evidence.push_back("copy theoretical = 2 x " + fmt(d.mem_clock_khz * 1e-3, "MHz") + " memory clock x " +
                          std::to_string(d.bus_width) + "-bit bus; a device-to-device copy counts bytes read + written");
    fd.evidence.push_back("measured with " + *cudart.path + " and " + *cublas.path + " (4096^3 SGEMM, 64 MiB copies)");
    if (gflops > 0 && ratio < 0.5)
      fd.evidence.push_back("SGEMM below 50%: clocks capped (nvidia-smi -q -d CLOCK,PERFORMANCE), thermal or power throttling");
    if (gbps > 0 && copy_ratio < 0.5)
      fd.evidence.push_back("copy below 50%: memory clock capped, or other work on the GPU (nvidia-smi)");
  }
  L.summary += measured ? "; " + std::to_string(measured) + " GPU(s) measured" : "; GPU not measured";
}

// This machine's AMX tiles: CPUID, XCR0, the process's request for the tile data, the peaks.
AmxState machine_amx(const PeakEstimate& peak) {
  const CpuFeatures& f = cpu_features();
  AmxState s;
  s.present = f.amx_tile;
  s.os_enables = f.os_saves_amx;
  s.declined = env_int("STRATA_AMX", 1) == 0;
  s.granted = amx_ready();
  if (peak.amx) s.bf16_peak_gflops = peak.peak_gflops_bf16, s.bf16_loop_gflops = peak.measured_amx_gflops_bf16;
  return s;
}

// AMX's line in the CPU finding, or, where the CPU has the tiles but this process cannot use
// them, a warning of its own: bf16 and int8 GEMMs then run on AVX-512, many times slower.
void report_amx(const AmxState& s, Finding& cpu, LayerReport& L) {
  if (!s.present) return;
  if (s.granted) {
    const double share = s.bf16_peak_gflops > 0 ? s.bf16_loop_gflops / s.bf16_peak_gflops : 0;
    cpu.evidence.push_back("AMX tiles usable (the kernel granted this process the tile data): bf16 tile-product loop " +
                           fmt(s.bf16_loop_gflops, "GFLOPS") + " of " + fmt(s.bf16_peak_gflops, "GFLOPS") +
                           " per core (" + fmt(100 * share, "%") + "); gemm_ex runs bf16 and int8 on them");
    return;
  }
  if (s.declined) {
    cpu.evidence.push_back("AMX tiles present, declined by STRATA_AMX=0: bf16 and int8 GEMMs run on AVX-512");
    return;
  }
  auto& fd = L.add(Verdict::warn, "CPU: AMX tiles present but not usable by this process: bf16 and int8 GEMMs fall back "
                                  "to AVX-512 (one tile product does 16 AVX-512 FMAs' work)");
  fd.evidence.push_back("CPUID reports AMX-TILE");
  if (!s.os_enables) {
    fd.evidence.push_back("XCR0 does not enable the tile state (bits 17-18): the kernel has not turned AMX on");
    fd.cause = "The operating system did not enable AMX's tile state: Linux before 5.16 has no AMX support, and a VM "
               "sees it only where the hypervisor passes AMX through.";
    fd.fixes = {"uname -r (AMX needs Linux 5.16 or later)",
                "In a VM: a host and instance type that expose AMX to guests (KVM: host Linux 5.17 or later)"};
  } else {
    fd.evidence.push_back("XCR0 enables the tile state, but arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) was refused");
    fd.cause = "The kernel supports AMX but refused this process the tile data: a seccomp filter that blocks "
               "arch_prctl (some container runtimes), or an alternate signal stack too small for the 8 KB tile state.";
    fd.fixes = {"Run with a seccomp profile that allows arch_prctl", "sudo dmesg | grep -i -e amx -e xstate"};
  }
}

}  // namespace

LayerReport probe_compute(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::compute;
  const int threads = ctx.opt.threads > 0 ? ctx.opt.threads : strata::default_num_threads();
  const PeakEstimate& peak = strata::measure_peak();
  const double theoretical = peak.peak_gflops_f32 * threads;
  const AmxState amx = ctx.opt.amx ? *ctx.opt.amx : machine_amx(peak);
  if (!ctx.opt.cpu_gemm) {
    auto& fd = L.add(Verdict::not_applicable, "CPU: theoretical " + fmt(theoretical, "GFLOPS") + " f32 (" +
                                                   std::to_string(threads) + " threads); achieved not measured: " +
                                                   ctx.opt.cpu_gemm_missing_reason);
    fd.evidence.push_back("peak = " + std::to_string(peak.f32_lanes) + " lanes x 2 x " + fmt(peak.fma_ports, "FMA ports") +
                          " x " + fmt(peak.clock_ghz, "GHz") + " per core");
    report_amx(amx, fd, L);
  } else {
    double achieved = ctx.opt.cpu_gemm(threads);
    double ratio = theoretical > 0 ? achieved / theoretical : 0;
    auto& fd = L.add(ratio >= 0.5 ? Verdict::ok : Verdict::warn,
                     "CPU: SGEMM reaches " + fmt(achieved, "GFLOPS") + " of " + fmt(theoretical, "GFLOPS") + " theoretical (" +
                         fmt(100 * ratio, "%") + ", " + std::to_string(threads) + " threads)");
    fd.evidence.push_back("theoretical: measured clock " + fmt(peak.clock_ghz, "GHz") + " x " + std::to_string(peak.f32_lanes) +
                          " lanes x 2 x " + fmt(peak.fma_ports, "FMA ports") + " per core (strata info)");
    if (ratio < 0.5) {
      fd.evidence.push_back("below 50%: check STRATA_ISA, thread affinity, other load and turbo/power limits");
      // One thread tells a slow core from cores that do not add up (a 16-vCPU VM read 33%
      // with all threads while its cores were each near peak).
      if (threads > 1) {
        const double one = ctx.opt.cpu_gemm(1), one_ratio = peak.peak_gflops_f32 > 0 ? one / peak.peak_gflops_f32 : 0;
        fd.evidence.push_back("one thread: " + fmt(one, "GFLOPS") + " = " + fmt(100 * one_ratio, "%") +
                              " of one core's peak");
        if (one_ratio >= 0.5)
          fd.evidence.push_back("each core is fast alone, so the shortfall comes with threads: the " +
                                std::to_string(threads) +
                                " logical CPUs may share fewer physical cores (SMT siblings, or a VM's vCPUs on "
                                "shared host cores), other processes may run on them, or memory bandwidth limits");
      }
    }
    report_amx(amx, fd, L);
  }

  L.summary = "CPU" + std::string(ctx.opt.cpu_gemm ? " measured" : " peak only");
  probe_gpu_compute(ctx, L);
  return L;
}

}  // namespace strata::doctor
