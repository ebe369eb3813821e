// Layer 8 on a GPU, end to end without one: a fixture machine whose driver API child loads the
// fake libcuda and whose compute child (`strata doctor --child gpu-compute`, the real binary)
// loads the fake libcudart and libcublas. The fakes take scripted time for each SGEMM and copy
// (tests/doctor/fake_libcudart.c), so the doctor's measured rates, its theoretical peak from
// the driver's attributes, and its handling of errors and hangs are all checked for real.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>

#include "fixture.hpp"
#include "strata/core/timer.hpp"
#include "strata/doctor/doctor.hpp"

using namespace strata::doctor;
using test::FixtureTree;

namespace {

const LayerReport& layer(const Report& r, Layer l) {
  for (const auto& x : r.layers)
    if (x.layer == l) return x;
  throw std::runtime_error("layer missing");
}

std::string dump(const Report& r) { return render_text(r, false); }

// STRATA_COMPUTE_GPU_DUMP=1 prints the compute layer of each report, to read what users see.
Report run(const FixtureTree& t, SystemView::Env env, const DoctorOptions& o) {
  Report r = run_doctor(t.view(std::move(env)), o);
  if (std::getenv("STRATA_COMPUTE_GPU_DUMP")) {
    const std::string text = dump(r);
    auto at = text.find("8 Compute");
    std::printf("%s\n", text.substr(at == std::string::npos ? 0 : text.rfind('\n', at) + 1).c_str());
  }
  return r;
}

// The driver API and the compute child run through the real strata binary; the CPU half of
// the layer is left unmeasured (no GEMM hook) so only the GPU half decides its verdict.
DoctorOptions compute_options() {
  DoctorOptions o;
  o.probe_python = false;
  o.driver_api = true;
  o.helper_executable = STRATA_CLI;
  o.compute = true;
  o.threads = 1;
  o.child_timeout_s = 5;
  o.compute_timeout_s = 10;
  return o;
}

// A healthy H100 machine (driver 580, CUDA 13.0 toolkit) with the fake runtime and cuBLAS.
void gpu_machine(FixtureTree& t, const test::MachineSpec& m = {}) {
  test::healthy_machine(t, m);
  test::gpu_compute_libraries(t);
}

// The findings of the compute layer whose summary starts with `prefix` ("GPU 0").
std::vector<const Finding*> gpu_findings(const Report& r, const std::string& prefix) {
  std::vector<const Finding*> out;
  for (const auto& f : layer(r, Layer::compute).findings)
    if (f.summary.starts_with(prefix)) out.push_back(&f);
  return out;
}

// The numbers of a measurement finding: "GPU 0 (...): SGEMM A GFLOPS of P GFLOPS (R %); copy
// B GB/s of Q GB/s (S %)".
struct Measured {
  double gflops = 0, peak_gflops = 0, percent = 0, gbps = 0, peak_gbps = 0, copy_percent = 0;
};
std::optional<Measured> measured(const Finding& f) {
  static const std::regex re(
      R"(SGEMM ([0-9.]+) GFLOPS of ([0-9.]+) GFLOPS \(([0-9.]+) %\); copy ([0-9.]+) GB/s of ([0-9.]+) GB/s \(([0-9.]+) %\))");
  std::smatch m;
  if (!std::regex_search(f.summary, m, re)) return std::nullopt;
  return Measured{std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), std::stod(m[5]), std::stod(m[6])};
}

const Finding* find_text(const Report& r, const std::string& text) {
  for (const auto& f : layer(r, Layer::compute).findings)
    if (f.summary.find(text) != std::string::npos) return &f;
  return nullptr;
}

// A measured rate against the scripted one. The fake GPU sleeps for the scripted time, so a
// loaded machine can only make the child's measurement slower (a sleep overshoots, a woken
// process waits for a core), never faster: below by up to 30% (a ctest -j2 run here fell
// outside the former +-20%), above by rounding only.
void expect_rate(double measured, double scripted, const std::string& context) {
  EXPECT_LE(measured, 1.02 * scripted) << context;
  EXPECT_GE(measured, 0.7 * scripted) << context;
}

}  // namespace

