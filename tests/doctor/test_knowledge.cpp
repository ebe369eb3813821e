// The compiled-in knowledge base: it matches the data files, answers the compatibility
// questions with the tables' numbers, and its CUDA error codes agree with the installed headers.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "strata/doctor/kernel_compat.hpp"
#include "strata/doctor/knowledge.hpp"

using namespace strata::doctor;

TEST(DoctorKnowledge, EmbeddedTablesAreTheDataFiles) {
  for (const char* name : {"cuda_driver_min.tsv", "gpu_compute_capability.tsv", "failures.tsv", "pytorch_wheels.tsv",
                           "error_patterns.tsv", "causes.tsv", "cuda_errors.tsv", "xid_codes.tsv", "ptx_isa_versions.tsv"}) {
    std::ifstream f(std::string(STRATA_DOCTOR_DATA_DIR) + "/" + name);
    std::stringstream ss;
    ss << f.rdbuf();
    auto embedded = knowledge_file(name);
    ASSERT_TRUE(embedded) << name;
    EXPECT_EQ(std::string(*embedded), ss.str()) << name << " is stale: rebuild";
  }
}

TEST(DoctorKnowledge, DriverTableAnswers) {
  const auto& kb = KnowledgeBase::get();
  EXPECT_EQ(kb.driver_requirements.size(), 56u);
  EXPECT_EQ(kb.max_cuda_for_driver(*Version::parse("580.65.06"))->cuda.str(), "13.0.0");
  EXPECT_EQ(kb.max_cuda_for_driver(*Version::parse("470.141.03"))->cuda.prefix(2).str(), "11.4");
  EXPECT_EQ(kb.runtime_support(*Version::parse("13.0"), *Version::parse("580.65.06")), DriverSupport::ok);
  EXPECT_EQ(kb.runtime_support(*Version::parse("12.8"), *Version::parse("535.54.03")), DriverSupport::minor_compat);
  EXPECT_EQ(kb.runtime_support(*Version::parse("13.0"), *Version::parse("575.57.08")), DriverSupport::insufficient);
  EXPECT_EQ(kb.runtime_support(*Version::parse("10.2"), *Version::parse("418.39")), DriverSupport::insufficient);
  EXPECT_EQ(kb.ptx_isa(*Version::parse("9.1"))->min_driver->str(), "590.44.01");
  EXPECT_TRUE(kb.ptx_isa(*Version::parse("8.6"))->uncertain);
  EXPECT_EQ(kb.toolkit_arch(*Version::parse("13.0.2"))->min_sm, 75);
}

TEST(DoctorKnowledge, GpuNamesInFreeText) {
  const auto& kb = KnowledgeBase::get();
  EXPECT_EQ(kb.gpu_in_text("RTX5080 got CUDA error")->sm(), 120);
  EXPECT_EQ(kb.gpu_in_text("NVIDIA GeForce RTX 4060 Ti 16GB")->name, "GeForce RTX 4060 Ti");
  EXPECT_EQ(kb.gpu_in_text("dlib on Tesla K80")->sm(), 37);
  EXPECT_EQ(kb.gpu_in_text("NVIDIA H100 80GB HBM3")->sm(), 90);
  EXPECT_TRUE(kb.gpu_in_text("NVIDIA H20")->uncertain);
  EXPECT_EQ(kb.gpu_in_text("an A2000 card"), nullptr);  // "A2" must not match inside "A2000"
}

TEST(DoctorKnowledge, ArchRules) {
  auto t = [](const char* n) { return *parse_target_name(n); };
  EXPECT_TRUE(sass_runs_on(t("sm_80"), 86));
  EXPECT_TRUE(sass_runs_on(t("sm_86"), 89));
  EXPECT_FALSE(sass_runs_on(t("sm_90"), 100));
  EXPECT_FALSE(sass_runs_on(t("sm_90a"), 100));
  EXPECT_TRUE(sass_runs_on(t("sm_90a"), 90));
  EXPECT_TRUE(sass_runs_on(t("sm_100f"), 103));
  EXPECT_FALSE(sass_runs_on(t("sm_100a"), 103));
  EXPECT_EQ(check_gpu(std::set<ImageTarget>{t("sm_80"), t("compute_90")}, 120).how, RunCheck::How::ptx_jit);
  EXPECT_EQ(check_gpu(std::set<ImageTarget>{t("sm_80"), t("compute_90a")}, 120).how, RunCheck::How::no_image);
}

TEST(DoctorKnowledge, CudaErrorCodesMatchTheInstalledHeaders) {
  std::ifstream cuda_h("/usr/local/cuda/include/cuda.h"), types_h("/usr/local/cuda/include/driver_types.h");
  if (!cuda_h || !types_h) GTEST_SKIP() << "CUDA headers not installed";
  std::stringstream a, b;
  a << cuda_h.rdbuf();
  b << types_h.rdbuf();
  const std::string driver = a.str(), runtime = b.str();
  for (const auto& e : KnowledgeBase::get().cuda_errors) {
    std::regex re("\\b" + e.name + "\\s*=\\s*" + std::to_string(e.code) + "\\b");
    EXPECT_TRUE(std::regex_search(e.api == "driver" ? driver : runtime, re)) << e.name << " = " << e.code;
  }
}
