// In-process A/B of strata's large buffers on 4 KiB pages against 2 MiB (transparent huge)
// pages: the same library, the same code, only the memory behind its buffers differs
// (STRATA_HUGE_PAGES is read at each large allocation, core/memory.cpp).
//
//   conv  — ResNet-50 res4/res5 layers, NHWC, batch 1, 1 thread: each layer's filter is
//           prepared twice (once per setting); calls alternate A B B A.
//   gemm  — sgemm NN on 1 thread: two persistent worker threads whose thread-local packing
//           buffers were first grown under each setting take turns, A B B A.
// Prints each side's median and the ratio 4K / 2M (> 1: huge pages faster).
// Usage: huge_pages_ab conv | huge_pages_ab gemm MxNxK...
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "strata/blas/handle.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/memory.hpp"
#include "strata/dnn/convolution.hpp"

using namespace strata;

namespace {

void set_huge(bool on) { setenv("STRATA_HUGE_PAGES", on ? "1" : "0", 1); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Medians of time_of(0) and time_of(1) over `rounds` A B B A rounds.
std::pair<double, double> interleaved(int rounds, const std::function<double(int)>& time_of) {
  std::vector<double> t[2];
  for (int r = 0; r < rounds; ++r) {
    t[0].push_back(time_of(0));
    t[1].push_back(time_of(1));
    t[1].push_back(time_of(1));
    t[0].push_back(time_of(0));
  }
  for (auto& v : t) std::sort(v.begin(), v.end());
  return {t[0][t[0].size() / 2], t[1][t[1].size() / 2]};
}

struct Layer {
  const char* name;
  int c, hw, k, r, stride, pad;
};

void conv() {
  const Layer layers[] = {{"res4_1x1_1024_256", 1024, 14, 256, 1, 1, 0}, {"res4_3x3", 256, 14, 256, 3, 1, 1},
                          {"res5_1x1_1024_512", 1024, 14, 512, 1, 1, 0}, {"res5_3x3_s2", 512, 14, 512, 3, 2, 1},
                          {"res5_1x1_512_2048", 512, 7, 2048, 1, 1, 0},  {"res5_proj_s2", 1024, 14, 2048, 1, 2, 0},
                          {"res5_1x1_2048_512", 2048, 7, 512, 1, 1, 0},  {"res5_3x3", 512, 7, 512, 3, 1, 1}};
  std::printf("%-20s %-18s %10s %10s %7s\n", "layer", "algo", "4K ms", "2M ms", "4K/2M");
  for (const Layer& l : layers) {
    dnn::Handle h;
    h.set_num_threads(1);
    const auto x_desc = dnn::TensorDesc::nhwc(DType::f32, 1, l.c, l.hw, l.hw);
    const auto w_desc = dnn::FilterDesc::krsc(DType::f32, l.k, l.c, l.r, l.r);
    const auto conv = dnn::ConvDesc::conv2d(l.pad, l.pad, l.stride, l.stride);
    const auto y_desc = dnn::TensorDesc::packed(DType::f32, dnn::Layout::nhwc, dnn::conv_output_dims(x_desc, w_desc, conv));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> x(std::size_t(x_desc.element_count())), w(std::size_t(w_desc.element_count())),
        y(std::size_t(y_desc.element_count()));
    for (auto& v : x) v = u(rng);
    for (auto& v : w) v = u(rng);
    const dnn::ConvAlgo algo = dnn::find_prepared_forward_algorithms(h, x_desc, w_desc, conv, y_desc).front().algo;
    dnn::PreparedFilter pf[2];
    for (int i = 0; i < 2; ++i) {
      set_huge(i == 1);
      pf[i] = dnn::prepare_forward_filter(h, x_desc, w_desc, w.data(), conv, y_desc, algo);
    }
    unsetenv("STRATA_HUGE_PAGES");
    const std::size_t ws_bytes = dnn::forward_workspace_size(h, x_desc, pf[0], conv, y_desc);
    const auto ws = make_aligned<std::byte>(ws_bytes + 1);  // a caller's buffer: 4 KiB pages
    const float one = 1.f, zero = 0.f;
    auto time_of = [&](int i) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < 4; ++r)
        dnn::convolution_forward(h, &one, x_desc, x.data(), pf[i], conv, ws.get(), ws_bytes, &zero, y_desc, y.data());
      return seconds_since(t0) / 4;
    };
    time_of(0), time_of(1);
    const auto [a, b] = interleaved(15, time_of);
    std::printf("%-20s %-18s %10.3f %10.3f %7.3f\n", l.name, std::string(dnn::conv_algo_name(algo)).c_str(), a * 1e3,
                b * 1e3, a / b);
  }
}

// A thread that runs `work` on request, so its thread-local buffers persist between batches.
// Both workers are pinned to CPU 0: on a shared host the two cores run at different speeds.
class Worker {
 public:
  explicit Worker(std::function<void()> work) : work_(std::move(work)), thread_([this] { loop(); }) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    pthread_setaffinity_np(thread_.native_handle(), sizeof one, &one);
  }
  ~Worker() {
    stop_ = true;
    thread_.join();
  }
  double run() {  // seconds
    done_ = false;
    go_ = true;
    while (!done_) std::this_thread::sleep_for(std::chrono::microseconds(100));
    return seconds_;
  }

 private:
  void loop() {
    while (!stop_) {
      if (!go_) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      work_();
      seconds_ = seconds_since(t0);
      go_ = false;
      done_ = true;
    }
  }
  std::function<void()> work_;
  std::atomic<bool> go_{false}, done_{false}, stop_{false};
  double seconds_ = 0;
  std::thread thread_;
};

void gemm(int argc, char** argv) {
  std::printf("%-18s %10s %10s %7s\n", "sgemm NN", "4K GF/s", "2M GF/s", "4K/2M");
  for (int i = 2; i < argc; ++i) {
    int m = 0, n = 0, k = 0;
    if (std::sscanf(argv[i], "%dx%dx%d", &m, &n, &k) != 3) continue;
    std::vector<float> A(std::size_t(m) * k, 0.5f), B(std::size_t(k) * n, 0.25f), C(std::size_t(m) * n);
    blas::Handle h;
    h.set_num_threads(1);
    const double flops = 2.0 * m * n * k;
    const int reps = std::max(1, int(2e9 / flops));
    auto batch = [&] {
      for (int r = 0; r < reps; ++r)
        blas::gemm<float>(h, blas::Op::N, blas::Op::N, m, n, k, 1.f, A.data(), m, B.data(), k, 0.f, C.data(), m);
    };
    std::vector<std::unique_ptr<Worker>> workers;
    for (int side = 0; side < 2; ++side) {
      set_huge(side == 1);
      workers.push_back(std::make_unique<Worker>(batch));
      workers.back()->run();  // grows this thread's packing buffers under the setting
    }
    unsetenv("STRATA_HUGE_PAGES");
    const auto [a, b] = interleaved(12, [&](int side) { return workers[std::size_t(side)]->run() / reps; });
    std::printf("%-18s %10.1f %10.1f %7.3f\n", argv[i], flops / a / 1e9, flops / b / 1e9, a / b);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "conv") == 0) conv();
  else if (argc >= 3 && std::strcmp(argv[1], "gemm") == 0) gemm(argc, argv);
  else {
    std::fprintf(stderr, "usage: %s conv | %s gemm MxNxK...\n", argv[0], argv[0]);
    return 2;
  }
}
