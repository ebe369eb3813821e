// run_doctor: the probes in bottom-up order, each timed; later probes use the facts earlier
// ones established (GPUs, driver version, runtimes, frameworks).
#include "probes.hpp"
#include "strata/core/timer.hpp"

namespace strata::doctor {

namespace {

// A probe often sees a problem above the layer that is broken: the runtime layer finds the
// driver too old for a libcudart, the kernel-image layer finds the driver's PTX JIT too old,
// the framework layer finds a library missing. The finding stays where it was seen, and is
// repeated in the layer its cause belongs to (causes.tsv), so that the report's first failing
// layer is the one to fix. One repeat per cause and layer; fails before warnings.
void blame_cause_layers(Report& report, const KnowledgeBase& kb) {
  std::vector<std::pair<std::size_t, Finding>> echoes;  // target layer index, finding
  for (Verdict v : {Verdict::fail, Verdict::warn}) {
    for (const auto& l : report.layers) {
      for (const auto& f : l.findings) {
        if (f.verdict != v || f.cause_id.empty()) continue;
        const Cause* c = kb.cause(f.cause_id);
        std::optional<Layer> target = c ? layer_from_name(c->layer) : std::nullopt;
        if (!target || *target >= l.layer) continue;
        std::size_t ti = 0;
        while (ti < report.layers.size() && report.layers[ti].layer != *target) ++ti;
        if (ti == report.layers.size()) continue;
        bool present = false;
        for (const auto& x : report.layers[ti].findings) present |= x.cause_id == f.cause_id && (x.verdict == Verdict::fail || x.verdict == f.verdict);
        for (const auto& [i, x] : echoes) present |= i == ti && x.cause_id == f.cause_id;
        if (present) continue;
        Finding e = f;
        e.evidence.insert(e.evidence.begin(), std::string("seen by the ") + layer_title(l.layer) + " check (layer " +
                                                  std::to_string(int(l.layer) + 1) + "); the cause lies in this layer");
        echoes.emplace_back(ti, std::move(e));
      }
    }
  }
  for (auto& [i, f] : echoes) {
    LayerReport& t = report.layers[i];
    t.verdict = worse(t.verdict, f.verdict);
    t.findings.push_back(std::move(f));
  }
}

}  // namespace

Report run_doctor(const SystemView& sys, const DoctorOptions& options) {
  strata::Timer total;
  ProbeContext ctx(sys, options);
  Report report;
  using Probe = LayerReport (*)(ProbeContext&);
  const Probe probes[] = {probe_hardware, probe_kernel_driver, probe_driver_userspace, probe_runtime,
                          probe_libraries, probe_frameworks,   probe_kernel_images};
  for (Probe p : probes) {
    strata::Timer t;
    LayerReport l = p(ctx);
    l.seconds = t.seconds();
    report.layers.push_back(std::move(l));
  }
  if (options.compute) {
    strata::Timer t;
    LayerReport l = probe_compute(ctx);
    l.seconds = t.seconds();
    report.layers.push_back(std::move(l));
  } else {
    LayerReport l;
    l.layer = Layer::compute;
    l.verdict = Verdict::not_applicable;
    l.summary = "not run";
    l.not_checked.push_back("compute check not run (use --compute)");
    report.layers.push_back(std::move(l));
  }
  report.facts = std::move(ctx.facts);
  blame_cause_layers(report, ctx.kb);
  report.seconds = total.seconds();
  return report;
}

}  // namespace strata::doctor
