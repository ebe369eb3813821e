// `strata bench conv`: forward convolution (f32, or bf16 data with f32 accumulation) over a
// problem file (ResNet-50 by default), strata (algorithm chosen by find, the cudnn.benchmark
// role, or forced) side by side with oneDNN in the same process, interleaved, each verified
// against the other before timing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_conv.hpp"
#include "conv_other_build.hpp"
#include "peers/conv_onednn.hpp"
#include "peers/timing.hpp"
#include "strata/core/memory.hpp"
#include "strata/core/minifloat.hpp"
#include "strata/core/peak.hpp"
#include "strata/core/status.hpp"
#include "strata/core/timer.hpp"
#include "strata/dnn/convolution.hpp"

namespace strata::cli {

namespace {

struct ConvBenchOptions {
  std::string file = "bench/problems/conv_resnet50.txt";
  std::vector<int> batches{1, 8};
  std::vector<int> threads{1, 2};
  std::string peer = "onednn";
  std::string select = "find";  // find | heuristic | <algorithm name>
  int reps = 5;
  std::string csv;
  std::string layout = "nchw";  // strata's tensors: nchw (x, y NCHW; w KCRS) or nhwc (NHWC; KRSC)
  std::string filter = "prepared";  // prepared (once, untimed, like oneDNN's weight reorder) or per-call
  std::string dtype = "f32";        // f32 or bf16 (x, w, y; f32 accumulation in both libraries)
};

struct Layer {
  std::string name;
  bench::ConvShape s{};
};

// "ic64ih56oc64kh3sh1ph1n"name"" with iw = ih, kw = kh, sw = sh, pw = ph unless given.
Layer parse_layer(const std::string& line) {
  Layer l;
  int64_t iw = -1, kw = -1, sw = -1, pw = -1;
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t j = i;
    while (j < line.size() && std::isalpha(static_cast<unsigned char>(line[j]))) ++j;
    const std::string key = line.substr(i, j - i);
    if (key == "n" && j < line.size() && line[j] == '"') {
      const std::size_t end = line.find('"', j + 1);
      l.name = line.substr(j + 1, end - j - 1);
      i = end == std::string::npos ? line.size() : end + 1;
      continue;
    }
    std::size_t k = j;
    while (k < line.size() && std::isdigit(static_cast<unsigned char>(line[k]))) ++k;
    if (key.empty() || k == j) throw_error(Status::invalid_argument, "file", "cannot parse problem '" + line + "'");
    const int64_t v = std::stoll(line.substr(j, k - j));
    if (key == "ic") l.s.c = v;
    else if (key == "ih") l.s.h = v;
    else if (key == "iw") iw = v;
    else if (key == "oc") l.s.k = v;
    else if (key == "kh") l.s.r = v;
    else if (key == "kw") kw = v;
    else if (key == "sh") l.s.stride_h = v;
    else if (key == "sw") sw = v;
    else if (key == "ph") l.s.pad_h = v;
    else if (key == "pw") pw = v;
    else throw_error(Status::invalid_argument, "file", "unknown key '" + key + "' in '" + line + "'");
    i = k;
  }
  if (l.s.stride_h == 0) l.s.stride_h = 1;
  l.s.w = iw < 0 ? l.s.h : iw, l.s.s = kw < 0 ? l.s.r : kw;
  l.s.stride_w = sw < 0 ? l.s.stride_h : sw, l.s.pad_w = pw < 0 ? l.s.pad_h : pw;
  if (l.name.empty()) l.name = line;
  return l;
}

std::vector<Layer> read_layers(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_error(Status::invalid_argument, "file", "cannot open '" + path + "'");
  std::vector<Layer> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    out.push_back(parse_layer(line));
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int run_conv_bench(const ConvBenchOptions& o) {
  const auto layers = read_layers(o.file);
  std::string why;
  std::unique_ptr<bench::OnednnConv> dnnl;
  std::unique_ptr<OtherBuildConv> other;  // --peers strata:PATH (another build of libstrata_dnn)
  if (o.peer == "onednn") {
    dnnl = bench::OnednnConv::load(why);
    if (!dnnl) std::printf("# onednn: absent (%s)\n", why.c_str());
  } else if (o.peer.rfind("strata:", 0) == 0) {
    other = OtherBuildConv::load(o.peer.substr(7), why);
    if (!other) throw_error(Status::invalid_argument, "--peers", why);
  }
  const char* peer_label = other ? "other" : "oneDNN";
  const bool bf16_data = o.dtype == "bf16";
  const DType dt = bf16_data ? DType::bf16 : DType::f32;
  const PeakEstimate peak = measure_peak();
  const double peak_core = bf16_data ? peak.peak_gflops_bf16 : peak.peak_gflops_f32;
  const bool nhwc = o.layout == "nhwc";
  const char* layout = nhwc ? "NHWC (filter KRSC)" : "NCHW (filter KCRS)";
  const bool prepared = o.filter == "prepared";
  if (other) {
    std::printf("# strata bench conv: %s forward, %s, this build against another (%s), the same algorithm\n",
                o.dtype.c_str(), layout, other->name().c_str());
    std::printf("# peak %s per core %.1f GFLOPS; ratio = other time / strata time (> 1: strata faster)\n",
                o.dtype.c_str(), peak_core);
    std::printf("# filters: %s\n", prepared ? "prepared once before timing, by each build"
                                                    : "transformed/packed inside every call, by each build");
  } else {
    std::printf("# strata bench conv: %s forward, %s for strata; oneDNN chooses its own format (%s)\n",
                o.dtype.c_str(), layout, dnnl ? dnnl->library().c_str() : "none");
    std::printf("# peak %s per core %.1f GFLOPS; ratio = oneDNN time / strata time (> 1: strata faster)\n",
                o.dtype.c_str(), peak_core);
    std::printf("# filters: %s\n", prepared
                                       ? "prepared once before timing for strata (prepare_forward_filter), reordered "
                                         "once before timing for oneDNN"
                                       : "transformed/packed inside every strata call; oneDNN's reorder still untimed");
  }
  std::FILE* csv = o.csv.empty() ? nullptr : std::fopen(o.csv.c_str(), "w");
  if (csv) std::fprintf(csv, "layer,batch,threads,strata_algo,strata_ms,strata_gflops,onednn_ms,onednn_impl,ratio\n");
  int failures = 0;
  for (int threads : o.threads)
    for (int batch : o.batches) {
      std::printf("\n%-20s %5s %3s %-17s %9s %7s %6s %9s %-22s %6s\n", "layer", "batch", "thr", "strata algo",
                  "strata ms", "GFLOPS", "%peak", (std::string(peer_label) + " ms").c_str(),
                  (std::string(peer_label) + " impl").c_str(), "ratio");
      double sum_s = 0, sum_d = 0, sum_s3 = 0, sum_d3 = 0;
      for (const Layer& l : layers) {
        bench::ConvShape s = l.s;
        s.n = batch;
        dnn::Handle h;
        h.set_num_threads(threads);
        // The data in NCHW / KCRS (what oneDNN is given); strata's copies in its layout.
        const auto x_desc = nhwc ? dnn::TensorDesc::nhwc(dt, s.n, s.c, s.h, s.w) : dnn::TensorDesc::nchw(dt, s.n, s.c, s.h, s.w);
        const auto w_desc = nhwc ? dnn::FilterDesc::krsc(dt, s.k, s.c, s.r, s.s) : dnn::FilterDesc::kcrs(dt, s.k, s.c, s.r, s.s);
        const auto conv = dnn::ConvDesc::conv2d(s.pad_h, s.pad_w, s.stride_h, s.stride_w);
        const auto yd = dnn::conv_output_dims(x_desc, w_desc, conv);
        const auto y_desc = dnn::TensorDesc::packed(dt, nhwc ? dnn::Layout::nhwc : dnn::Layout::nchw, yd);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        // strata's tensors on 64-byte boundaries, as frameworks allocate them (and as oneDNN's own
        // buffers are): a std::vector's storage starts 16 bytes past a line (AlignedAllocator).
        std::vector<float> x0(std::size_t(x_desc.element_count())), w0(std::size_t(w_desc.element_count()));
        AlignedVector<float> y(std::size_t(y_desc.element_count())), yref(y.size());
        // bf16: values that bf16 holds exactly, so both libraries multiply the same numbers.
        auto draw = [&] { return bf16_data ? bf16(u(rng)).to_float() : u(rng); };
        for (auto& v : x0) v = draw();
        for (auto& v : w0) v = draw();
        // Channels-last copies: element (a, ch, i, j) of an NCHW-ordered array of dims {a, ch, h, w}.
        auto to_channels_last = [](const auto& src, int64_t a, int64_t ch, int64_t hh, int64_t ww) {
          AlignedVector<float> dst(src.size());
          for (int64_t n0 = 0; n0 < a; ++n0)
            for (int64_t c0 = 0; c0 < ch; ++c0)
              for (int64_t i = 0; i < hh * ww; ++i) dst[std::size_t((n0 * hh * ww + i) * ch + c0)] = src[std::size_t((n0 * ch + c0) * hh * ww + i)];
          return dst;
        };
        auto aligned = [](const std::vector<float>& v) { return AlignedVector<float>(v.begin(), v.end()); };
        const AlignedVector<float> x = nhwc ? to_channels_last(x0, s.n, s.c, s.h, s.w) : aligned(x0);
        const AlignedVector<float> w = nhwc ? to_channels_last(w0, s.k, s.c, s.r, s.s) : aligned(w0);
        // strata's tensors in the benchmark's type (bf16 copies, or the f32 vectors themselves).
        auto narrow = [](const AlignedVector<float>& v) { return AlignedVector<bf16>(v.begin(), v.end()); };
        const AlignedVector<bf16> xb = bf16_data ? narrow(x) : AlignedVector<bf16>{}, wb = bf16_data ? narrow(w) : xb;
        AlignedVector<bf16> yb(bf16_data ? y.size() : 0);
        const void* xp = bf16_data ? static_cast<const void*>(xb.data()) : x.data();
        const void* wp = bf16_data ? static_cast<const void*>(wb.data()) : w.data();
        void* yp = bf16_data ? static_cast<void*>(yb.data()) : y.data();

        dnn::ConvAlgo algo;
        if (o.select == "find")
          algo = prepared ? dnn::find_prepared_forward_algorithms(h, x_desc, w_desc, conv, y_desc).front().algo
                          : dnn::find_forward_algorithms(h, x_desc, w_desc, conv, y_desc).front().algo;
        else if (o.select == "heuristic")
          algo = prepared ? dnn::get_prepared_forward_algorithms(h, x_desc, w_desc, conv, y_desc).front().algo
                          : dnn::get_forward_algorithms(h, x_desc, w_desc, conv, y_desc).front().algo;
        else algo = dnn::parse_conv_algo(o.select);
        dnn::PreparedFilter pf;
        if (prepared) pf = dnn::prepare_forward_filter(h, x_desc, w_desc, wp, conv, y_desc, algo);
        const std::size_t ws_bytes = prepared ? dnn::forward_workspace_size(h, x_desc, pf, conv, y_desc)
                                              : dnn::forward_workspace_size(h, x_desc, w_desc, conv, y_desc, algo);
        auto ws = make_aligned<std::byte>(ws_bytes + 1);
        const float one = 1.f, zero = 0.f;
        auto run_strata = [&] {
          if (prepared)
            dnn::convolution_forward(h, &one, x_desc, xp, pf, conv, ws.get(), ws_bytes, &zero, y_desc, yp);
          else
            dnn::convolution_forward(h, &one, x_desc, xp, w_desc, wp, conv, algo, ws.get(), ws_bytes, &zero, y_desc, yp);
        };
        run_strata();
        auto widen = [](const AlignedVector<bf16>& from, AlignedVector<float>& to) {
          std::transform(from.begin(), from.end(), to.begin(), [](bf16 v) { return v.to_float(); });
        };
        if (bf16_data) widen(yb, y);  // y in f32 for the checks
        // strata's y against a peer's result: within 1e-3 of the largest |y| (counted a failure);
        // bf16 outputs within 1e-2 (two roundings of nearly equal sums differ by a bf16 step, 2^-8
        // of |y|, and the sums themselves by the f32 accumulation order).
        const double tolerance = bf16_data ? 1e-2 : 1e-3;
        auto check_against = [&](const AlignedVector<float>& ref, const char* what) {
          double max_diff = 0, max_y = 0;
          for (std::size_t i = 0; i < y.size(); ++i)
            max_diff = std::max(max_diff, double(std::fabs(y[i] - ref[i]))), max_y = std::max(max_y, double(std::fabs(ref[i])));
          if (!(max_diff <= tolerance * std::max(1.0, max_y))) {
            std::printf("# %s: MISMATCH %s, max |diff| %.3g (max |y| %.3g)\n", l.name.c_str(), what, max_diff, max_y);
            ++failures;
          }
        };
        bool have_dnnl = false;
        if (dnnl) {
          dnnl->set_threads(threads);
          std::string err;
          have_dnnl = dnnl->prepare(s, x0.data(), w0.data(), bf16_data, err);
          if (have_dnnl) {
            dnnl->run();
            dnnl->output_nchw(yref.data());
            if (nhwc) yref = to_channels_last(yref, yd[0], yd[1], yd[2], yd[3]);
            check_against(yref, "strata vs oneDNN");
          } else {
            std::printf("# %s: oneDNN: %s\n", l.name.c_str(), err.c_str());
          }
        }
        AlignedVector<float> y_other;
        AlignedVector<bf16> yb_other(other ? yb.size() : 0);  // the other build's bf16 y (written by every run)
        if (other) {
          y_other.resize(y.size());
          void* yo = bf16_data ? static_cast<void*>(yb_other.data()) : y_other.data();
          other->prepare(h, x_desc, xp, w_desc, wp, conv, y_desc, yo, algo, prepared);
          other->run();
          if (bf16_data) widen(yb_other, y_other);
          check_against(y_other, "this build vs the other");
        }
        const bool have_peer = have_dnnl || other;
        auto run_peer = [&] {
          if (other) other->run();
          else dnnl->run();
        };
        std::vector<double> ts, td;
        if (threads == 1) {
          for (int r = 0; r < o.reps; ++r) {  // interleaved so both see the same machine state
            Timer t;
            run_strata();
            ts.push_back(t.seconds() * 1e3);
            if (have_peer) {
              t.reset();
              run_peer();
              td.push_back(t.seconds() * 1e3);
            }
          }
        } else {
          // With threads, rounds of one block per library (bench::let_peer_threads_park, warm_up
          // and kThreadedRounds say why).
          const int per_round = (o.reps + bench::kThreadedRounds - 1) / bench::kThreadedRounds;
          auto block = [&](const std::function<void()>& run, std::vector<double>& times) {
            bench::let_peer_threads_park();
            bench::warm_up(run);
            for (int r = 0; r < per_round; ++r) {
              Timer t;
              run();
              times.push_back(t.seconds() * 1e3);
            }
          };
          for (int round = 0; round < bench::kThreadedRounds; ++round) {
            block(run_strata, ts);
            if (have_peer) block(run_peer, td);
          }
        }
        const double ms_s = median(ts), ms_d = have_peer ? median(td) : 0;
        const double flops = 2.0 * double(s.n * s.k * s.c * s.r * s.s) * double(yd[2] * yd[3]);
        const double gflops = flops / ms_s * 1e-6;
        const double ratio = have_peer ? ms_d / ms_s : 0;
        std::string impl = other ? "same algorithm" : have_dnnl ? dnnl->implementation() : "-";
        std::printf("%-20s %5d %3d %-17s %9.3f %7.1f %5.0f%% %9.3f %-22s %6.2f\n", l.name.c_str(), batch, threads,
                    std::string(dnn::conv_algo_name(algo)).c_str(), ms_s, gflops, 100 * gflops / (peak_core * threads),
                    ms_d, impl.c_str(), ratio);
        if (csv)
          std::fprintf(csv, "%s,%d,%d,%s,%.4f,%.2f,%.4f,%s,%.3f\n", l.name.c_str(), batch, threads,
                       std::string(dnn::conv_algo_name(algo)).c_str(), ms_s, gflops, ms_d, impl.c_str(), ratio);
        sum_s += ms_s, sum_d += ms_d;
        if (s.r == 3 && s.stride_h == 1) sum_s3 += ms_s, sum_d3 += ms_d;
      }
      if (sum_d > 0)
        std::printf("%-20s %5d %3d %-17s %9.3f %7s %6s %9.3f %-22s %6.2f\n", "SUM", batch, threads, "", sum_s, "", "",
                    sum_d, "", sum_d / sum_s);
      if (sum_d3 > 0)
        std::printf("%-20s %5d %3d %-17s %9.3f %7s %6s %9.3f %-22s %6.2f\n", "SUM 3x3 stride 1", batch, threads, "",
                    sum_s3, "", "", sum_d3, "", sum_d3 / sum_s3);
    }
  if (csv) std::fclose(csv);
  return failures ? 1 : 0;
}

}  // namespace

void add_bench_conv_command(CLI::App& bench, int& exit_code) {
  auto opt = std::make_shared<ConvBenchOptions>();
  auto* conv = bench.add_subcommand("conv", "Convolution (f32 or bf16 forward) vs oneDNN over a layer file");
  conv->add_option("-f,--file", opt->file, "Layer file (bench/problems/conv_resnet50.txt)");
  conv->add_option("-b,--batch", opt->batches, "Batch sizes, e.g. 1,8")->delimiter(',');
  conv->add_option("-t,--threads", opt->threads, "Thread counts, e.g. 1,2")->delimiter(',');
  conv->add_option("--peers", opt->peer,
                   "onednn, none, or strata:PATH (a copy of another build's libstrata_dnn.so, timed in-process)");
  conv->add_option("--algo", opt->select, "find (measure, default), heuristic, or an algorithm name");
  conv->add_option("-r,--reps", opt->reps, "Timed repetitions (median reported)")->check(CLI::PositiveNumber);
  conv->add_option("--csv", opt->csv, "Also write CSV here");
  conv->add_option("--layout", opt->layout, "strata's tensor layout: nchw (default) or nhwc")
      ->check(CLI::IsMember({"nchw", "nhwc"}));
  conv->add_option("--filter", opt->filter,
                   "prepared (default: once, untimed, as oneDNN reorders its weights) or per-call")
      ->check(CLI::IsMember({"prepared", "per-call"}));
  conv->add_option("--dtype", opt->dtype, "Data type of x, w and y: f32 (default) or bf16 (f32 accumulation)")
      ->check(CLI::IsMember({"f32", "bf16"}));
  conv->callback([opt, &exit_code] { exit_code = run_conv_bench(*opt); });
}

}  // namespace strata::cli
