// Whole-stack scenarios on fixture trees: each builds a fake machine (sysfs, procfs, ld.so.cache,
// libraries as small ELF files, a fake libcuda for the driver-API child) and checks the verdict
// of the layer that should fail, its cause, and that the first failing layer is reported.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "fixture.hpp"
#include "strata/core/peak.hpp"
#include "strata/core/timer.hpp"
#include "strata/doctor/doctor.hpp"
#include "strata/doctor/fatbin.hpp"

using namespace strata::doctor;
using test::FatEntry;
using test::FixtureTree;
using test::healthy_machine;

namespace {

const LayerReport& layer(const Report& r, Layer l) {
  for (const auto& x : r.layers)
    if (x.layer == l) return x;
  throw std::runtime_error("layer missing");
}

bool has_cause(const LayerReport& l, const std::string& id) {
  for (const auto& f : l.findings)
    if (f.cause_id == id) return true;
  return false;
}

std::string dump(const Report& r) { return render_text(r, false); }

DoctorOptions quick() {
  DoctorOptions o;
  o.probe_python = false;
  o.driver_api = false;
  return o;
}

// A python3 on the fixture's PATH that answers the framework probe with `json`.
void python_answering(FixtureTree& t, const std::string& json) {
  t.write("/usr/bin/python3", "#!/bin/sh\necho '" + json + "'\n");
  chmod((t.root() + "/usr/bin/python3").c_str(), 0755);
}

}  // namespace

TEST(DoctorScenario, HealthyMachineWithDriverApiChild) {
  FixtureTree t;
  healthy_machine(t);
  DoctorOptions o = quick();
  o.driver_api = true;
  o.helper_executable = STRATA_CLI;
  Report r = run_doctor(t.view(), o);
  EXPECT_EQ(r.exit_code(), 0) << dump(r);
  EXPECT_EQ(layer(r, Layer::hardware).verdict, Verdict::ok);
  EXPECT_EQ(layer(r, Layer::driver).verdict, Verdict::ok);
  EXPECT_EQ(layer(r, Layer::driver_userspace).verdict, Verdict::ok) << dump(r);
  ASSERT_EQ(r.facts.gpus.size(), 1u);
  EXPECT_EQ(r.facts.gpus[0].cc_source, "driver API");
  EXPECT_EQ(r.facts.gpus[0].sm(), 90);
  EXPECT_EQ(r.facts.driver_api.init_result, 0);
  EXPECT_EQ(r.facts.driver_max_cuda->str(), "13.0");
  EXPECT_EQ(r.facts.kernel_driver->str(), "580.65.06");
  EXPECT_EQ(r.facts.libcuda_version->str(), "580.65.06");
  ASSERT_FALSE(r.facts.runtimes.empty());
  EXPECT_EQ(r.facts.runtimes[0].version->str(), "13.0.96");
  EXPECT_EQ(r.facts.toolkit_version->str(), "13.0.2");
  EXPECT_EQ(r.first_problem(), nullptr) << dump(r);
}

TEST(DoctorScenario, NoGpuFailsAtHardwareFirst) {
  FixtureTree t;
  t.kernel_release("6.1.0");
  t.pci_other("0000:00:00.0");
  Report r = run_doctor(t.view(), quick());
  EXPECT_EQ(r.exit_code(), 1);
  ASSERT_NE(r.first_problem(), nullptr);
  EXPECT_EQ(r.first_problem()->layer, Layer::hardware);
  EXPECT_TRUE(has_cause(layer(r, Layer::hardware), "no_gpu_visible"));
  EXPECT_EQ(layer(r, Layer::driver).verdict, Verdict::not_applicable);
  EXPECT_EQ(layer(r, Layer::driver_userspace).verdict, Verdict::not_applicable);
  EXPECT_NE(dump(r).find("1 PCI functions in /sys/bus/pci/devices, none with vendor 0x10de"), std::string::npos) << dump(r);
}

