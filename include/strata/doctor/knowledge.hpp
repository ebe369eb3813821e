// The doctor's knowledge base: the compatibility tables in data/doctor (compiled in) and the
// questions the probes ask of them. Rows the sources mark uncertain stay marked, so reports can
// say "uncertain" instead of asserting.
#pragma once
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strata/doctor/version.hpp"

namespace strata::doctor {

struct DriverRequirement {
  Version cuda;             // 12.4.1
  std::string label;        // "CUDA 12.4 Update 1"
  Version toolkit_min;      // Linux x86-64 driver the toolkit needs
  std::optional<Version> minor_compat_min;  // lowest driver that runs it via minor-version compatibility
};

struct GpuModel {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::string architecture;
  bool uncertain = false;
  int sm() const { return cc_major * 10 + cc_minor; }
};

struct PtxIsaRow {
  Version isa, cuda;
  std::optional<Version> min_driver;
  bool uncertain = false;
};

struct ToolkitArchRow {
  Version first, last;  // CUDA release range the row covers
  int min_sm = 0, max_sm = 0;
  std::string removed;
  bool uncertain = false;
};

struct TorchWheel {
  Version torch;
  std::string variant;  // "cu128"
  Version cuda;
  std::string role, cudnn;
  std::set<int> sass, ptx;
  bool ptx_uncertain = false;
  std::string uncertain;  // the source's note, empty when read from the source
};

struct CudnnRow {
  std::string versions, cuda_builds, toolkits, driver, ccs;
  bool uncertain = false;
};

struct XidCode {
  int xid = 0;
  std::string meaning, layer, action;
  bool uncertain = false;
};

struct CudaErrorCode {
  std::string api;  // "driver" or "runtime"
  int code = 0;
  std::string name, layer, meaning;
};

struct FailureReport {
  std::string id, error_text, environment, layer, root_cause, fix, source_url, cause_basis;
};

struct Cause {
  std::string id, layer, title, explanation;
  std::vector<std::string> fixes;
};

struct ErrorPattern {
  std::string id, regex_text;
  std::regex re;
  std::vector<std::string> causes;
};

enum class DriverSupport { ok, minor_compat, insufficient, unknown };
const char* driver_support_name(DriverSupport s);

class KnowledgeBase {
 public:
  static const KnowledgeBase& get();  // parsed once from the embedded tables

  std::vector<DriverRequirement> driver_requirements;  // newest first, as in the table
  std::vector<GpuModel> gpus;
  std::vector<PtxIsaRow> ptx_isas;
  std::vector<ToolkitArchRow> toolkit_archs;
  std::vector<TorchWheel> torch_wheels;
  std::vector<CudnnRow> cudnn;
  std::vector<XidCode> xids;
  std::vector<CudaErrorCode> cuda_errors;
  std::vector<FailureReport> failures;
  std::vector<Cause> causes;
  std::vector<ErrorPattern> patterns;

  // Newest CUDA release whose toolkit minimum the driver meets (what nvidia-smi calls "CUDA Version").
  const DriverRequirement* max_cuda_for_driver(const Version& driver) const;
  // The row for this CUDA version: exact match, else the GA (x.y.0) row of its major.minor.
  const DriverRequirement* requirement_for_cuda(const Version& cuda) const;
  // Can a runtime of CUDA `cuda` run on `driver`? `why` gets a sentence with the numbers.
  DriverSupport runtime_support(const Version& cuda, const Version& driver, std::string* why = nullptr) const;
  // Best GPU model named inside `text` (longest match on word boundaries), or nullptr.
  const GpuModel* gpu_in_text(std::string_view text) const;
  const PtxIsaRow* ptx_isa(const Version& isa) const;
  const PtxIsaRow* ptx_isa_for_cuda(const Version& cuda) const;
  const ToolkitArchRow* toolkit_arch(const Version& cuda) const;
  std::vector<const TorchWheel*> wheels(std::optional<Version> torch, std::string_view variant) const;
  const XidCode* xid(int code) const;
  const CudaErrorCode* cuda_error(std::string_view api, int code) const;
  const Cause* cause(std::string_view id) const;
};

// Splits a TSV file into rows of fields (the header row included), bounded in size.
std::vector<std::vector<std::string>> parse_tsv(std::string_view text);
// The raw text of an embedded knowledge-base file ("cuda_driver_min.tsv"), for docs and tests.
std::optional<std::string_view> knowledge_file(std::string_view name);
// Lower-cases and splits letters from digits so "RTX5080" and "rtx 5080" compare equal.
std::string normalize_model_text(std::string_view text);

}  // namespace strata::doctor
