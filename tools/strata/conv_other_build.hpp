// Another build of libstrata_dnn as a `strata bench conv` peer (--peers strata:PATH): the
// library file is dlopen'ed beside the one this program links (RTLD_LOCAL | RTLD_DEEPBIND, so
// its calls stay in its own code) and timed interleaved with it, call for call — the in-process
// A/B of a convolution change (bench/compare_conv_builds.sh). Both builds share this program's
// strata_core, strata_rt and strata_blas (thread pool, BLAS entry points); the convolution code
// itself, tile engine included, is the other build's own. PATH must be a file of its own (a
// copy): the loader would return the linked library for its own path.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "strata/core/memory.hpp"
#include "strata/dnn/convolution.hpp"

namespace strata::cli {

class OtherBuildConv {
 public:
  // nullptr with `why_not` set when the file or one of the entry points is missing.
  static std::unique_ptr<OtherBuildConv> load(const std::string& path, std::string& why_not);

  // The problem with this program's descriptors and handle (the layouts both builds share);
  // prepared: the filter prepared once by the other build, as the timed build does. The data
  // are of the descriptors' type. x (x_desc's span) is copied: each build reads its own input,
  // as oneDNN does (its reordered copy), so that neither finds x cached by the other.
  void prepare(const dnn::Handle& h, const dnn::TensorDesc& x_desc, const void* x, const dnn::FilterDesc& w_desc,
               const void* w, const dnn::ConvDesc& conv, const dnn::TensorDesc& y_desc, void* y, dnn::ConvAlgo algo,
               bool prepared);
  void run();  // one forward call into y
  std::string name() const { return name_; }

  struct Entries;

 private:
  OtherBuildConv() = default;
  std::string name_;
  std::shared_ptr<const Entries> fn_;
  // The prepared problem (pointers into the caller's buffers, which outlive each layer).
  const dnn::Handle* h_ = nullptr;
  const dnn::TensorDesc* x_desc_ = nullptr;
  const dnn::FilterDesc* w_desc_ = nullptr;
  const dnn::ConvDesc* conv_ = nullptr;
  const dnn::TensorDesc* y_desc_ = nullptr;
  AlignedArray<std::byte> x_;  // this build's own copy
  const void* w_ = nullptr;
  void* y_ = nullptr;
  dnn::ConvAlgo algo_{};
  bool prepared_ = false;
  dnn::PreparedFilter pf_;
  AlignedArray<std::byte> ws_;
  std::size_t ws_bytes_ = 0;
};

}  // namespace strata::cli