TEST(DoctorScenario, DriverNotBuiltForRunningKernel) {
  FixtureTree t;
  t.kernel_release("6.8.0-50-generic");
  t.pci_gpu("0000:01:00.0", 0x2684);
  t.write("/proc/modules", std::string("ext4 1 1 - Live 0x0\n"));
  t.write("/lib/modules/6.8.0-50-generic/kernel/fs/ext4.ko", std::string("x"));
  t.write("/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko", std::string("x"));  // the previous kernel's
  std::string sb = std::string("\x06\x00\x00\x00\x01", 5);
  t.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0800e5a0000", sb);
  Report r = run_doctor(t.view(), quick());
  const auto& d = layer(r, Layer::driver);
  EXPECT_EQ(d.verdict, Verdict::fail);
  EXPECT_TRUE(has_cause(d, "driver_not_loaded"));
  EXPECT_EQ(r.first_problem()->layer, Layer::driver);
  std::string text = dump(r);
  EXPECT_NE(text.find("not built for the running kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("dkms autoinstall -k 6.8.0-50-generic"), std::string::npos) << text;
  EXPECT_NE(text.find("Secure Boot is enabled"), std::string::npos) << text;
}

TEST(DoctorScenario, DriverLibraryVersionMismatchAfterUpgrade) {
  FixtureTree t;
  healthy_machine(t, test::machine("550.107.02", "NVIDIA H100 80GB HBM3", 0x2330, "13.0.96", "13.0.2"));
  t.write("/proc/driver/nvidia/version", std::string("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31\n"));
  Report r = run_doctor(t.view(), quick());
  const auto& u = layer(r, Layer::driver_userspace);
  EXPECT_EQ(u.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(u, "nvml_mismatch"));
  // Seen in user space, blamed on the kernel driver layer (a module older than its libraries).
  EXPECT_EQ(r.first_problem()->layer, Layer::driver);
  EXPECT_TRUE(has_cause(layer(r, Layer::driver), "nvml_mismatch"));
}

TEST(DoctorScenario, StubLibcudaOnLdLibraryPath) {
  FixtureTree t;
  healthy_machine(t);
  t.library("/usr/local/cuda-13.0/lib64/stubs/libcuda.so.1");
  Report r = run_doctor(t.view({{"LD_LIBRARY_PATH", "/usr/local/cuda/lib64/stubs"}}), quick());
  EXPECT_TRUE(has_cause(layer(r, Layer::driver_userspace), "stub_libcuda")) << dump(r);
  EXPECT_EQ(layer(r, Layer::driver_userspace).verdict, Verdict::fail);
}

TEST(DoctorScenario, RuntimeNewerThanDriverAndMinorVersionCompat) {
  FixtureTree t;
  healthy_machine(t, test::machine("535.54.03", "NVIDIA H100 80GB HBM3", 0x2330, "13.0.96", "13.0.2"));
  t.library("/opt/app/lib/libcudart.so.12.4.127", {62, 2, "libcudart.so.12", {}, "", "", {}});
  t.symlink("libcudart.so.12.4.127", "/opt/app/lib/libcudart.so.12");
  Report r = run_doctor(t.view({{"LD_LIBRARY_PATH", "/opt/app/lib"}}), quick());
  const auto& rt = layer(r, Layer::runtime);
  EXPECT_EQ(rt.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(rt, "driver_too_old"));
  std::string text = dump(r);
  EXPECT_NE(text.find("(13.0.96): insufficient with driver 535.54.03"), std::string::npos) << text;
  EXPECT_NE(text.find("(12.4.127): ok only through minor-version compatibility"), std::string::npos) << text;
  EXPECT_NE(text.find("no PTX JIT"), std::string::npos) << text;
}

TEST(DoctorScenario, OldCudnnOnLdLibraryPathShadowsTheWheel) {
  FixtureTree t;
  healthy_machine(t);
  t.write("/usr/bin/python3", std::string("#!/bin/sh\nexit 1\n"));
  const std::string site = "/usr/lib/python3.11/site-packages";
  t.library(site + "/nvidia/cudnn/lib/libcudnn.so.8");
  t.mkdir(site + "/nvidia_cudnn_cu11-8.7.0.84.dist-info");
  t.library("/opt/old/cudnn/lib/libcudnn.so.8.2.4", {62, 2, "libcudnn.so.8", {}, "", "", {}});
  t.symlink("libcudnn.so.8.2.4", "/opt/old/cudnn/lib/libcudnn.so.8");
  Report r = run_doctor(t.view({{"LD_LIBRARY_PATH", "/opt/old/cudnn/lib"}}), quick());
  const auto& lib = layer(r, Layer::library);
  EXPECT_EQ(lib.verdict, Verdict::warn) << dump(r);
  EXPECT_TRUE(has_cause(lib, "shadowed_library"));
  EXPECT_NE(dump(r).find("Remove /opt/old/cudnn/lib from LD_LIBRARY_PATH"), std::string::npos) << dump(r);
}

TEST(DoctorScenario, CpuOnlyTorchReadFromFiles) {
  FixtureTree t;
  healthy_machine(t);
  t.write("/usr/bin/python3", std::string("#!/bin/sh\nexit 1\n"));
  t.write("/usr/lib/python3.11/site-packages/torch/version.py",
          std::string("__version__ = '2.3.1+cpu'\ndebug = False\ncuda: Optional[str] = None\n"));
  Report r = run_doctor(t.view(), quick());
  const auto& fw = layer(r, Layer::framework);
  EXPECT_EQ(fw.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(fw, "cpu_only_framework"));
  EXPECT_EQ(r.first_problem()->layer, Layer::framework);
}

TEST(DoctorScenario, TorchWheelWithoutBlackwellKernels) {
  FixtureTree t;
  healthy_machine(t, test::machine("590.48.01", "NVIDIA H100 80GB HBM3", 0x2330, "13.0.96", "13.0.2"));
  t.write("/proc/driver/nvidia/gpus/0000:01:00.0/information", std::string("Model: \t\t NVIDIA GeForce RTX 5090\n"));
  t.write("/usr/bin/python3", std::string("#!/bin/sh\nexit 1\n"));
  const std::string site = "/usr/lib/python3.11/site-packages";
  t.write(site + "/torch/version.py", std::string("__version__ = '2.5.1+cu121'\ncuda: Optional[str] = '12.1'\n"));
  std::vector<FatEntry> entries;
  for (unsigned a : {50u, 60u, 70u, 75u, 80u, 86u, 90u}) entries.push_back({2, a, 0x11, 1, 7, 64, 64});
  test::ElfSpec spec;
  spec.sections.push_back({".nv_fatbin", 1, test::fatbin_container(entries)});
  t.library(site + "/torch/lib/libtorch_cuda.so", spec);
  Report r = run_doctor(t.view(), quick());
  const auto& k = layer(r, Layer::kernel_image);
  EXPECT_EQ(k.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(k, "no_kernel_image"));
  EXPECT_EQ(r.facts.gpus[0].sm(), 120);
  EXPECT_EQ(r.first_problem()->layer, Layer::kernel_image);
  EXPECT_NE(dump(r).find("no SASS for compute capability 12.0 and no PTX"), std::string::npos) << dump(r);
  // The same binary on an 8.9 GPU runs through sm_86 SASS.
  t.write("/proc/driver/nvidia/gpus/0000:01:00.0/information", std::string("Model: \t\t NVIDIA GeForce RTX 4090\n"));
  Report r2 = run_doctor(t.view(), quick());
  EXPECT_NE(layer(r2, Layer::kernel_image).verdict, Verdict::fail) << dump(r2);
}

TEST(DoctorScenario, XidFallenOffTheBus) {
  FixtureTree t;
  healthy_machine(t);
  t.write("/dev/kmsg", std::string("3,812,12,-;NVRM: Xid (PCI:0000:01:00): 79, pid=0, GPU has fallen off the bus.\n"));
  Report r = run_doctor(t.view(), quick());
  const auto& d = layer(r, Layer::driver);
  EXPECT_EQ(d.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(d, "gpu_fell_off_bus"));
}

TEST(DoctorScenario, WslWithLinuxLibcudaShadowingTheStub) {
  FixtureTree t;
  t.write("/proc/version", std::string("Linux version 5.15.153.1-microsoft-standard-WSL2\n"));
  t.write("/proc/sys/kernel/osrelease", std::string("5.15.153.1-microsoft-standard-WSL2\n"));
  t.write("/dev/dxg", std::string(""));
  t.library("/usr/lib/wsl/lib/libcuda.so.1");
  t.library("/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", {62, 2, "libcuda.so.1", {}, "", "", {}});
  t.symlink("libcuda.so.535.104.05", "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  t.ld_cache({{"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}, {"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"}});
  Report r = run_doctor(t.view(), quick());
  EXPECT_EQ(layer(r, Layer::hardware).verdict, Verdict::ok) << dump(r);
  EXPECT_EQ(layer(r, Layer::driver).verdict, Verdict::not_applicable);
  EXPECT_TRUE(has_cause(layer(r, Layer::driver_userspace), "wsl_libcuda")) << dump(r);
}

