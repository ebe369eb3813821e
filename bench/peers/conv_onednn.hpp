// oneDNN's forward convolution (f32, or bf16 data with f32 accumulation) as a benchmark peer,
// loaded with dlopen (libdnnl.so.2/.3) so strata never links it. oneDNN chooses its own memory formats (format_tag_any, as
// benchdnn does); inputs are reordered once when a problem is prepared, outside the timing.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace strata::bench {

struct ConvShape {
  int64_t n, c, k, h, w, r, s, stride_h, stride_w, pad_h, pad_w;
};

class OnednnConv {
 public:
  // nullptr with `why_not` set when the library or a symbol is missing.
  static std::unique_ptr<OnednnConv> load(std::string& why_not);
  ~OnednnConv();

  std::string library() const { return library_; }
  void set_threads(int n);
  // Builds the primitive and its memories for data of type `bf16` (true) or f32; x is NCHW, w
  // KCRS, given in f32 (converted by oneDNN's reorder, outside the timing). False with `err` on
  // failure.
  bool prepare(const ConvShape& shape, const float* x_nchw, const float* w_kcrs, bool bf16, std::string& err);
  void run();                        // one forward execution (waits for completion)
  void output_nchw(float* y);        // the last result, reordered to NCHW f32
  std::string implementation() const;  // oneDNN's name for the chosen kernel

  struct State;

 private:
  OnednnConv() = default;
  std::string library_;
  std::unique_ptr<State> st_;
};

}  // namespace strata::bench