TEST(DoctorComputeGpu, MeasuresTheScriptedRatesAgainstTheH100Peak) {
  FixtureTree t;
  gpu_machine(t);
  // 50 TFLOPS SGEMM and 2500 GB/s copies on an H100 SXM: 132 SMs x 128 lanes x 2 x 1980 MHz
  // = 66908.2 GFLOPS; 2 x 2619 MHz x 5120 bits / 8 = 3352.3 GB/s.
  Report r = run(t, {{"FAKE_CUBLAS_TFLOPS", "50"}, {"FAKE_CUDART_BANDWIDTH_GBPS", "2500"}}, compute_options());
  const auto& c = layer(r, Layer::compute);
  EXPECT_EQ(c.verdict, Verdict::ok) << dump(r);
  EXPECT_EQ(r.first_problem(), nullptr) << dump(r);
  auto gpu = gpu_findings(r, "GPU 0 (NVIDIA H100 80GB HBM3)");
  ASSERT_EQ(gpu.size(), 1u) << dump(r);
  EXPECT_EQ(gpu[0]->verdict, Verdict::ok);
  auto m = measured(*gpu[0]);
  ASSERT_TRUE(m) << gpu[0]->summary;
  EXPECT_NEAR(m->peak_gflops, 66908.2, 0.05);
  expect_rate(m->gflops, 50000, gpu[0]->summary);
  EXPECT_NEAR(m->percent, 100 * m->gflops / m->peak_gflops, 0.06);
  expect_rate(m->percent, 74.7, gpu[0]->summary);
  EXPECT_NEAR(m->peak_gbps, 3352.3, 0.05);
  expect_rate(m->gbps, 2500, gpu[0]->summary);
  EXPECT_NEAR(m->copy_percent, 100 * m->gbps / m->peak_gbps, 0.06);
  // The evidence says where the peak comes from and which libraries were measured.
  std::string evidence;
  for (const auto& e : gpu[0]->evidence) evidence += e + "\n";
  EXPECT_NE(evidence.find("132 SMs x 128 FP32 lanes x 2 x 1980.0 MHz"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("libcublas.so.13"), std::string::npos) << evidence;
  EXPECT_NE(c.summary.find("1 GPU(s) measured"), std::string::npos) << c.summary;
}

TEST(DoctorComputeGpu, A100PeakUsesSixtyFourLanesPerSm) {
  FixtureTree t;
  gpu_machine(t, test::machine("580.65.06", "NVIDIA A100-SXM4-80GB", 0x20b2));
  // sm_80 has 64 FP32 lanes per SM: 108 x 64 x 2 x 1410 MHz = 19491.8 GFLOPS; HBM2e
  // 2 x 1593 MHz x 5120 bits / 8 = 2039.0 GB/s.
  Report r = run(t, {{"FAKE_CUDA_GPU", "a100"}, {"FAKE_CUBLAS_TFLOPS", "15"}, {"FAKE_CUDART_BANDWIDTH_GBPS", "1600"}},
      compute_options());
  auto gpu = gpu_findings(r, "GPU 0 (NVIDIA A100-SXM4-80GB)");
  ASSERT_EQ(gpu.size(), 1u) << dump(r);
  auto m = measured(*gpu[0]);
  ASSERT_TRUE(m) << gpu[0]->summary;
  EXPECT_NEAR(m->peak_gflops, 19491.8, 0.05);
  EXPECT_NEAR(m->peak_gbps, 2039.0, 0.05);
  expect_rate(m->gflops, 15000, gpu[0]->summary);
  expect_rate(m->percent, 77.0, gpu[0]->summary);
  expect_rate(m->gbps, 1600, gpu[0]->summary);
  EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::ok) << dump(r);
}

