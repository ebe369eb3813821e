// The `strata doctor` command as users run it: exit codes, JSON, speed on this machine, explain
// from arguments and stdin, kernels, and the programs nvcc built with known -gencode flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "strata/doctor/child_process.hpp"

using namespace strata::doctor;

namespace {

ChildResult run_strata(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), STRATA_CLI);
  if (!env.count("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return run_child(args, env, 60);
}

std::set<std::string> words(const std::string& s) {
  std::istringstream is(s);
  std::set<std::string> out;
  for (std::string w; is >> w;) out.insert(w);
  return out;
}

}  // namespace

TEST(DoctorCli, ReportOnThisMachineIsFastAndHonest) {
  ChildResult r = run_strata({"doctor", "--no-python"});
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_LT(r.seconds, 0.5) << "the full report without --compute/Python must take < 0.5 s";
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_NE(r.out.find("strata doctor: the GPU compute stack, bottom-up"), std::string::npos);
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no colour when stdout is not a terminal";
  ChildResult j = run_strata({"doctor", "--no-python", "--json"});
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["exit_code"], j.exit_code);
  bool gpu = !doc["facts"]["gpus"].empty();
  if (!gpu) {
    // This machine (no GPU): hardware is the first failing layer and the rest says why it is
    // not applicable instead of inventing verdicts.
    EXPECT_EQ(j.exit_code, 1);
    EXPECT_EQ(doc["first_problem"]["layer"], "hardware");
    EXPECT_EQ(doc["layers"][2]["verdict"], "n/a");
    EXPECT_FALSE(doc["layers"][3]["not_checked"].empty());
  }
}

TEST(DoctorCli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_strata({"doctor", "--no-such-flag"}).exit_code, 2);
  EXPECT_EQ(run_strata({"doctor", "kernels", "/nonexistent/file"}).exit_code, 2);
  EXPECT_EQ(run_strata({"doctor", "kernels", "--gpu", "banana", STRATA_CLI}).exit_code, 2);
  EXPECT_EQ(run_strata({"doctor", "--color", "purple"}).exit_code, 2);
}

TEST(DoctorCli, ExplainFromArgumentsAndStdin) {
  ChildResult r = run_strata({"doctor", "explain", "--no-probe", "RuntimeError: CUDA error: no kernel image is available for execution on the device"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Layer: kernel-image"), std::string::npos) << r.out;
  ChildResult j = run_strata({"doctor", "explain", "--no-probe", "--json", "Failed to initialize NVML: Driver/library version mismatch"});
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["layer"], "driver");
  EXPECT_EQ(doc["cause_id"], "nvml_mismatch");
  // With probes (default): this machine's evidence is attached.
  ChildResult p = run_strata({"doctor", "explain", "--json", "ImportError: libcudart.so.12: cannot open shared object file"});
  auto pd = nlohmann::json::parse(p.out);
  EXPECT_EQ(pd["cause_id"], "missing_runtime");
  EXPECT_NE(pd["causes"][0]["on_this_machine"], "possible");
  // Nothing recognised: exit 1.
  EXPECT_EQ(run_strata({"doctor", "explain", "--no-probe", "hello world"}).exit_code, 1);
}

TEST(DoctorCli, KernelsOnARealLibrary) {
  const char* lib = "/usr/local/cuda/lib64/libcurand.so.10";
  if (!std::ifstream(lib)) GTEST_SKIP() << lib << " not installed";
  ChildResult r = run_strata({"doctor", "kernels", "--json", "--gpu", "8.9", "--gpu", "7.0", lib});
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(words(doc[0]["sass"]), words("sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_103 sm_120 sm_121"));
  EXPECT_EQ(doc[0]["ptx"], "compute_121");
  EXPECT_EQ(doc[0]["gpus"][0]["runs"], true);
  EXPECT_EQ(doc[0]["gpus"][1]["runs"], false);  // CUDA 13 libraries dropped Volta
  EXPECT_EQ(r.exit_code, 1);
}

#ifdef STRATA_NVCC_FIXTURES
// Built by nvcc at test-build time from data/k.cu with the flags in expected_probe_outputs.txt.
TEST(DoctorCli, KernelsMatchNvccGencodeFlags) {
  struct Case {
    const char* file;
    const char* sass;
    const char* ptx;
  } cases[] = {{"k_none", "sm_75 sm_80 sm_90", "compute_90"},
               {"k_sm90a", "sm_90a sm_100f", "compute_120"},
               {"k_rdc.o", "", ""}};
  for (const auto& c : cases) {
    std::string path = std::string(STRATA_NVCC_FIXTURES) + "/" + c.file;
    ChildResult r = run_strata({"doctor", "kernels", "--json", path});
    ASSERT_FALSE(r.out.empty()) << c.file << ": " << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(words(doc[0]["sass"]), words(c.sass)) << c.file;
    EXPECT_EQ(words(doc[0]["ptx"]), words(c.ptx)) << c.file;
    if (std::string(c.file) == "k_rdc.o") {
      // -rdc objects only have pre-link images (in __nv_relfatbin): listed, not runnable.
      std::set<std::string> all;
      for (const auto& t : doc[0]["targets"]) all.insert(t["target"]);
      EXPECT_EQ(all, (std::set<std::string>{"sm_80", "compute_80"}));
    }
    if (std::string(c.file) == "k_none") {
      for (const auto& t : doc[0]["targets"]) {
        if (t["target"] == "compute_90") {
          EXPECT_EQ(t["version"], "9.0");
        }
      }
    }
  }
}
#endif

// The probe script itself (data/doctor/probe_frameworks.py), run by the real python3 against
// stand-in jax and cupy modules shaped like the real ones seen on an H200 machine: JAX's GPU
// devices are counted, CuPy's integer CUDA version (13020) is given as 13.2.
TEST(DoctorCli, FrameworkProbeScriptCountsJaxDevicesAndReadsCupysVersion) {
  const std::string dir = testing::TempDir() + "/probe_fakes";
  std::filesystem::create_directories(dir + "/cupy/cuda");
  std::ofstream(dir + "/jax.py") << "__version__ = '0.11.2'\n"
                                    "class D:\n    def __init__(self, s): self.s = s\n    def __str__(self): return self.s\n"
                                    "def devices(): return [D('cuda:0'), D('cuda:1')]\n";
  std::ofstream(dir + "/cupy/__init__.py") << "__version__ = '14.2.0'\nfrom . import cuda\n";
  std::ofstream(dir + "/cupy/cuda/__init__.py") << "class runtime:\n"
                                                   "    getDeviceCount = staticmethod(lambda: 1)\n"
                                                   "    runtimeGetVersion = staticmethod(lambda: 13020)\n";
  ChildResult r = run_child({"/usr/bin/env", "python3", "-S", STRATA_DOCTOR_DATA_DIR "/probe_frameworks.py"},
                            {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"PYTHONPATH", dir}}, 60);
  if (!r.started) GTEST_SKIP() << "no python3: " << r.error;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  int seen = 0;
  for (const auto& f : doc["frameworks"]) {
    if (f["package"] == "jax") {
      EXPECT_EQ(f["device_count"], 2) << r.out;
      ++seen;
    }
    if (f["package"] == "cupy") {
      EXPECT_EQ(f["cuda"], "13.2") << r.out;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2) << r.out;
}
