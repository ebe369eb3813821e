// `strata doctor explain` over the 41 shared failure reports: every report's text (the error
// plus the environment its reporter gave) must land on the layer failures.tsv names and on the
// cause we labelled from its root-cause column (data/failures_expected_causes.tsv). Plus the
// machine side: probes on a fixture confirm or rule out a cause.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "fixture.hpp"
#include "strata/doctor/doctor.hpp"
#include "strata/doctor/explain.hpp"

using namespace strata::doctor;

namespace {

std::map<std::string, std::string> expected_causes() {
  std::ifstream f(std::string(STRATA_DOCTOR_TEST_DATA) + "/failures_expected_causes.tsv");
  std::stringstream ss;
  ss << f.rdbuf();
  std::map<std::string, std::string> out;
  auto rows = parse_tsv(ss.str());
  for (std::size_t i = 1; i < rows.size(); ++i) out[rows[i][0]] = rows[i][1];
  return out;
}

}  // namespace

TEST(DoctorExplain, AllSharedFailureReportsGetTheirLayerAndCause) {
  const auto& kb = KnowledgeBase::get();
  ASSERT_EQ(kb.failures.size(), 41u);
  auto expected = expected_causes();
  ASSERT_EQ(expected.size(), 41u);
  int right = 0;
  for (const auto& f : kb.failures) {
    Explanation e = explain(f.error_text + "\n" + f.environment, kb);
    ASSERT_NE(e.top(), nullptr) << f.id << ": nothing recognised in: " << f.error_text;
    EXPECT_EQ(e.top()->cause->layer, f.layer) << f.id << ": " << f.error_text << "\n" << render_explanation_text(e, false);
    EXPECT_EQ(e.top()->cause->id, expected[f.id]) << f.id << ": " << f.error_text << "\n" << render_explanation_text(e, false);
    right += e.top()->cause->layer == f.layer && e.top()->cause->id == expected[f.id];
  }
  EXPECT_EQ(right, 41);
}

TEST(DoctorExplain, ErrorTextAloneStillFindsTheLayer) {
  // Without the environment the ranking falls back to the knowledge base's order, and the
  // layer of the top cause is still the expected one for the unambiguous messages.
  const auto& kb = KnowledgeBase::get();
  for (const auto& f : kb.failures) {
    Explanation e = explain(f.error_text, kb);
    ASSERT_NE(e.top(), nullptr) << f.id;
    bool listed = false;
    for (const auto& c : e.causes) listed |= c.cause->layer == f.layer;
    EXPECT_TRUE(listed) << f.id << ": layer " << f.layer << " not among the candidates";
  }
}

TEST(DoctorExplain, ReasonsCarryTheNumbers) {
  const auto& kb = KnowledgeBase::get();
  Explanation e = explain("CUDA runtime error: the provided PTX was compiled with an unsupported toolchain; driver 470.141.03, image built with CUDA 11.7", kb);
  ASSERT_NE(e.top(), nullptr);
  EXPECT_EQ(e.top()->cause->id, "ptx_jit_too_old");
  EXPECT_EQ(e.top()->from_text, Assessment::confirmed);
  ASSERT_FALSE(e.top()->text_reasons.empty());
  EXPECT_NE(e.top()->text_reasons[0].find("515.43.04"), std::string::npos) << e.top()->text_reasons[0];
  Explanation none = explain("everything is fine", kb);
  EXPECT_EQ(none.top(), nullptr);
}

TEST(DoctorExplain, ProbesOnThisMachineConfirmOrRuleOut) {
  const auto& kb = KnowledgeBase::get();
  test::FixtureTree t;
  t.pci_gpu("0000:01:00.0", 0x2330);
  t.nvidia_driver("580.65.06", "0000:01:00.0", "NVIDIA H100 80GB HBM3");
  t.library("/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
  t.ld_cache({{"libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"}});
  auto sys = t.view();
  DoctorOptions o;
  o.probe_python = false;
  o.driver_api = false;
  Report report = run_doctor(sys, o);
  LoaderModel loader(sys);
  MachineEvidence m{&report, &loader};
  Explanation missing8 = explain("ImportError: libcudnn.so.8: cannot open shared object file", kb, m);
  ASSERT_NE(missing8.top(), nullptr);
  EXPECT_EQ(missing8.top()->cause->id, "missing_library");
  EXPECT_EQ(missing8.top()->on_this_machine, Assessment::confirmed);
  Explanation missing9 = explain("ImportError: libcudnn.so.9: cannot open shared object file", kb, m);
  const CauseAssessment* lib9 = nullptr;
  for (const auto& c : missing9.causes)
    if (c.cause->id == "missing_library") lib9 = &c;
  ASSERT_NE(lib9, nullptr);
  EXPECT_EQ(lib9->on_this_machine, Assessment::ruled_out);
  EXPECT_NE(lib9->machine_reasons.front().find("/usr/lib/x86_64-linux-gnu/libcudnn.so.9"), std::string::npos);
  // Found here, so the ranking moves to the next explanation: another copy shadowing it.
  EXPECT_EQ(missing9.top()->cause->id, "shadowed_library");
  Explanation nodev = explain("cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", kb, m);
  for (const auto& c : nodev.causes) {
    if (c.cause->id == "no_gpu_visible" || c.cause->id == "wsl_libcuda") {
      EXPECT_EQ(c.on_this_machine, Assessment::ruled_out) << c.cause->id;
    }
  }
}