TEST(DoctorScenario, ContainerWithGpuButNoDriverInjected) {
  FixtureTree t;
  t.write("/.dockerenv", std::string(""));
  t.pci_gpu("0000:01:00.0", 0x20b0);
  Report r = run_doctor(t.view(), quick());
  EXPECT_TRUE(has_cause(layer(r, Layer::driver_userspace), "container_without_gpu")) << dump(r);
}

TEST(DoctorScenario, DriverApiErrorAndHangInChild) {
  FixtureTree t;
  healthy_machine(t);
  DoctorOptions o = quick();
  o.driver_api = true;
  o.helper_executable = STRATA_CLI;
  o.child_timeout_s = 1;
  {
    Report r = run_doctor(t.view({{"FAKE_CUDA_INIT", "803"}}), o);
    const auto& u = layer(r, Layer::driver_userspace);
    EXPECT_EQ(u.verdict, Verdict::fail) << dump(r);
    EXPECT_TRUE(has_cause(u, "libcuda_module_mismatch")) << dump(r);
    EXPECT_NE(dump(r).find("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"), std::string::npos);
  }
  {
    strata::Timer timer;
    Report r = run_doctor(t.view({{"FAKE_CUDA_HANG", "1"}}), o);
    EXPECT_LT(timer.seconds(), 5.0);
    EXPECT_TRUE(r.facts.driver_api.timed_out);
    EXPECT_EQ(layer(r, Layer::driver_userspace).verdict, Verdict::fail);
  }
}