TEST(DoctorComputeGpu, SlowGpuIsAWarningWithTheLikelyCauses) {
  FixtureTree t;
  gpu_machine(t);
  // 20 TFLOPS is 30 % of the H100's peak, 1000 GB/s 30 % of its bandwidth.
  Report r = run(t, {{"FAKE_CUBLAS_TFLOPS", "20"}, {"FAKE_CUDART_BANDWIDTH_GBPS", "1000"}}, compute_options());
  auto gpu = gpu_findings(r, "GPU 0");
  ASSERT_EQ(gpu.size(), 1u) << dump(r);
  EXPECT_EQ(gpu[0]->verdict, Verdict::warn) << dump(r);
  auto m = measured(*gpu[0]);
  ASSERT_TRUE(m) << gpu[0]->summary;
  expect_rate(m->percent, 29.9, gpu[0]->summary);
  expect_rate(m->copy_percent, 29.8, gpu[0]->summary);
  std::string evidence;
  for (const auto& e : gpu[0]->evidence) evidence += e + "\n";
  EXPECT_NE(evidence.find("SGEMM below 50%: clocks capped"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("copy below 50%"), std::string::npos) << evidence;
  ASSERT_NE(r.first_problem(), nullptr);
  EXPECT_EQ(r.first_problem()->layer, Layer::compute);
}

TEST(DoctorComputeGpu, EveryGpuTheDriverListsIsMeasured) {
  FixtureTree t;
  test::MachineSpec spec;
  spec.gpus = 2;
  gpu_machine(t, spec);
  Report r = run(t, {{"FAKE_CUDA_DEVICES", "2"},
                                {"FAKE_CUDART_DEVICES", "2"},
                                {"FAKE_CUBLAS_TFLOPS", "50"},
                                {"FAKE_CUDART_BANDWIDTH_GBPS", "2500"}},
                        compute_options());
  for (const char* g : {"GPU 0", "GPU 1"}) {
    auto gpu = gpu_findings(r, g);
    ASSERT_EQ(gpu.size(), 1u) << g << "\n" << dump(r);
    auto m = measured(*gpu[0]);
    ASSERT_TRUE(m) << gpu[0]->summary;
    expect_rate(m->gflops, 50000, gpu[0]->summary);
  }
  // A runtime that sees fewer devices than the driver (CUDA_VISIBLE_DEVICES) says so.
  Report r2 = run(t, {{"FAKE_CUDA_DEVICES", "2"}, {"FAKE_CUDART_DEVICES", "1"}, {"FAKE_CUBLAS_TFLOPS", "50"},
                                 {"FAKE_CUDART_BANDWIDTH_GBPS", "2500"}},
                         compute_options());
  auto gpu1 = gpu_findings(r2, "GPU 1");
  ASSERT_EQ(gpu1.size(), 1u) << dump(r2);
  EXPECT_EQ(gpu1[0]->verdict, Verdict::not_applicable);
  EXPECT_NE(gpu1[0]->summary.find("the CUDA runtime sees only 1 device(s)"), std::string::npos) << gpu1[0]->summary;
}

TEST(DoctorComputeGpu, CublasCreateErrorFailsWithTheStatusExplained) {
  FixtureTree t;
  gpu_machine(t);
  Report r = run(t, {{"FAKE_CUBLAS_CREATE_ERROR", "1"}, {"FAKE_CUDART_BANDWIDTH_GBPS", "2500"}}, compute_options());
  const auto& c = layer(r, Layer::compute);
  EXPECT_EQ(c.verdict, Verdict::fail) << dump(r);
  const Finding* e = find_text(r, "cublasCreate_v2 returned 1 (CUBLAS_STATUS_NOT_INITIALIZED)");
  ASSERT_NE(e, nullptr) << dump(r);
  EXPECT_EQ(e->verdict, Verdict::fail);
  EXPECT_TRUE(e->summary.starts_with("GPU 0 (NVIDIA H100 80GB HBM3): ")) << e->summary;
  EXPECT_NE(e->summary.find("cuBLAS could not initialise"), std::string::npos) << e->summary;
  EXPECT_FALSE(e->fixes.empty());
  // The copy does not need cuBLAS: it is still measured, the SGEMM is not.
  const Finding* m = find_text(r, "SGEMM not measured");
  ASSERT_NE(m, nullptr) << dump(r);
  EXPECT_NE(m->summary.find("copy "), std::string::npos);
  ASSERT_NE(r.first_problem(), nullptr);
  EXPECT_EQ(r.first_problem()->layer, Layer::compute);
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(DoctorComputeGpu, SgemmExecutionErrorFails) {
  FixtureTree t;
  gpu_machine(t);
  Report r = run(t, {{"FAKE_CUBLAS_SGEMM_ERROR", "13"}}, compute_options());
  const Finding* e = find_text(r, "cublasSgemm_v2 returned 13 (CUBLAS_STATUS_EXECUTION_FAILED)");
  ASSERT_NE(e, nullptr) << dump(r);
  EXPECT_EQ(e->verdict, Verdict::fail);
  EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::fail);
}

TEST(DoctorComputeGpu, OutOfMemoryIsAWarningWithItsCause) {
  FixtureTree t;
  gpu_machine(t);
  Report r = run(t, {{"FAKE_CUDART_MALLOC_ERROR", "2"}}, compute_options());
  const Finding* e = find_text(r, "cudaMalloc returned 2 (cudaErrorMemoryAllocation)");
  ASSERT_NE(e, nullptr) << dump(r);
  EXPECT_EQ(e->verdict, Verdict::warn);
  EXPECT_EQ(e->cause_id, "gpu_out_of_memory");
  EXPECT_NE(e->fixes.front().find("nvidia-smi"), std::string::npos);
  EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::warn) << dump(r);
  // Nothing was measured on that GPU, and the report says why.
  const Finding* n = find_text(r, "achieved not measured: see the error above");
  ASSERT_NE(n, nullptr) << dump(r);
  EXPECT_EQ(n->verdict, Verdict::not_applicable);
}

