// run_doctor: the probes in bottom-up order, each timed; later probes use the facts earlier
// ones established (GPUs, driver version, runtimes, frameworks).
#include "probes.hpp"
#include "strata/core/timer.hpp"

namespace strata::doctor {

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
  report.seconds = total.seconds();
  return report;
}

}  // namespace strata::doctor
