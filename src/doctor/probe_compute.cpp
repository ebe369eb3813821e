// Layer 8, compute (--compute): theoretical peak against what a GEMM actually reaches, on the
// CPU (strata's measured peak vs the caller's GEMM) and on each GPU (SMs x FP32 lanes x clock vs
// a cuBLAS SGEMM, and bus width x memory clock vs a device-to-device copy, run in a child).
#include <cstdio>
#include <sstream>

#include "probes.hpp"
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

}  // namespace

LayerReport probe_compute(ProbeContext& ctx) {
  LayerReport L;
  L.layer = Layer::compute;
  const int threads = ctx.opt.threads > 0 ? ctx.opt.threads : strata::default_num_threads();
  const PeakEstimate& peak = strata::measure_peak();
  const double theoretical = peak.peak_gflops_f32 * threads;
  if (!ctx.opt.cpu_gemm) {
    auto& fd = L.add(Verdict::not_applicable, "CPU: theoretical " + fmt(theoretical, "GFLOPS") + " f32 (" +
                                                   std::to_string(threads) + " threads); achieved not measured: " +
                                                   ctx.opt.cpu_gemm_missing_reason);
    fd.evidence.push_back("peak = " + std::to_string(peak.f32_lanes) + " lanes x 2 x " + fmt(peak.fma_ports, "FMA ports") +
                          " x " + fmt(peak.clock_ghz, "GHz") + " per core");
  } else {
    double achieved = ctx.opt.cpu_gemm(threads);
    double ratio = theoretical > 0 ? achieved / theoretical : 0;
    auto& fd = L.add(ratio >= 0.5 ? Verdict::ok : Verdict::warn,
                     "CPU: SGEMM reaches " + fmt(achieved, "GFLOPS") + " of " + fmt(theoretical, "GFLOPS") + " theoretical (" +
                         fmt(100 * ratio, "%") + ", " + std::to_string(threads) + " threads)");
    fd.evidence.push_back("theoretical: measured clock " + fmt(peak.clock_ghz, "GHz") + " x " + std::to_string(peak.f32_lanes) +
                          " lanes x 2 x " + fmt(peak.fma_ports, "FMA ports") + " per core (strata info)");
    if (ratio < 0.5) fd.evidence.push_back("below 50%: check STRATA_ISA, thread affinity, other load and turbo/power limits");
  }

  L.summary = "CPU" + std::string(ctx.opt.cpu_gemm ? " measured" : " peak only");
  // GPUs: only where the driver API answered, through cuBLAS in a child process.
  const auto& api = ctx.facts.driver_api;
  if (api.devices.empty()) {
    L.add(Verdict::not_applicable, "GPU: no device answered the driver API, nothing to measure");
    return L;
  }
  Resolution cudart, cublas;
  for (const char* s : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"})
    if (!cudart.path) cudart = ctx.loader.resolve(s);
  for (const char* s : {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"})
    if (!cublas.path) cublas = ctx.loader.resolve(s);
  if (!cudart.path || !cublas.path || ctx.opt.helper_executable.empty()) {
    L.add(Verdict::not_applicable, "GPU: achieved compute not measured: " +
                                       std::string(!cudart.path ? "no libcudart" : !cublas.path ? "no libcublas" : "no helper executable"));
  }
  ChildResult cr;
  if (cudart.path && cublas.path && !ctx.opt.helper_executable.empty())
    cr = run_child({ctx.opt.helper_executable, "doctor", "--child", "gpu-compute", host(ctx, *cudart.path), host(ctx, *cublas.path)},
                   ctx.sys.environment(), 120);
  for (std::size_t i = 0; i < api.devices.size(); ++i) {
    const auto& d = api.devices[i];
    int sm = d.cc_major * 10 + d.cc_minor;
    double peak_gflops = double(d.sms) * fp32_lanes_per_sm(sm) * 2.0 * d.clock_khz * 1e-6;
    double peak_gbps = 2.0 * d.mem_clock_khz * 1e3 * (d.bus_width / 8.0) * 1e-9;
    double gflops = 0, gbps = 0;
    std::istringstream is(cr.out);
    for (std::string line; std::getline(is, line);) {
      if (line.rfind("device" + std::to_string(i) + ".sgemm_gflops=", 0) == 0) gflops = std::atof(line.c_str() + line.find('=') + 1);
      if (line.rfind("device" + std::to_string(i) + ".d2d_gbps=", 0) == 0) gbps = std::atof(line.c_str() + line.find('=') + 1);
    }
    std::string name = "GPU " + std::to_string(i) + " (" + d.name + ")";
    if (gflops <= 0) {
      auto& fd = L.add(Verdict::not_applicable, name + ": theoretical " + fmt(peak_gflops, "GFLOPS") + " f32, " +
                                                     fmt(peak_gbps, "GB/s") + "; achieved not measured");
      if (cr.started && !cr.err.empty()) fd.evidence.push_back("child: " + cr.err.substr(0, 300));
      continue;
    }
    double ratio = peak_gflops > 0 ? gflops / peak_gflops : 0;
    auto& fd = L.add(ratio >= 0.5 ? Verdict::ok : Verdict::warn,
                     name + ": SGEMM " + fmt(gflops, "GFLOPS") + " of " + fmt(peak_gflops, "GFLOPS") + " (" + fmt(100 * ratio, "%") +
                         "); copy " + fmt(gbps, "GB/s") + " of " + fmt(peak_gbps, "GB/s"));
    fd.evidence.push_back("theoretical = " + std::to_string(d.sms) + " SMs x " + std::to_string(fp32_lanes_per_sm(sm)) +
                          " FP32 lanes x 2 x " + fmt(d.clock_khz * 1e-3, "MHz") + " (boost clock from the driver)");
    if (ratio < 0.5) fd.evidence.push_back("low: clocks capped (nvidia-smi -q -d CLOCK,PERFORMANCE), thermal or power throttling");
  }
  return L;
}

}  // namespace strata::doctor