TEST(DoctorScenario, FrameworkAskedThroughPythonChild) {
  FixtureTree t;
  healthy_machine(t);
  python_answering(t, "{\"frameworks\":[{\"package\":\"torch\",\"version\":\"2.8.0+cu128\",\"cuda\":\"12.8\","
                      "\"cudnn\":\"91002\",\"arch_list\":[\"sm_75\",\"sm_80\",\"sm_90\",\"sm_100\",\"sm_120\"],\"available\":false,"
                      "\"reason\":\"CUDA driver initialization failed\"}],\"nvidia_wheels\":[\"nvidia-cudnn-cu12==9.10.2.21\"]}");
  DoctorOptions o = quick();
  o.probe_python = true;
  Report r = run_doctor(t.view(), o);
  ASSERT_EQ(r.facts.frameworks.size(), 1u) << dump(r);
  EXPECT_EQ(r.facts.frameworks[0].version, "2.8.0+cu128");
  EXPECT_EQ(layer(r, Layer::framework).verdict, Verdict::fail);
  EXPECT_NE(dump(r).find("CUDA driver initialization failed"), std::string::npos);
  // A python that hangs on import is cut off.
  t.write("/usr/bin/python3", std::string("#!/bin/sh\nsleep 30\n"));
  o.python_timeout_s = 0.5;
  strata::Timer timer;
  Report r2 = run_doctor(t.view(), o);
  EXPECT_LT(timer.seconds(), 5.0);
  EXPECT_EQ(layer(r2, Layer::framework).verdict, Verdict::warn) << dump(r2);
}