TEST(DoctorComputeGpu, RuntimeErrorBeforeAnyDeviceIsExplained) {
  FixtureTree t;
  gpu_machine(t);
  Report r = run(t, {{"FAKE_CUDART_COUNT_ERROR", "35"}}, compute_options());
  const Finding* e = find_text(r, "cudaGetDeviceCount returned 35 (cudaErrorInsufficientDriver)");
  ASSERT_NE(e, nullptr) << dump(r);
  EXPECT_EQ(e->verdict, Verdict::fail);
  EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::fail);
}

TEST(DoctorComputeGpu, HangingGpuIsCutByTheTimeoutAndReported) {
  FixtureTree t;
  gpu_machine(t);
  DoctorOptions o = compute_options();
  o.compute_timeout_s = 1;
  strata::Timer timer;
  Report r = run(t, {{"FAKE_GPU_HANG", "1"}}, o);
  EXPECT_LT(timer.seconds(), 5.0);
  const auto& c = layer(r, Layer::compute);
  EXPECT_EQ(c.verdict, Verdict::fail) << dump(r);
  const Finding* h = find_text(r, "did not finish within 1.0 s");
  ASSERT_NE(h, nullptr) << dump(r);
  EXPECT_EQ(h->verdict, Verdict::fail);
  EXPECT_FALSE(h->fixes.empty());
  // What the child printed before it hung is kept as evidence.
  std::string evidence;
  for (const auto& e : h->evidence) evidence += e + "\n";
  EXPECT_NE(evidence.find("device_count=1"), std::string::npos) << evidence;
  const Finding* n = find_text(r, "achieved not measured: the child was stopped after 1.0 s");
  EXPECT_NE(n, nullptr) << dump(r);
}

TEST(DoctorComputeGpu, NoGpuOrNoCublasIsNotApplicableWithTheReason) {
  {  // No GPU at all: nothing answered the driver API.
    FixtureTree t;
    t.pci_other("0000:00:00.0");
    Report r = run(t, {}, compute_options());
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
    EXPECT_NE(find_text(r, "GPU: nothing to measure: the driver API was not queried"), nullptr) << dump(r);
  }
  {  // The driver API disabled.
    FixtureTree t;
    gpu_machine(t);
    DoctorOptions o = compute_options();
    o.driver_api = false;
    Report r = run(t, {}, o);
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
    EXPECT_NE(find_text(r, "GPU: nothing to measure: the driver API was not queried (disabled)"), nullptr) << dump(r);
  }
  {  // cuInit fails: the driver layer fails, the compute layer has nothing to measure.
    FixtureTree t;
    gpu_machine(t);
    Report r = run(t, {{"FAKE_CUDA_INIT", "999"}}, compute_options());
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
    EXPECT_NE(find_text(r, "GPU: nothing to measure: cuInit failed (999)"), nullptr) << dump(r);
  }
  {  // A GPU and a runtime, but no cuBLAS installed.
    FixtureTree t;
    test::healthy_machine(t);
    Report r = run(t, {}, compute_options());
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
    const Finding* n = find_text(r, "achieved not measured: no libcublas of the same CUDA major");
    ASSERT_NE(n, nullptr) << dump(r);
    EXPECT_TRUE(n->summary.starts_with("GPU 0 (NVIDIA H100 80GB HBM3): theoretical 66908.2 GFLOPS f32, 3352.3 GB/s")) << n->summary;
    EXPECT_EQ(r.first_problem(), nullptr) << dump(r);
  }
  {  // Only a CUDA 13 runtime, under a driver that supports CUDA 12.4: not loaded, and said why.
    FixtureTree t;
    gpu_machine(t, test::machine("550.54.14"));
    Report r = run(t, {{"FAKE_CUDA_VERSION", "12040"}}, compute_options());
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
    EXPECT_NE(find_text(r, "no libcudart the loader finds (tried libcudart.so.12, libcudart.so.11.0); CUDA 13 skipped: newer than"),
              nullptr)
        << dump(r);
  }
  {  // No CUDA runtime at all.
    FixtureTree t;
    test::MachineSpec spec;
    spec.cuda = "";
    test::healthy_machine(t, spec);
    Report r = run(t, {}, compute_options());
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
    EXPECT_NE(find_text(r, "achieved not measured: no libcudart the loader finds (tried libcudart.so.13, libcudart.so.12, libcudart.so.11.0)"), nullptr)
        << dump(r);
  }
}

