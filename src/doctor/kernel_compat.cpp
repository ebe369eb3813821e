// SASS/PTX compatibility rules (data/doctor/cuda_arch_rules.tsv).
#include "strata/doctor/kernel_compat.hpp"

namespace strata::doctor {

bool sass_runs_on(const ImageTarget& t, int sm) {
  if (t.kind != ImageKind::sass) return false;
  const int major = t.arch / 10, minor = t.arch % 10, gmajor = sm / 10, gminor = sm % 10;
  switch (t.variant) {
    case ArchVariant::a: return t.arch == sm;
    case ArchVariant::f:  // family: same major, this and later minors (sm_100f: 10.0, 10.3)
    case ArchVariant::plain: return major == gmajor && minor <= gminor;
  }
  return false;
}

std::optional<ImageTarget> parse_target_name(std::string_view name) {
  ImageTarget t;
  if (name.starts_with("sm_")) { t.kind = ImageKind::sass; name.remove_prefix(3); }
  else if (name.starts_with("compute_")) { t.kind = ImageKind::ptx; name.remove_prefix(8); }
  else if (name.starts_with("lto_")) { t.kind = ImageKind::ltoir; name.remove_prefix(4); }
  else return std::nullopt;
  if (!name.empty() && name.back() == 'a') { t.variant = ArchVariant::a; name.remove_suffix(1); }
  else if (!name.empty() && name.back() == 'f') { t.variant = ArchVariant::f; name.remove_suffix(1); }
  auto v = Version::parse(name);
  if (!v || v->parts.size() != 1) return std::nullopt;
  t.arch = v->major();
  return t;
}

static std::string cc(int sm) { return std::to_string(sm / 10) + "." + std::to_string(sm % 10); }

RunCheck check_gpu(const std::set<ImageTarget>& targets, int sm) {
  RunCheck r;
  for (const auto& t : targets)
    if (sass_runs_on(t, sm)) {
      r.how = RunCheck::How::sass;
      r.target = t.name();
      r.detail = t.name() + " SASS runs on compute capability " + cc(sm);
    }
  if (r.how == RunCheck::How::sass) return r;
  for (const auto& t : targets)
    if (t.kind == ImageKind::ptx && t.variant == ArchVariant::plain && t.arch <= sm) {
      r.how = RunCheck::How::ptx_jit;
      r.target = t.name();
      r.detail = "no SASS for " + cc(sm) + "; " + t.name() + " PTX is JIT-compiled by the driver at first launch";
    }
  if (r.how == RunCheck::How::ptx_jit) return r;
  std::string have;
  for (const auto& t : targets)
    if (t.kind != ImageKind::ltoir) have += (have.empty() ? "" : " ") + t.name();
  r.detail = "no SASS for compute capability " + cc(sm) + " and no PTX at or below it (has: " + (have.empty() ? "nothing" : have) + ")";
  return r;
}

RunCheck check_gpu(const FatbinReport& report, FatbinReport::Scope scope, int sm, const std::optional<Version>& driver,
                   const KnowledgeBase& kb) {
  RunCheck r = check_gpu(report.target_set(scope), sm);
  if (r.how != RunCheck::How::ptx_jit) return r;
  auto t = parse_target_name(r.target);
  auto it = report.targets.find(*t);
  if (it == report.targets.end()) return r;
  const Version& isa = it->second.max_version;
  const PtxIsaRow* row = kb.ptx_isa(isa);
  if (!row || !row->min_driver) {
    r.detail += " (PTX ISA " + isa.str() + ": minimum driver unknown)";
    return r;
  }
  r.detail += " (PTX ISA " + isa.str() + " needs driver >= " + row->min_driver->str() + (row->uncertain ? ", uncertain" : "") + ")";
  if (driver && *driver < *row->min_driver) {
    r.how = RunCheck::How::ptx_needs_newer_driver;
    r.detail = r.target + " PTX uses ISA " + isa.str() + " (CUDA " + row->cuda.str() + "), but driver " + driver->str() +
               " can only JIT older PTX: needs >= " + row->min_driver->str();
  }
  return r;
}

}  // namespace strata::doctor