TEST(DoctorScenario, JsonReportFollowsTheSchema) {
  FixtureTree t;
  t.pci_other("0000:00:00.0");
  Report r = run_doctor(t.view(), quick());
  auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["schema"], "strata-doctor/1");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["first_problem"]["layer"], "hardware");
  EXPECT_EQ(j["first_problem"]["finding"]["cause_id"], "no_gpu_visible");
  ASSERT_EQ(j["layers"].size(), 8u);
  const char* order[] = {"hardware", "driver", "driver-userspace", "runtime", "library", "framework", "kernel-image", "compute"};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(j["layers"][i]["layer"], order[i]);
  for (const auto& l : j["layers"]) {
    EXPECT_TRUE(l["verdict"] == "ok" || l["verdict"] == "warn" || l["verdict"] == "fail" || l["verdict"] == "n/a");
    EXPECT_TRUE(l["findings"].is_array());
    EXPECT_TRUE(l["not_checked"].is_array());
  }
  EXPECT_TRUE(j["facts"]["gpus"].is_array());
}

TEST(DoctorScenario, FullReportIsFast) {
  FixtureTree t;
  healthy_machine(t);
  strata::Timer timer;
  Report r = run_doctor(t.view(), quick());
  EXPECT_LT(timer.seconds(), 0.5);
  EXPECT_LT(r.seconds, 0.5);
}

TEST(DoctorScenario, ComputeLayerUsesTheGemmHook) {
  FixtureTree t;
  t.pci_other("0000:00:00.0");
  DoctorOptions o = quick();
  o.compute = true;
  o.threads = 1;
  Report r = run_doctor(t.view(), o);
  EXPECT_EQ(layer(r, Layer::compute).verdict, Verdict::not_applicable);
  EXPECT_NE(dump(r).find("strata_blas not built"), std::string::npos);
  int calls = 0;
  o.cpu_gemm = [&](int threads) {
    ++calls;
    EXPECT_EQ(threads, 1);
    return 1.0;  // far below any CPU's peak: the doctor must flag it
  };
  Report r2 = run_doctor(t.view(), o);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(layer(r2, Layer::compute).verdict, Verdict::warn) << dump(r2);
  EXPECT_NE(dump(r2).find("SGEMM reaches 1.0 GFLOPS"), std::string::npos) << dump(r2);
  // Many threads short of their peak while one thread is near its own: the evidence says the
  // cores do not add up (as on a 16-vCPU VM), not that a core is slow.
  const double core_peak = strata::measure_peak().peak_gflops_f32;
  o.threads = 16;
  o.cpu_gemm = [&](int threads) { return threads == 1 ? 0.9 * core_peak : 4.0 * core_peak; };
  const std::string text = dump(run_doctor(t.view(), o));
  EXPECT_NE(text.find("one thread: "), std::string::npos) << text;
  EXPECT_NE(text.find("the shortfall comes with threads"), std::string::npos) << text;
  // A slow core alone gets no such sentence.
  o.cpu_gemm = [&](int) { return 0.1 * core_peak; };
  EXPECT_EQ(dump(run_doctor(t.view(), o)).find("the shortfall comes with threads"), std::string::npos);
}

TEST(DoctorScenario, NvswitchSystemWithoutFabricManager) {
  FixtureTree t;
  healthy_machine(t);
  t.write("/sys/bus/pci/devices/0000:05:00.0/vendor", std::string("0x10de\n"));
  t.write("/sys/bus/pci/devices/0000:05:00.0/device", std::string("0x22a3\n"));
  t.write("/sys/bus/pci/devices/0000:05:00.0/class", std::string("0x068000\n"));
  Report r = run_doctor(t.view(), quick());
  EXPECT_EQ(r.facts.gpus.size(), 1u);  // the NVSwitch is not a GPU
  const auto& u = layer(r, Layer::driver_userspace);
  EXPECT_EQ(u.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(u, "fabric_manager"));
  t.write("/usr/bin/nv-fabricmanager", std::string("#!/bin/sh\n"));
  EXPECT_FALSE(has_cause(layer(run_doctor(t.view(), quick()), Layer::driver_userspace), "fabric_manager"));
}

