// `strata info`: devices, ISA in use, threads, caches and the measured peak of this CPU.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "strata/core/cpu.hpp"
#include "strata/core/isa.hpp"
#include "strata/core/peak.hpp"
#include "strata/core/thread_pool.hpp"
#include "strata/core/version.hpp"
#include "strata/rt/device.hpp"

namespace strata::cli {

namespace {

nlohmann::json collect() {
  using nlohmann::json;
  const CpuFeatures& f = cpu_features();
  const Isa isa = active_isa();
  const PeakEstimate& p = measure_peak(isa);
  const int threads = default_num_threads();
  json devices = json::array();
  for (const auto& d : rt::list_devices())
    devices.push_back({{"device", d.device.name()}, {"name", d.name}, {"memory_bytes", d.memory_bytes},
                       {"compute_capability", d.device.kind == rt::DeviceKind::cuda
                                                  ? std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)
                                                  : ""},
                       {"multiprocessors", d.multiprocessors}});
  std::string cuda_reason;
  int cuda_count = rt::cuda_device_count(&cuda_reason);
  return {
      {"version", version_string()},
      {"cpu", {{"vendor", f.vendor}, {"brand", f.brand}, {"family", f.family}, {"model", f.model},
               {"flags", cpu_flag_list(f)}, {"logical_cpus", f.logical_cpus}, {"affinity_cpus", f.affinity_cpus},
               {"l1d_bytes", f.l1d_bytes}, {"l1d_ways", f.l1d_ways}, {"l2_bytes", f.l2_bytes},
               {"l3_bytes", f.l3_bytes}}},
      {"isa", {{"active", isa_name(isa)}, {"best", isa_name(best_isa())}}},
      {"threads", threads},
      {"peak", {{"method", "clock from 100-deep dependent register adds, checked against dependent multiplies "
                           "(3 cycles); FMA ports from 12 independent vector FMA chains / clock; "
                           "peak = lanes x 2 x ports x clock"},
                {"isa", isa_name(p.isa)}, {"clock_ghz", p.clock_ghz}, {"clock_source", p.clock_source},
                {"clock_ghz_add_chain", p.clock_ghz_add_chain}, {"clock_ghz_multiply_chain", p.clock_ghz_multiply_chain}, {"f32_lanes", p.f32_lanes},
                {"fma_ports", p.fma_ports}, {"fma_loop_gflops_f32_per_core", p.measured_fma_gflops_f32},
                {"gflops_f32_per_core", p.peak_gflops_f32}, {"gflops_f64_per_core", p.peak_gflops_f64},
                {"gflops_bf16_per_core", p.peak_gflops_bf16}, {"bf16_dot_speedup", bf16_dot_speedup()}, {"gops_int8_per_core", p.peak_gops_int8},
                {"amx", p.amx}, {"amx_loop_gflops_bf16_per_core", p.measured_amx_gflops_bf16},
                {"amx_loop_gops_int8_per_core", p.measured_amx_gops_int8},
                {"gflops_f32_all_threads", p.peak_gflops_f32 * threads},
                {"gflops_f64_all_threads", p.peak_gflops_f64 * threads}}},
      {"cuda", {{"built", rt::cuda_built()}, {"devices", cuda_count}, {"reason", cuda_reason}}},
      {"devices", devices}};
}

std::string human_bytes(std::size_t b) {
  char buf[32];
  if (b >= (1u << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", double(b) / double(1u << 30));
  else if (b >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1u << 20));
  else std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  return buf;
}

void print_text(const nlohmann::json& j) {
  const auto& c = j["cpu"];
  const auto& p = j["peak"];
  std::printf("strata %s\n\n", j["version"].get<std::string>().c_str());
  std::printf("CPU       %s (family %d, model %d)\n", c["brand"].get<std::string>().c_str(),
              c["family"].get<int>(), c["model"].get<int>());
  std::printf("flags     %s\n", c["flags"].get<std::string>().c_str());
  const int ways = c["l1d_ways"].get<int>();
  const std::string l1_ways = ways ? " " + std::to_string(ways) + "-way" : "";
  std::printf("caches    L1d %s%s, L2 %s per core; L3 %s\n", human_bytes(c["l1d_bytes"]).c_str(), l1_ways.c_str(),
              human_bytes(c["l2_bytes"]).c_str(), human_bytes(c["l3_bytes"]).c_str());
  std::printf("cores     %d online, %d in this process's affinity mask\n", c["logical_cpus"].get<int>(),
              c["affinity_cpus"].get<int>());
  std::printf("ISA       %s in use (best here: %s; STRATA_ISA forces a lower one)\n",
              j["isa"]["active"].get<std::string>().c_str(), j["isa"]["best"].get<std::string>().c_str());
  std::printf("threads   %d (STRATA_NUM_THREADS)\n\n", j["threads"].get<int>());
  std::printf("Peak per core (%s): clock %.2f GHz x %d f32 lanes x 2 flops x %.1f FMA ports\n",
              p["isa"].get<std::string>().c_str(), p["clock_ghz"].get<double>(), p["f32_lanes"].get<int>(),
              p["fma_ports"].get<double>());
  std::printf("  f32  %7.1f GFLOPS/core  %7.1f with %d threads   (FMA loop reached %.1f)\n",
              p["gflops_f32_per_core"].get<double>(), p["gflops_f32_all_threads"].get<double>(),
              j["threads"].get<int>(), p["fma_loop_gflops_f32_per_core"].get<double>());
  std::printf("  f64  %7.1f GFLOPS/core  %7.1f with %d threads\n", p["gflops_f64_per_core"].get<double>(),
              p["gflops_f64_all_threads"].get<double>(), j["threads"].get<int>());
  const bool amx = p["amx"].get<bool>();
  if (amx)
    std::printf("  bf16 %7.1f GFLOPS/core   (AMX: 1024 flops/cycle; tile-product loop reached %.1f)\n",
                p["gflops_bf16_per_core"].get<double>(), p["amx_loop_gflops_bf16_per_core"].get<double>());
  else if (p["gflops_bf16_per_core"].get<double>() > 0)
    std::printf("  bf16 %7.1f GFLOPS/core   (dot-product instruction measured at %.2fx the f32 FMA's flops rate)\n",
                p["gflops_bf16_per_core"].get<double>(), p["bf16_dot_speedup"].get<double>());
  if (amx)
    std::printf("  int8 %7.1f GOPS/core     (AMX: 2048 ops/cycle; tile-product loop reached %.1f)\n",
                p["gops_int8_per_core"].get<double>(), p["amx_loop_gops_int8_per_core"].get<double>());
  else if (p["gops_int8_per_core"].get<double>() > 0)
    std::printf("  int8 %7.1f GOPS/core\n", p["gops_int8_per_core"].get<double>());
  std::printf("  measured: %s\n", p["method"].get<std::string>().c_str());
  std::printf("  clock readings: add chain %.2f GHz, multiply chain %.2f GHz (using the %s chain)\n\n",
              p["clock_ghz_add_chain"].get<double>(), p["clock_ghz_multiply_chain"].get<double>(),
              p["clock_source"].get<std::string>().c_str());
  std::printf("Devices\n");
  for (const auto& d : j["devices"]) {
    std::printf("  %-8s %s, %s", d["device"].get<std::string>().c_str(), d["name"].get<std::string>().c_str(),
                human_bytes(d["memory_bytes"]).c_str());
    if (!d["compute_capability"].get<std::string>().empty())
      std::printf(", compute capability %s, %d SMs", d["compute_capability"].get<std::string>().c_str(),
                  d["multiprocessors"].get<int>());
    std::printf("\n");
  }
  const auto& cu = j["cuda"];
  if (!cu["built"].get<bool>()) std::printf("  (CUDA backend not built)\n");
  else if (cu["devices"].get<int>() == 0)
    std::printf("  no CUDA device: %s\n", cu["reason"].get<std::string>().c_str());
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("info", "Print devices, ISA, threads, caches and the measured peak FLOP rate");
  auto json_flag = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json_flag, "Print JSON instead of text");
  cmd->callback([json_flag, &exit_code] {
    nlohmann::json j = collect();
    if (*json_flag) std::printf("%s\n", j.dump(2).c_str());
    else print_text(j);
    exit_code = 0;
  });
}

}  // namespace strata::cli