// The CPU half of layer 8 on AMX machines (the state given, not read from this CPU): usable or
// declined tiles are a line of the CPU finding and leave the verdict alone; tiles the process
// cannot use are a warning whose cause tells the kernel that never enabled them from the
// process that was refused them.
TEST(DoctorComputeCpu, AmxStateIsReportedWithItsCause) {
  auto run_with = [](const AmxState& s) {
    FixtureTree t;
    t.pci_other("0000:00:00.0");
    DoctorOptions o = compute_options();
    o.amx = s;
    return run(t, {}, o);
  };
  auto cpu_evidence = [](const Report& r) {
    const Finding* cpu = find_text(r, "CPU: theoretical");
    std::string all;
    if (cpu)
      for (const auto& e : cpu->evidence) all += e + "\n";
    return all;
  };
  {  // No AMX: nothing said.
    Report r = run_with(AmxState{});
    EXPECT_EQ(cpu_evidence(r).find("AMX"), std::string::npos) << dump(r);
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
  }
  {  // Granted: the tile loop against its theory, in the CPU finding.
    AmxState s;
    s.present = s.os_enables = s.granted = true;
    s.bf16_peak_gflops = 2800, s.bf16_loop_gflops = 2100;
    Report r = run_with(s);
    EXPECT_NE(cpu_evidence(r).find("AMX tiles usable (the kernel granted this process the tile data): bf16 tile-product "
                                   "loop 2100.0 GFLOPS of 2800.0 GFLOPS per core (75.0 %)"),
              std::string::npos)
        << dump(r);
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
  }
  {  // Declined by the user.
    AmxState s;
    s.present = s.os_enables = s.declined = true;
    Report r = run_with(s);
    EXPECT_NE(cpu_evidence(r).find("declined by STRATA_AMX=0"), std::string::npos) << dump(r);
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable) << dump(r);
  }
  {  // The kernel never enabled the tile state (old kernel, or a VM without AMX passed through).
    AmxState s;
    s.present = true;
    Report r = run_with(s);
    const Finding* w = find_text(r, "CPU: AMX tiles present but not usable by this process");
    ASSERT_NE(w, nullptr) << dump(r);
    EXPECT_EQ(w->verdict, Verdict::warn);
    EXPECT_NE(w->cause.find("Linux before 5.16"), std::string::npos) << w->cause;
    EXPECT_NE(w->evidence.back().find("XCR0 does not enable the tile state"), std::string::npos);
    EXPECT_FALSE(w->fixes.empty());
    EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::warn) << dump(r);
  }
  {  // Enabled, but this process was refused the tile data.
    AmxState s;
    s.present = s.os_enables = true;
    Report r = run_with(s);
    const Finding* w = find_text(r, "CPU: AMX tiles present but not usable by this process");
    ASSERT_NE(w, nullptr) << dump(r);
    EXPECT_NE(w->cause.find("refused this process the tile data"), std::string::npos) << w->cause;
    EXPECT_NE(w->evidence.back().find("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) was refused"), std::string::npos);
  }
}
