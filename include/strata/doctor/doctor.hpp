// strata doctor: walks the GPU compute stack bottom-up (hardware, kernel driver, driver user
// space, runtime, libraries, frameworks, kernel images, compute) and says which layer is broken,
// why, and how to fix it. Everything is read through a SystemView; GPU libraries are only ever
// dlopen'ed inside child processes (the strata binary re-executed in a helper mode).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "strata/doctor/report.hpp"
#include "strata/doctor/system_view.hpp"

namespace strata::doctor {

// Achieved GFLOPS of a single-precision GEMM using `threads` threads; supplied by the caller
// (the CLI times strata::blas::gemm) so the doctor library does not depend on strata_blas.
using GemmBenchmark = std::function<double(int threads)>;

// The CPU's AMX tiles as the compute layer sees them (read from this machine unless a caller,
// a test, gives its own).
struct AmxState {
  bool present = false;     // CPUID: AMX-TILE
  bool os_enables = false;  // XCR0 holds the tile state: the kernel (and hypervisor) turned it on
  bool declined = false;    // STRATA_AMX=0
  bool granted = false;     // the kernel gave this process the tile data (arch_prctl)
  double bf16_peak_gflops = 0, bf16_loop_gflops = 0;  // per core: theory, and the tile-product loop
};

struct DoctorOptions {
  // The executable that implements the child helper modes (`strata doctor --child ...`);
  // empty: probes that need a child process report "not checked".
  std::string helper_executable;
  double child_timeout_s = 10;
  bool probe_python = true;          // run each Python found to ask its frameworks
  double python_timeout_s = 30;
  bool driver_api = true;            // query the driver API in a child
  std::vector<std::string> kernel_paths;  // extra binaries for the kernel-image layer
  bool deep_libraries = false;       // also scan the CUDA libraries' fatbins (slow on big libs)
  bool compute = false;              // layer 8
  // Deadline of the GPU compute child (cuBLAS initialisation, a 4096^3 SGEMM and copies, each
  // timed for about 0.1 s): generous, since only a hung GPU comes near it.
  double compute_timeout_s = 120;
  GemmBenchmark cpu_gemm;            // empty: "not applicable: strata_blas not built"
  std::string cpu_gemm_missing_reason = "strata_blas not built";
  int threads = 0;                   // 0: strata's default thread count
  std::optional<AmxState> amx;       // empty: this machine's
};

Report run_doctor(const SystemView& sys, const DoctorOptions& options);

// Rendering (report_text.cpp / report_json.cpp).
std::string render_text(const Report& report, bool colour);
std::string render_json(const Report& report);  // schema in docs/doctor.md

// Child helper modes, run inside the re-executed strata binary. Each prints key=value lines
// on stdout and returns the process exit code.
int child_driver_api(const std::string& libcuda_path);
int child_gpu_compute(const std::string& libcudart_path, const std::string& libcublas_path);

}  // namespace strata::doctor