TEST(DoctorScenario, NouveauHoldsTheGpu) {
  FixtureTree t;
  t.kernel_release("6.8.0-45-generic");
  t.pci_gpu("0000:01:00.0", 0x2204);
  t.write("/proc/modules", std::string("nouveau 1 0 - Live 0x0\n"));
  t.write("/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst", std::string("x"));
  Report r = run_doctor(t.view(), quick());
  const auto& d = layer(r, Layer::driver);
  EXPECT_EQ(d.verdict, Verdict::fail);
  std::string text = dump(r);
  EXPECT_NE(text.find("nouveau (the open-source driver) is loaded"), std::string::npos) << text;
  EXPECT_NE(text.find("module file present: /lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst"), std::string::npos) << text;
}

TEST(DoctorScenario, PtxOnlyBinaryNeedsANewerDriverThanInstalled) {
  FixtureTree t;
  healthy_machine(t, test::machine("570.26", "NVIDIA H100 80GB HBM3", 0x2330, "13.0.96", "13.0.2"));  // JITs PTX up to ISA 8.7 (CUDA 12.8)
  test::ElfSpec spec;
  spec.sections.push_back({".nv_fatbin", 1, test::fatbin_container({{2, 80, 0x11, 1, 8, 64, 64}, {1, 80, 0x8011, 9, 0, 80, 64}})});
  t.library("/opt/app/libkernels.so", spec);
  DoctorOptions o = quick();
  o.kernel_paths = {"/opt/app/libkernels.so"};
  Report r = run_doctor(t.view(), o);  // H100 (9.0): no sm_90 SASS, compute_80 PTX with ISA 9.0
  const auto& k = layer(r, Layer::kernel_image);
  EXPECT_EQ(k.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(k, "ptx_jit_too_old"));
  EXPECT_NE(dump(r).find("needs >= 580.65.06"), std::string::npos) << dump(r);
  test::replace_driver(t, "580.65.06");
  Report ok = run_doctor(t.view(), o);
  EXPECT_EQ(layer(ok, Layer::kernel_image).verdict, Verdict::warn) << dump(ok);  // runs, through JIT
}

TEST(DoctorScenario, TorchRuntimeUnreachableAndShadowedThroughLdLibraryPath) {
  FixtureTree t;
  healthy_machine(t);
  t.write("/usr/bin/python3", std::string("#!/bin/sh\nexit 1\n"));
  const std::string site = "/usr/lib/python3.11/site-packages";
  t.write(site + "/torch/version.py", std::string("__version__ = '2.4.1+cu121'\ncuda: Optional[str] = '12.1'\n"));
  test::ElfSpec torch_cuda;
  torch_cuda.needed = {"libcudart.so.12", "libnvJitLink.so.12", "libc10.so"};
  torch_cuda.runpath = "$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/nvjitlink/lib:$ORIGIN";
  t.library(site + "/torch/lib/libtorch_cuda.so", torch_cuda);
  t.library(site + "/nvidia/nvjitlink/lib/libnvJitLink.so.12");
  // No nvidia/cuda_runtime wheel: the CUDA 12 runtime is unreachable.
  Report r = run_doctor(t.view(), quick());
  const auto& fw = layer(r, Layer::framework);
  EXPECT_EQ(fw.verdict, Verdict::fail) << dump(r);
  EXPECT_TRUE(has_cause(fw, "missing_runtime")) << dump(r);
  // With the runtime present but an old system nvJitLink on LD_LIBRARY_PATH (F032's situation).
  t.library(site + "/nvidia/cuda_runtime/lib/libcudart.so.12");
  t.library("/usr/local/cuda-12.1/lib64/libnvJitLink.so.12");
  Report r2 = run_doctor(t.view({{"LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64"}}), quick());
  const auto& fw2 = layer(r2, Layer::framework);
  EXPECT_FALSE(has_cause(fw2, "missing_runtime")) << dump(r2);
  EXPECT_TRUE(has_cause(fw2, "shadowed_library")) << dump(r2);
  EXPECT_NE(dump(r2).find("Remove /usr/local/cuda-12.1/lib64 from LD_LIBRARY_PATH"), std::string::npos) << dump(r2);
}

