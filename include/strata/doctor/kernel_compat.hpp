// Will a binary's GPU code run on a GPU? The rules of cuda_arch_rules.tsv applied to a fatbin
// listing: SASS within a major (sm_XY on X.Z, Z >= Y), 'a' only on exactly X.Y, 'f' on the later
// minors of its family, PTX JIT forward if the driver understands the PTX ISA.
#pragma once
#include <optional>
#include <string>

#include "strata/doctor/fatbin.hpp"
#include "strata/doctor/knowledge.hpp"

namespace strata::doctor {

struct RunCheck {
  enum class How { sass, ptx_jit, ptx_needs_newer_driver, no_image };
  How how = How::no_image;
  std::string target;  // the entry that would be used ("sm_86", "compute_90")
  std::string detail;  // a sentence with the numbers
};

// `driver`: installed driver version, when known (for PTX JIT).
RunCheck check_gpu(const FatbinReport& report, FatbinReport::Scope scope, int sm, const std::optional<Version>& driver,
                   const KnowledgeBase& kb);
// Same for a list of target names such as torch.cuda.get_arch_list(): "sm_86", "sm_90a", "compute_120".
RunCheck check_gpu(const std::set<ImageTarget>& targets, int sm);
std::optional<ImageTarget> parse_target_name(std::string_view name);
bool sass_runs_on(const ImageTarget& t, int sm);

}  // namespace strata::doctor
