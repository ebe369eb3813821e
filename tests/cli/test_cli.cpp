// Runs the real `strata` binary and checks exit codes and output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {
struct Result {
  int code;
  std::string out;  // stdout and stderr together
};
Result run(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " STRATA_CLI_PATH " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, ""};
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
}  // namespace

TEST(Cli, Version) {
  auto r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("strata 0."), std::string::npos);
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : {"", "info", "doctor", "bench"}) {
    auto r = run(std::string(sub) + " --help");
    if (r.out.find("trata") == std::string::npos && r.code != 0) continue;  // optional subcommand not built
    EXPECT_EQ(r.code, 0) << sub << r.out;
    EXPECT_NE(r.out.find("--help"), std::string::npos) << sub;
  }
}

TEST(Cli, UnknownOptionsAreUsageErrors) {
  EXPECT_EQ(run("--frobnicate").code, 2);
  EXPECT_EQ(run("info --frobnicate").code, 2);
  EXPECT_EQ(run("no-such-command").code, 2);
}

TEST(Cli, InfoJsonDescribesThisMachine) {
  auto r = run("info --json", "STRATA_NUM_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["devices"][0]["device"], "cpu");
  EXPECT_GT(j["peak"]["gflops_f32_per_core"].get<double>(), 0.0);
  EXPECT_GT(j["peak"]["clock_ghz"].get<double>(), 0.0);
}

TEST(Cli, ForcedIsaIsReportedOrRefused) {
  auto r = run("info --json", "STRATA_ISA=generic");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["isa"]["active"], "generic");
  auto bad = run("info", "STRATA_ISA=sse9");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("STRATA_ISA"), std::string::npos);
  // Asking for more than the CPU has is a clear error, not a crash.
  auto best = nlohmann::json::parse(run("info --json").out)["isa"]["best"].get<std::string>();
  if (best != "avx512") {
    auto r2 = run("info", "STRATA_ISA=avx512");
    EXPECT_EQ(r2.code, 1);
    EXPECT_NE(r2.out.find("cannot run the 'avx512' kernels"), std::string::npos) << r2.out;
  }
}

// `strata bench pool` counts every call it makes and refuses a single part (nothing to overlap).
// The count of serialised calls depends on the machine's scheduler, so only the accounting is
// checked here; docs/PERFORMANCE.md has the measured numbers.
TEST(Cli, BenchPoolCountsItsCalls) {
  auto r = run("bench pool --bursts 3 --calls 4 --part-ms 0.2 --pause-ms 1");
  if (r.out.find("pool") == std::string::npos && r.code != 0) GTEST_SKIP() << "bench not built";
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(" of 12 (first calls of a burst: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" of 3)"), std::string::npos) << r.out;
  EXPECT_EQ(run("bench pool -t 1").code, 2);
}

#if defined(STRATA_DNN_LIB_PATH)
// `strata bench conv --peers strata:PATH` times another build of libstrata_dnn in the same
// process, call for call with this one (bench/compare_conv_builds.sh). A copy of this very
// library must load as that peer, give the same result (the bench checks) and report its rows.
TEST(Cli, BenchConvTimesAnotherBuildInProcess) {
  const auto dir = std::filesystem::temp_directory_path() / ("strata_cli_ab_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto copy = dir / "other.so", layers = dir / "layers.txt";
  std::filesystem::copy_file(STRATA_DNN_LIB_PATH, copy, std::filesystem::copy_options::overwrite_existing);
  std::ofstream(layers) << "ic8ih9oc16kh3sh1ph1n\"small_3x3\"\nic16ih7oc8kh1sh1ph0n\"small_1x1\"\n";
  for (const char* layout : {"nchw", "nhwc"}) {
    auto r = run("bench conv -f " + layers.string() + " -b 1 -t 1 -r 2 --layout " + layout + " --peers strata:" +
                 copy.string());
    if (r.out.find("conv") == std::string::npos && r.code != 0) GTEST_SKIP() << "bench conv not built";
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("this build against another (other.so)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("small_3x3"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("small_1x1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("same algorithm"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
  }
  auto missing = run("bench conv -f " + layers.string() + " -b 1 -t 1 -r 1 --peers strata:" + (dir / "none.so").string());
  EXPECT_NE(missing.code, 0) << missing.out;
  EXPECT_NE(missing.out.find("none.so"), std::string::npos) << missing.out;
  std::filesystem::remove_all(dir);
}
#endif