// What `strata doctor` met on a real H200 machine (NVIDIA's CUDA 13.0 image with a PyTorch venv,
// 2026-12-04): a cuda-compat libcuda older than the driver left off the loader's path, a system
// cuDNN older than the venv's wheel but found only through ld.so.cache, JAX listing its devices
// and CuPy giving its CUDA as an integer. All of that is a healthy machine.
TEST(DoctorScenario, NvidiaCudaImageWithATorchVenvIsHealthy) {
  FixtureTree t;
  healthy_machine(t, test::machine("580.159.04", "NVIDIA H200", 0x2335, "13.0.96", "13.0.2"));
  t.copy_from_host(STRATA_FAKE_LIBCUDA, "/usr/local/cuda-13.0/compat/libcuda.so.580.95.05");
  t.symlink("libcuda.so.580.95.05", "/usr/local/cuda-13.0/compat/libcuda.so.1");
  t.library("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0", {62, 2, "libcudnn.so.9", {}, "", "", {}});
  t.symlink("libcudnn.so.9.14.0", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
  t.cache_add("libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
  const std::string site = "/usr/lib/python3.12/site-packages";
  for (const char* sub : {"", "_graph", "_ops", "_cnn", "_adv", "_engines_precompiled", "_engines_runtime_compiled", "_heuristic"}) {
    t.library(site + "/nvidia/cudnn/lib/libcudnn" + sub + ".so.9");
    t.library(std::string("/usr/lib/x86_64-linux-gnu/libcudnn") + sub + ".so.9");
  }
  test::kernel_library(t, "/usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9", test::kernels({90, 100}));
  test::dist_info(t, site, "nvidia_cudnn_cu13", "9.19.0.56");
  python_answering(t, "{\"frameworks\":[{\"package\":\"jax\",\"version\":\"0.11.2\",\"devices\":[\"cuda:0\"],"
                      "\"available\":true},{\"package\":\"cupy\",\"version\":\"14.2.0\",\"cuda\":\"13020\",\"device_count\":1,"
                      "\"available\":true}],\"nvidia_wheels\":[]}");
  DoctorOptions o = quick();
  o.probe_python = true;
  o.deep_libraries = true;
  Report r = run_doctor(t.view(), o);
  const std::string text = dump(r);
  EXPECT_EQ(r.first_problem(), nullptr) << text;
  // --deep looks for cuDNN's GPU code where cuDNN 9 keeps it.
  EXPECT_NE(text.find("libcudnn_engines_precompiled.so.9: SASS sm_90 sm_100"), std::string::npos) << text;
  EXPECT_EQ(layer(r, Layer::driver_userspace).verdict, Verdict::ok) << text;
  EXPECT_NE(text.find("forward-compatibility libcuda, not on the loader's path: /usr/local/cuda-13.0/compat/libcuda.so.580.95.05"),
            std::string::npos) << text;
  EXPECT_NE(text.find("error 803"), std::string::npos) << text;
  EXPECT_EQ(layer(r, Layer::library).verdict, Verdict::ok) << text;
  EXPECT_FALSE(has_cause(layer(r, Layer::library), "shadowed_library")) << text;
  EXPECT_NE(text.find("RUNPATH is searched before ld.so.cache"), std::string::npos) << text;
  EXPECT_NE(text.find("jax 0.11.2 (/usr/bin/python3): CUDA available, 1 device(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("cupy 14.2.0, built for CUDA 13.2"), std::string::npos) << text;
  EXPECT_EQ(text.find("not in the driver table"), std::string::npos) << text;
  // The same old cuDNN on LD_LIBRARY_PATH does shadow the wheel.
  Report r2 = run_doctor(t.view({{"LD_LIBRARY_PATH", "/usr/lib/x86_64-linux-gnu"}}), o);
  EXPECT_TRUE(has_cause(layer(r2, Layer::library), "shadowed_library")) << dump(r2);
  // Another driver's libcuda outside any compat folder is still a warning.
  t.copy_from_host(STRATA_FAKE_LIBCUDA, "/usr/lib64/libcuda.so.550.54.14");
  t.symlink("libcuda.so.550.54.14", "/usr/lib64/libcuda.so.1");
  Report r3 = run_doctor(t.view(), o);
  EXPECT_EQ(layer(r3, Layer::driver_userspace).verdict, Verdict::warn) << dump(r3);
}
