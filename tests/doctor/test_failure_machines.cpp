// Every shared failure report (data/doctor/failures.tsv) as a fixture machine: the situation its
// environment and root-cause columns describe is built as a fake system tree, the full report is
// run on it, and the doctor must (a) put the first problem in the layer the report names, (b)
// state the report's cause at the top and (c) give the report's fix. Reports whose cause lies
// outside what the doctor can read (an application bug, memory in use, a cuDNN limitation) get a
// healthy machine: the report must find nothing, and `explain` on the report's text, judged on
// that machine, must name the cause. docs/doctor.md lists each report, its test and why.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "fixture.hpp"
#include "strata/doctor/doctor.hpp"
#include "strata/doctor/explain.hpp"

using namespace strata::doctor;
namespace T = strata::doctor::test;

namespace {

// The machine a report happened on, and how the doctor is run there.
struct Machine {
  T::FixtureTree tree;
  SystemView::Env env;
  DoctorOptions opt;
  Machine() {
    opt.probe_python = false;
    opt.driver_api = false;
  }
  // Ask the driver API in a child through the fake libcuda, which answers cuInit with `init`.
  void driver_api(int init) {
    opt.driver_api = true;
    opt.helper_executable = STRATA_CLI;
    opt.child_timeout_s = 5;
    env["FAKE_CUDA_INIT"] = std::to_string(init);
  }
};

using Build = void (*)(Machine&);

struct Case {
  Case(const char* i, Build b, const char* c, const char* f, bool o = true, std::optional<Layer> l = std::nullopt)
      : id(i), build(b), cause_id(c), fix(f), observable(o), layer(l) {}
  const char* id;
  Build build;
  const char* cause_id;  // stated at the top of the report (by explain, when not observable)
  const char* fix;       // a phrase the fix text must contain
  bool observable = true;
  std::optional<Layer> layer;  // where the doctor reports it, when failures.tsv names no stack layer
};

// ---- builders, one per situation; reports that share a situation share a builder -------------

const std::string kSys = "/usr/lib/x86_64-linux-gnu";

// A library at `path` whose DT_NEEDED entries are `needed`.
void needs(Machine& m, const std::string& path, std::vector<std::string> needed, const std::string& runpath = "") {
  T::ElfSpec spec;
  spec.needed = std::move(needed);
  spec.runpath = runpath;
  m.tree.library(path, spec);
}

// A versioned library file and its soname link: dir/libX.so.<version> and dir/<soname>.
void versioned(Machine& m, const std::string& dir, const std::string& soname, const std::string& version) {
  const std::string stem = soname.substr(0, soname.find(".so.") + 3);
  m.tree.library(dir + "/" + stem + "." + version, {62, 2, soname, {}, "", "", {}});
  m.tree.symlink(stem + "." + version, dir + "/" + soname);
}

// F001: inside a container started without --gpus: the host's module is visible in /proc, but
// no libcuda was injected next to the image's CUDA runtime.
void container_without_gpus(Machine& m) {
  T::container(m.tree, "535.104.05", "NVIDIA A10", 0x2236, false);
  T::cuda_toolkit(m.tree, "12.2.140", "12.2.2");
}

// F002-F004: the image's CUDA runtime is newer than the host driver injected into the container.
void image_runtime_newer_than_host_driver(Machine& m, const char* driver, const char* model, unsigned device, const char* cuda) {
  T::container(m.tree, driver, model, device, true);
  T::cuda_toolkit(m.tree, cuda);
}

// F005: a Blackwell GPU on a driver older than the first CUDA that supports it, with a
// nightly cu128 PyTorch (which has sm_120) in a conda environment.
void gpu_newer_than_driver(Machine& m) {
  T::healthy_machine(m.tree, T::machine("560.35.03", "NVIDIA GeForce RTX 5090 D", 0x2b87, "12.6.77", "12.6.3"));
  const std::string site = T::python(m.tree, "/opt/conda/envs/comfy", "3.11");
  m.env["CONDA_PREFIX"] = "/opt/conda/envs/comfy";
  T::torch_install(m.tree, site, "2.7.0.dev20250310+cu128", "12.8", T::kernels({75, 80, 86, 90, 100, 120}));
}

// F006-F008: a Blackwell GPU with a recent driver, and a PyTorch wheel without sm_120 kernels
// (and, for vLLM, its own extension without them either).
void torch_without_gpu_arch(Machine& m, const char* driver, const char* model, unsigned device, const char* cuda,
                            const char* venv, const char* torch, const char* torch_cuda, const char* extension) {
  T::healthy_machine(m.tree, T::machine(driver, model, device, cuda, ""));
  const std::string site = T::python(m.tree, venv, "3.12");
  if (std::string(venv) != "/usr") m.env["VIRTUAL_ENV"] = venv;
  T::torch_install(m.tree, site, torch, torch_cuda, T::kernels({50, 60, 70, 75, 80, 86, 90}));
  if (*extension) {
    T::kernel_library(m.tree, site + "/" + extension, T::kernels({80, 86, 89, 90}));
    m.opt.kernel_paths.push_back(site + "/" + extension);
  }
}

// F009-F011: the driver's user-space libraries were upgraded while the old module stays loaded.
void upgraded_under_module(Machine& m, const char* module, const char* libs, const char* model, unsigned device,
                           const char* cuda) {
  T::MachineSpec spec = T::machine(libs, model, device, cuda, "");
  spec.module = module;
  T::healthy_machine(m.tree, spec);
}

// F012: ORT built for CUDA 11.8 + cuDNN 8 on a CUDA 12.2 / cuDNN 9 machine (CUDA 11.8 present too).
void ort_cudnn8_on_cudnn9_machine(Machine& m) {
  T::healthy_machine(m.tree, T::machine("535.104.05", "NVIDIA GeForce RTX 3090", 0x2204, "12.2.140", "12.2.2"));
  T::cuda_toolkit(m.tree, "11.8.89", "11.8.0", false);
  versioned(m, "/usr/local/cuda-11.8/lib64", "libcublas.so.11", "11.11.3.6");
  m.tree.cache_add("libcublas.so.11", "/usr/local/cuda-11.8/lib64/libcublas.so.11");
  for (const char* lib : {"libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
                          "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9"})
    versioned(m, kSys, lib, "9.1.0");
  const std::string site = T::python(m.tree, "/usr/local", "3.10", "", "dist-packages");
  T::dist_info(m.tree, site, "onnxruntime_gpu", "1.17.0");
  needs(m, site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so", {"libcublas.so.11", "libcudnn.so.8", "libcudart.so.11.0"});
}

// F013: Colab with CUDA 10.1 and cuDNN 7; onnxruntime-gpu 1.5.1 wants cuDNN 8 (the machine
// models the dependencies the error shows; libcublas.so.10 is the same soname in 10.1 and 10.2).
void ort_cudnn8_on_colab_cuda101(Machine& m) {
  T::healthy_machine(m.tree, T::machine("418.67", "Tesla T4", 0x1eb8, "10.1.243", ""));
  versioned(m, "/usr/local/cuda-10.1/lib64", "libcublas.so.10", "10.2.1.243");
  m.tree.cache_add("libcublas.so.10", "/usr/local/cuda-10.1/lib64/libcublas.so.10");
  versioned(m, kSys, "libcudnn.so.7", "7.6.5");
  const std::string site = T::python(m.tree, "/usr/local", "3.6", "", "dist-packages");
  T::dist_info(m.tree, site, "onnxruntime_gpu", "1.5.1");
  needs(m, site + "/onnxruntime/capi/onnxruntime_pybind11_state.so", {"libcublas.so.10", "libcudnn.so.8"});
}

// F014: Ubuntu 24.04 with the distribution's CUDA 12.0 and no cuDNN 9; onnxruntime-gpu 1.20.1.
void ort_without_cudnn9(Machine& m) {
  T::healthy_machine(m.tree, T::machine("550.120", "NVIDIA GeForce RTX 4070", 0x2786, "", ""));
  for (const char* lib : {"libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12"}) versioned(m, kSys, lib, "12.0.146");
  m.tree.cache_add("libcudart.so.12", kSys + "/libcudart.so.12");
  m.tree.write("/usr/bin/nvcc", std::string("#!/bin/sh\n"));
  const std::string site = T::python(m.tree, "/home/user/memo/.venv", "3.12");
  m.env["VIRTUAL_ENV"] = "/home/user/memo/.venv";
  T::dist_info(m.tree, site, "onnxruntime_gpu", "1.20.1");
  needs(m, site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
        {"libcublasLt.so.12", "libcublas.so.12", "libcudnn.so.9", "libcudart.so.12"});
}

// F015: the pytorch/pytorch:1.5-cuda10.1-cudnn7-runtime image: cuDNN 7 only inside torch/lib.
void cudnn_only_inside_torch(Machine& m) {
  T::container(m.tree, "440.64", "Tesla V100-SXM2-16GB", 0x1db1, true);
  const std::string site = T::python(m.tree, "/opt/conda", "3.7");
  m.env["PATH"] = "/opt/conda/bin:/usr/local/bin:/usr/bin:/bin";
  T::torch_install(m.tree, site, "1.5.0", "10.1");
  versioned(m, site + "/torch/lib", "libcudnn.so.7", "7.6.3");
  T::dist_info(m.tree, site, "onnxruntime_gpu", "1.4.0");
  needs(m, site + "/onnxruntime/capi/onnxruntime_pybind11_state.so", {"libcudnn.so.7"});
}

// F016/F017: a package built for CUDA 12 on a machine with only a CUDA 11 runtime.
void cuda12_package_on_cuda11(Machine& m, const char* driver, const char* model, unsigned device, const char* prefix,
                              const char* site_kind, const char* dist, const char* dist_version, const char* lib) {
  T::healthy_machine(m.tree, T::machine(driver, model, device, "11.8.89", "11.8.0"));
  const std::string site = T::python(m.tree, prefix, "3.10", "", site_kind);
  if (std::string(prefix) != "/usr/local") m.env["VIRTUAL_ENV"] = prefix;
  T::dist_info(m.tree, site, dist, dist_version);
  needs(m, site + "/" + lib, {"libcudart.so.12"});
}

// F018/F019: the running kernel has no nvidia module; one was built for another kernel.
void module_not_built_for_kernel(Machine& m, const char* running, const char* built_for, const char* module_file,
                                 const char* model, unsigned device, const char* libs) {
  m.tree.kernel_release(running);
  m.tree.pci_gpu("0000:01:00.0", device);
  m.tree.write("/proc/modules", std::string("ext4 1 1 - Live 0x0\n"));
  m.tree.write("/lib/modules/" + std::string(running) + "/kernel/fs/ext4/ext4.ko", std::string("x"));
  m.tree.write("/lib/modules/" + std::string(built_for) + "/" + module_file, std::string("x"));
  m.tree.write("/usr/share/misc/pci.ids", "# pci.ids\n10de  NVIDIA Corporation\n\t" + [&] {
    char id[8];
    std::snprintf(id, sizeof id, "%04x", device);
    return std::string(id);
  }() + "  " + model + "\n10df  Emulex Corporation\n");
  versioned(m, kSys, "libcuda.so.1", libs);
  m.tree.cache_add("libcuda.so.1", kSys + "/libcuda.so.1");
}

// F020, F021, F026, F027: a healthy machine running the framework the report used.
void healthy_with_torch(Machine& m, const char* torch, const char* torch_cuda) {
  T::healthy_machine(m.tree);
  T::torch_install(m.tree, T::python(m.tree, "/usr", "3.11"), torch, torch_cuda);
}

// F022/F023: an older cuDNN on LD_LIBRARY_PATH shadows the one the PyTorch wheel bundles.
void old_cudnn_shadows_wheel(Machine& m, const char* torch, const char* torch_cuda, const char* wheel_version,
                             const char* old_dir, const char* old_version) {
  T::healthy_machine(m.tree);
  const std::string site = T::python(m.tree, "/usr", "3.10");
  T::torch_install(m.tree, site, torch, torch_cuda);
  m.tree.library(site + "/nvidia/cudnn/lib/libcudnn.so.8");
  T::dist_info(m.tree, site, "nvidia_cudnn_cu11", wheel_version);
  m.tree.library(site + "/nvidia/cuda_runtime/lib/libcudart.so.11.0");  // the cu11 wheel's own runtime
  T::dist_info(m.tree, site, "nvidia_cuda_runtime_cu11", std::string(torch_cuda) == "11.7" ? "11.7.99" : "11.8.89");
  versioned(m, old_dir, "libcudnn.so.8", old_version);
  m.env["LD_LIBRARY_PATH"] = old_dir;
}

// F024/F025/F041: a binary whose only code for the GPU is PTX of an ISA newer than the driver's JIT.
void ptx_newer_than_driver_jit(Machine& m, bool in_container, const char* driver, const char* model, unsigned device,
                               const char* cuda, const char* binary, std::vector<unsigned> sass, unsigned ptx_arch,
                               std::pair<int, int> isa) {
  if (in_container) {
    T::container(m.tree, driver, model, device, true);
    T::cuda_toolkit(m.tree, cuda);
  } else {
    T::healthy_machine(m.tree, T::machine(driver, model, device, cuda, ""));
  }
  T::kernel_library(m.tree, binary, T::kernels(sass, {{ptx_arch, isa}}));
  m.opt.kernel_paths.push_back(binary);
}

// F028-F030, F040: a binary built for architectures that do not include the GPU's.
void binary_without_gpu_arch(Machine& m, bool in_container, const char* driver, const char* model, unsigned device,
                             const char* cuda, const char* binary, std::vector<unsigned> sass,
                             std::vector<std::pair<unsigned, std::pair<int, int>>> ptx) {
  if (in_container)
    T::container(m.tree, driver, model, device, true);
  else
    T::healthy_machine(m.tree, T::machine(driver, model, device, cuda, ""));
  T::kernel_library(m.tree, binary, T::kernels(sass, ptx));
  m.opt.kernel_paths.push_back(binary);
}

// F031: WSL2 with a Linux driver's libcuda installed inside, found before /usr/lib/wsl/lib.
void wsl_with_linux_libcuda(Machine& m) {
  m.tree.write("/proc/version", std::string("Linux version 5.15.90.1-microsoft-standard-WSL2\n"));
  m.tree.write("/proc/sys/kernel/osrelease", std::string("5.15.90.1-microsoft-standard-WSL2\n"));
  m.tree.write("/dev/dxg", std::string(""));
  m.tree.library("/usr/lib/wsl/lib/libcuda.so.1");
  versioned(m, kSys, "libcuda.so.1", "520.61.05");
  m.tree.ld_cache({{"libcuda.so.1", kSys + "/libcuda.so.1"}, {"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"}});
}

// F032: pip torch with nvidia-* wheels; LD_LIBRARY_PATH puts CUDA 12.1's older nvJitLink first.
void system_nvjitlink_shadows_wheel(Machine& m) {
  T::healthy_machine(m.tree);
  const std::string site = T::python(m.tree, "/usr", "3.11");
  T::torch_install(m.tree, site, "2.4.1+cu121", "12.1");
  needs(m, site + "/torch/lib/libtorch_cuda.so", {"libcudart.so.12", "libnvJitLink.so.12", "libc10.so"},
        "$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/nvjitlink/lib:$ORIGIN");
  m.tree.library(site + "/nvidia/cuda_runtime/lib/libcudart.so.12");
  m.tree.library(site + "/nvidia/nvjitlink/lib/libnvJitLink.so.12");
  m.tree.library("/usr/local/cuda-12.1/lib64/libnvJitLink.so.12");
  m.env["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.1/lib64";
}

// F033/F034: a GPU host whose Docker cannot run the NVIDIA hook (snap Docker, or no toolkit).
void docker_without_nvidia_hook(Machine& m, bool snap) {
  T::healthy_machine(m.tree);
  m.tree.write(snap ? "/snap/bin/docker" : "/usr/bin/docker", std::string("#!/bin/sh\n"));
  if (snap) m.tree.write("/usr/bin/nvidia-ctk", std::string("#!/bin/sh\n"));  // installed, but snap Docker cannot use it
}

// F035: Xid 79 in the kernel log of a laptop GPU.
void gpu_fell_off_the_bus(Machine& m) {
  T::MachineSpec spec = T::machine("530.41.03", "NVIDIA GeForce RTX 3070 Ti Laptop GPU", 0x24a0, "12.1.105", "12.1.1");
  spec.kernel = "6.3.5-gentoo";
  T::healthy_machine(m.tree, spec);
  m.tree.write("/dev/kmsg", std::string("3,1201,90210,-;NVRM: Xid (PCI:0000:01:00): 79, pid=2321, name=Xorg, GPU has fallen off the bus.\n"));
}

// F036: an HGX H100 (8 GPUs, 4 NVSwitches) without Fabric Manager; cuInit answers 802.
void nvswitch_without_fabric_manager(Machine& m) {
  T::MachineSpec spec = T::machine("535.104.05", "NVIDIA H100 80GB HBM3", 0x2330, "12.2.140", "12.2.2");
  spec.gpus = 8;
  T::healthy_machine(m.tree, spec);
  for (int i = 0; i < 4; ++i) {
    const std::string dir = "/sys/bus/pci/devices/0000:0" + std::to_string(i) + ":10.0/";
    m.tree.write(dir + "vendor", std::string("0x10de\n"));
    m.tree.write(dir + "device", std::string("0x22a3\n"));
    m.tree.write(dir + "class", std::string("0x068000\n"));
  }
  m.driver_api(802);
}

// F037: Jetson AGX Orin, JetPack 5.1.2, a venv with the generic (CPU-only) aarch64 torch wheel.
void jetson_with_generic_torch(Machine& m) {
  T::FixtureTree& t = m.tree;
  t.write("/etc/nv_tegra_release", std::string("# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64\n"));
  // Device-tree strings are NUL-terminated (and the compatible list NUL-separated).
  static const char model[] = "NVIDIA Jetson AGX Orin Developer Kit";
  static const char compatible[] = "nvidia,p3737-0000+p3701-0000\0nvidia,tegra234";
  t.write("/proc/device-tree/model", std::string(model, sizeof model));
  t.write("/proc/device-tree/compatible", std::string(compatible, sizeof compatible));
  t.kernel_release("5.10.120-tegra");
  t.write("/proc/modules", std::string("nvgpu 1 20 - Live 0x0\n"));
  t.write("/lib/ld-linux-aarch64.so.1", std::string("x"));  // an arm64 userland
  const std::string tegra = "/usr/lib/aarch64-linux-gnu/tegra";
  T::ElfSpec arm{183, 2, "libcuda.so.1", {}, "", "", {}};
  t.library(tegra + "/libcuda.so.1.1", arm);
  t.symlink("libcuda.so.1.1", tegra + "/libcuda.so.1");
  t.write("/etc/ld.so.cache", T::build_ld_cache({{"libcuda.so.1", tegra + "/libcuda.so.1"}}, 0x0a03));
  const std::string site = T::python(m.tree, "/home/user/venv", "3.10");
  m.env["VIRTUAL_ENV"] = "/home/user/venv";
  T::torch_install(m.tree, site, "2.1.0", "");
}

// F038: a CPU-only torch wheel (the report's Windows PyPI default; the same wheel on Linux).
void cpu_only_torch(Machine& m) { healthy_with_torch(m, "2.3.1+cpu", ""); }

// F039: a GeForce with a consistent driver, and cuda-compat's libcuda of another driver version
// first on LD_LIBRARY_PATH: cuInit answers 803.
void stray_compat_libcuda(Machine& m) {
  T::MachineSpec spec = T::machine("470.199.02", "NVIDIA GeForce GTX 1070", 0x1b81, "11.8.89", "11.8.0");
  spec.kernel = "5.15.0-86-generic";
  T::healthy_machine(m.tree, spec);
  m.tree.copy_from_host(STRATA_FAKE_LIBCUDA, "/usr/local/cuda-11.8/compat/libcuda.so.520.61.05");
  m.tree.symlink("libcuda.so.520.61.05", "/usr/local/cuda-11.8/compat/libcuda.so.1");
  m.env["LD_LIBRARY_PATH"] = "/usr/local/cuda-11.8/compat";
  m.driver_api(803);
}

// ---- the table: one row per report --------------------------------------------------------

const Case kCases[] = {
    {"F001", container_without_gpus, "container_without_gpu", "--gpus all"},
    {"F002", [](Machine& m) { image_runtime_newer_than_host_driver(m, "387.26", "NVIDIA TITAN Xp", 0x1b02, "10.0.130"); },
     "driver_too_old", "Upgrade the NVIDIA driver to >= 410.48"},
    {"F003", [](Machine& m) { image_runtime_newer_than_host_driver(m, "410.78", "GeForce GTX 1070", 0x1b81, "10.1.243"); },
     "driver_too_old", "Upgrade the NVIDIA driver to >= 418.39"},
    {"F004", [](Machine& m) { image_runtime_newer_than_host_driver(m, "375.39", "Quadro P5000", 0x1bb0, "10.0.130"); },
     "driver_too_old", "Upgrade the NVIDIA driver to >= 410.48"},
    {"F005", gpu_newer_than_driver, "driver_too_old", "Upgrade the NVIDIA driver to >= 570.26"},
    {"F006",
     [](Machine& m) {
       torch_without_gpu_arch(m, "590.48.01", "NVIDIA GeForce RTX 5090", 0x2b85, "13.0.96", "/usr", "2.5.1+cu121", "12.1", "");
     },
     "no_kernel_image", "torch>=2.7' --index-url https://download.pytorch.org/whl/cu128"},
    {"F007",
     [](Machine& m) {
       torch_without_gpu_arch(m, "570.133.07", "NVIDIA GeForce RTX 5070", 0x2f04, "12.8.93", "/opt/ComfyUI/venv", "2.6.0+cu124",
                              "12.4", "");
     },
     "no_kernel_image", "whl/cu128"},
    {"F008",
     [](Machine& m) {
       torch_without_gpu_arch(m, "575.57.08", "NVIDIA GeForce RTX 5080", 0x2c02, "12.9.86", "/opt/vllm/venv", "2.6.0+cu124", "12.4",
                              "vllm/_C.abi3.so");
     },
     "no_kernel_image", "sm_120"},
    {"F009", [](Machine& m) { upgraded_under_module(m, "550.90.07", "550.107.02", "NVIDIA GeForce RTX 4090", 0x2684, "12.4.131"); },
     "nvml_mismatch", "Reboot"},
    {"F010", [](Machine& m) { upgraded_under_module(m, "460.56", "460.73.01", "Tesla V100-SXM2-32GB", 0x1db5, "11.2.152"); },
     "nvml_mismatch", "apt-mark hold"},
    {"F011", [](Machine& m) { upgraded_under_module(m, "470.161.03", "510.108.03", "NVIDIA GeForce GTX 1080 Ti", 0x1b06, "11.4.152"); },
     "nvml_mismatch", "Reboot"},
    {"F012", ort_cudnn8_on_cudnn9_machine, "missing_library", "Install cuDNN 8 for CUDA 11: pip install nvidia-cudnn-cu11==8.*"},
    {"F013", ort_cudnn8_on_colab_cuda101, "missing_library", "conda install cudnn=8 cudatoolkit=10"},
    {"F014", ort_without_cudnn9, "missing_library", "pip install nvidia-cudnn-cu12==9.*"},
    {"F015", cudnn_only_inside_torch, "missing_library", "conda install cudnn=7"},
    {"F016",
     [](Machine& m) {
       cuda12_package_on_cuda11(m, "535.129.03", "NVIDIA A10", 0x2236, "/opt/xinference/venv", "site-packages", "vllm", "0.4.0",
                                "vllm/_C.abi3.so");
     },
     "missing_runtime", "pip install nvidia-cuda-runtime-cu12"},
    {"F017",
     [](Machine& m) {
       cuda12_package_on_cuda11(m, "525.105.17", "Tesla T4", 0x1eb8, "/usr/local", "dist-packages", "cuml_cu12", "23.4.1",
                                "cuml/libcuml++.so");
     },
     "missing_runtime", "pip install cuml-cu11"},
    {"F018",
     [](Machine& m) {
       module_not_built_for_kernel(m, "5.10.0-26-cloud-amd64", "5.10.0-25-cloud-amd64", "kernel/drivers/video/nvidia.ko",
                                   "TU104GL [Tesla T4]", 0x1eb8, "535.104.05");
     },
     "driver_not_loaded", "sudo dkms autoinstall -k 5.10.0-26-cloud-amd64"},
    {"F019",
     [](Machine& m) {
       module_not_built_for_kernel(m, "6.9.3-2-cachyos", "6.9.3-arch1-1", "updates/dkms/nvidia.ko.zst", "AD104 [GeForce RTX 4070]",
                                   0x2786, "550.78");
     },
     "driver_not_loaded", "sudo dkms autoinstall -k 6.9.3-2-cachyos"},
    {"F020", [](Machine& m) { healthy_with_torch(m, "2.0.1+cu118", "11.8"); }, "gpu_out_of_memory", "nvidia-smi", false},
    {"F021", [](Machine& m) { healthy_with_torch(m, "1.0.0", "10.0"); }, "cudnn_limitation", "smaller batch", false},
    {"F022",
     [](Machine& m) { old_cudnn_shadows_wheel(m, "1.13.1+cu117", "11.7", "8.5.0.96", "/opt/conda/lib", "8.3.3"); },
     "shadowed_library", "Remove /opt/conda/lib from LD_LIBRARY_PATH"},
    {"F023",
     [](Machine& m) { old_cudnn_shadows_wheel(m, "2.0.1+cu118", "11.8", "8.7.0.84", "/usr/local/cudnn-8.2.4/lib", "8.2.4"); },
     "shadowed_library", "Remove /usr/local/cudnn-8.2.4/lib from LD_LIBRARY_PATH"},
    {"F024",
     [](Machine& m) {
       ptx_newer_than_driver_jit(m, true, "450.80.02", "NVIDIA A100-SXM4-40GB", 0x20b0, "11.1.74",
                                 "/opt/tritonserver/backends/tensorflow1/libtensorflow_cc.so.1", {52, 60, 61, 70, 75}, 75, {7, 1});
     },
     "ptx_jit_too_old", "Upgrade the driver"},
    {"F025",
     [](Machine& m) {
       ptx_newer_than_driver_jit(m, true, "470.141.03", "NVIDIA GeForce RTX 3060", 0x2503, "11.7.99",
                                 "/opt/tritonserver/backends/fastertransformer/libtransformer-shared.so", {70, 75}, 80, {7, 7});
     },
     "ptx_jit_too_old", "Upgrade the driver"},
    {"F026", [](Machine& m) { healthy_with_torch(m, "1.4.0", "10.1"); }, "application_bug", "CUDA_LAUNCH_BLOCKING=1", false},
    {"F027", [](Machine& m) { healthy_with_torch(m, "1.10.0+cu113", "11.3"); }, "application_bug", "label ranges", false},
    {"F028",
     [](Machine& m) {
       binary_without_gpu_arch(m, false, "390.144", "GeForce GTX 765M", 0x11e2, "", "/opt/ICPCUDA/build/ICP", {50, 52}, {});
     },
     "no_kernel_image", "CUDA_ARCH_BIN=3.0"},
    {"F029",
     [](Machine& m) {
       binary_without_gpu_arch(m, false, "550.54.14", "NVIDIA GeForce RTX 3060", 0x2503, "12.4.131",
                               "/opt/TensorRT-YOLO/lib/libdeploy.so", {89}, {});
     },
     "no_kernel_image", "CMAKE_CUDA_ARCHITECTURES=86"},
    {"F030",
     [](Machine& m) {
       binary_without_gpu_arch(m, false, "470.57.02", "Tesla K80", 0x102d, "11.4.108", "/usr/local/lib/libdlib.so", {50},
                               {{50, {7, 4}}});
     },
     "no_kernel_image", "code=sm_37"},
    {"F031", wsl_with_linux_libcuda, "wsl_libcuda", "/usr/lib/wsl/lib"},
    {"F032", system_nvjitlink_shadows_wheel, "shadowed_library", "Remove /usr/local/cuda-12.1/lib64 from LD_LIBRARY_PATH"},
    {"F033", [](Machine& m) { docker_without_nvidia_hook(m, true); }, "container_toolkit_missing", "snap remove docker", true,
     Layer::driver_userspace},
    {"F034", [](Machine& m) { docker_without_nvidia_hook(m, false); }, "container_toolkit_missing",
     "nvidia-ctk runtime configure --runtime=docker", true, Layer::driver_userspace},
    {"F035", gpu_fell_off_the_bus, "gpu_fell_off_bus", "nvidia-smi -lgc"},
    {"F036", nvswitch_without_fabric_manager, "fabric_manager", "systemctl enable --now nvidia-fabricmanager"},
    {"F037", jetson_with_generic_torch, "cpu_only_framework", "JetPack"},
    {"F038", cpu_only_torch, "cpu_only_framework", "--index-url"},
    {"F039", stray_compat_libcuda, "libcuda_module_mismatch", "Remove /usr/local/cuda-11.8/compat from LD_LIBRARY_PATH"},
    {"F040",
     [](Machine& m) {
       binary_without_gpu_arch(m, true, "545.23.08", "NVIDIA GeForce GTX 970", 0x13c2, "",
                               "/tmp/ollama2178/cuda_v11/libext_server.so", {60, 61, 70, 75, 80, 86, 89, 90}, {});
     },
     "no_kernel_image", "code=sm_52"},
    {"F041",
     [](Machine& m) {
       ptx_newer_than_driver_jit(m, false, "460.32.03", "NVIDIA A100-SXM4-40GB", 0x20b0, "11.1.105",
                                 "/usr/local/lib/python3.7/dist-packages/jaxlib/xla_extension.so", {52, 60, 70}, 80, {7, 4});
     },
     "ptx_jit_too_old", "matches the driver's CUDA version"},
};

const FailureReport* failure(const std::string& id) {
  for (const auto& f : KnowledgeBase::get().failures)
    if (f.id == id) return &f;
  return nullptr;
}

std::map<std::string, std::string> expected_causes() {
  std::ifstream in(std::string(STRATA_DOCTOR_TEST_DATA) + "/failures_expected_causes.tsv");
  std::stringstream ss;
  ss << in.rdbuf();
  std::map<std::string, std::string> out;
  auto rows = parse_tsv(ss.str());
  for (std::size_t i = 1; i < rows.size(); ++i) out[rows[i][0]] = rows[i][1];
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

class FailureMachine : public testing::TestWithParam<Case> {};

// Test names and failure messages show the report id, not the bytes of the row.
[[maybe_unused]] void PrintTo(const Case& c, std::ostream* os) { *os << c.id; }

}  // namespace

TEST_P(FailureMachine, Reproduces) {
  const Case& c = GetParam();
  const FailureReport* f = failure(c.id);
  ASSERT_NE(f, nullptr) << c.id;
  // The table's cause is the one explain's test labelled from the report's root-cause column.
  EXPECT_EQ(c.cause_id, expected_causes()[c.id]);
  Machine m;
  c.build(m);
  const SystemView sys = m.tree.view(m.env);
  const Report r = run_doctor(sys, m.opt);
  const std::string text = render_text(r, false);
  if (std::getenv("STRATA_FAILURE_MACHINE_DUMP")) std::printf("%s\n", text.c_str());  // to read a machine's report
  std::vector<std::string> fixes;
  if (!c.observable) {
    // Nothing in the stack is wrong, and explain, judging the report on this machine, names the cause.
    EXPECT_EQ(r.first_problem(), nullptr) << text;
    LoaderModel loader(sys);
    Explanation e = explain(f->error_text + "\n" + f->environment, KnowledgeBase::get(), MachineEvidence{&r, &loader});
    ASSERT_NE(e.top(), nullptr) << text;
    EXPECT_EQ(e.top()->cause->id, c.cause_id) << render_explanation_text(e, false);
    EXPECT_EQ(e.top()->cause->layer, f->layer);
    fixes = e.top()->cause->fixes;
  } else {
    std::optional<Layer> expected = c.layer ? c.layer : layer_from_name(f->layer);
    ASSERT_TRUE(expected.has_value()) << c.id << ": failures.tsv layer " << f->layer << " needs a doctor layer in the table";
    ASSERT_NE(r.first_problem(), nullptr) << text;
    EXPECT_STREQ(layer_name(r.first_problem()->layer), layer_name(*expected)) << text;
    const Finding* top = r.first_problem_finding();
    ASSERT_NE(top, nullptr) << text;
    EXPECT_EQ(top->cause_id, c.cause_id) << text;
    fixes = top->fixes;
  }
  EXPECT_NE(joined(fixes).find(c.fix), std::string::npos) << c.id << ": fix lacks \"" << c.fix << "\":\n" << joined(fixes) << text;
}

INSTANTIATE_TEST_SUITE_P(FailureMachines, FailureMachine, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& p) { return std::string(p.param.id); });

TEST(FailureMachines, EveryReportHasExactlyOneMachine) {
  std::set<std::string> ids;
  for (const auto& c : kCases) EXPECT_TRUE(ids.insert(c.id).second) << c.id << " twice";
  ASSERT_EQ(KnowledgeBase::get().failures.size(), 41u);
  for (const auto& f : KnowledgeBase::get().failures) EXPECT_TRUE(ids.count(f.id)) << f.id << " has no machine";
  EXPECT_EQ(ids.size(), 41u);
}
