// Layer/verdict names and the report's summary questions.
#include "strata/doctor/report.hpp"

namespace strata::doctor {

const char* layer_name(Layer l) {
  switch (l) {
    case Layer::hardware: return "hardware";
    case Layer::driver: return "driver";
    case Layer::driver_userspace: return "driver-userspace";
    case Layer::runtime: return "runtime";
    case Layer::library: return "library";
    case Layer::framework: return "framework";
    case Layer::kernel_image: return "kernel-image";
    case Layer::compute: return "compute";
  }
  return "?";
}

std::optional<Layer> layer_from_name(std::string_view name) {
  for (Layer l : {Layer::hardware, Layer::driver, Layer::driver_userspace, Layer::runtime, Layer::library, Layer::framework,
                  Layer::kernel_image, Layer::compute})
    if (name == layer_name(l)) return l;
  return std::nullopt;
}

const char* layer_title(Layer l) {
  switch (l) {
    case Layer::hardware: return "Hardware";
    case Layer::driver: return "Kernel driver";
    case Layer::driver_userspace: return "Driver user space";
    case Layer::runtime: return "CUDA runtime";
    case Layer::library: return "Libraries";
    case Layer::framework: return "Frameworks";
    case Layer::kernel_image: return "Kernel images";
    case Layer::compute: return "Compute";
  }
  return "?";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ok: return "ok";
    case Verdict::warn: return "warn";
    case Verdict::fail: return "fail";
    case Verdict::not_applicable: return "n/a";
  }
  return "?";
}

static int rank(Verdict v) {
  switch (v) {
    case Verdict::fail: return 3;
    case Verdict::warn: return 2;
    case Verdict::ok: return 1;
    default: return 0;
  }
}

Verdict worse(Verdict a, Verdict b) { return rank(a) >= rank(b) ? a : b; }

Finding& LayerReport::add(Verdict v, std::string summary_text) {
  findings.push_back(Finding{v, std::move(summary_text), {}, {}, {}, {}});
  verdict = worse(verdict, v);
  return findings.back();
}

const LayerReport* Report::first_problem() const {
  for (const auto& l : layers)
    if (l.verdict == Verdict::fail) return &l;
  for (const auto& l : layers)
    if (l.verdict == Verdict::warn) return &l;
  return nullptr;
}

const Finding* Report::first_problem_finding() const {
  const LayerReport* l = first_problem();
  if (!l) return nullptr;
  for (Verdict v : {Verdict::fail, Verdict::warn})
    for (const auto& f : l->findings)
      if (f.verdict == v) return &f;
  return nullptr;
}

int Report::exit_code() const {
  for (const auto& l : layers)
    if (l.verdict == Verdict::fail) return 1;
  return 0;
}

}  // namespace strata::doctor
