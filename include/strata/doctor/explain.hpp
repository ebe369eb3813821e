// `strata doctor explain`: classifies an error message (plus any context pasted with it) into
// layer and candidate causes from the knowledge base, weighs each cause against the facts in
// the text (GPU model, driver, CUDA and wheel versions, container/WSL hints) and, when given a
// report of this machine's probes, against what the probes found; then ranks them.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strata/doctor/knowledge.hpp"
#include "strata/doctor/loader.hpp"
#include "strata/doctor/report.hpp"

namespace strata::doctor {

// What the text itself says about the failing machine.
struct TextFacts {
  std::string gpu_name;  // model found in the text
  int gpu_sm = 0;        // from the model table or "capability sm_XX" / "CC X.Y"
  std::vector<Version> drivers;     // driver versions mentioned, in order
  std::optional<Version> cuda;      // "CUDA 11.7", "cu121", "cuda111"
  std::optional<Version> torch;     // "torch 2.5.1"
  std::string wheel_variant;        // "cu121"
  std::set<int> built_archs;        // sm_XX the binary was built for (not the GPU's own)
  std::string missing_library;      // "libcudnn.so.8" from "...: cannot open shared object file"
  bool container = false, gpu_flag_missing = false, gpu_flag_given = false;
  bool wsl = false, jetson = false, upgrade = false, ld_library_path = false;
};
TextFacts extract_facts(std::string_view text, const KnowledgeBase& kb);

enum class Assessment { confirmed, unknown, ruled_out };
const char* assessment_name(Assessment a);

struct CauseAssessment {
  const Cause* cause = nullptr;
  Assessment from_text = Assessment::unknown;
  std::vector<std::string> text_reasons;
  Assessment on_this_machine = Assessment::unknown;
  std::vector<std::string> machine_reasons;
};

struct Explanation {
  std::vector<std::string> matched_patterns;
  TextFacts facts;
  std::vector<CauseAssessment> causes;  // ranked, most likely first
  const CauseAssessment* top() const { return causes.empty() ? nullptr : &causes.front(); }
};

// The machine's side: a probe report and a loader model (for "can this library be found here").
struct MachineEvidence {
  const Report* report = nullptr;
  const LoaderModel* loader = nullptr;
};

Explanation explain(std::string_view text, const KnowledgeBase& kb, const MachineEvidence& machine = {});
std::string render_explanation_text(const Explanation& e, bool colour);
std::string render_explanation_json(const Explanation& e);

}  // namespace strata::doctor
