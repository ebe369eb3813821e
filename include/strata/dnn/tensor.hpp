// Tensor and filter descriptors, cuDNN's vocabulary in value types.
//
// A TensorDesc describes an activation tensor of rank 3..5: N, C and 1..3 spatial dimensions
// (W; H W; D H W), each with an explicit element stride, so NCHW, NHWC and padded or sliced
// views are all one type. Dimensions are always listed in the logical order N, C, spatial...
// whatever the memory order is.
//
// A FilterDesc describes convolution weights K x C/groups x spatial in KCRS (channels
// outermost after K) or KRSC (channels innermost) order, packed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/dtype.hpp"

namespace strata::dnn {

enum class Layout {
  nchw,  // channels before the spatial dimensions (NCW, NCHW, NCDHW), packed
  nhwc,  // channels innermost (NWC, NHWC, NDHWC), packed
};

class TensorDesc {
 public:
  TensorDesc() = default;
  // Explicit dims {N, C, spatial...} and strides in elements (same order). Throws
  // invalid_argument naming `dims`/`strides` for negative sizes, rank outside 3..5,
  // non-positive strides or overlapping strides.
  TensorDesc(DType dtype, std::vector<int64_t> dims, std::vector<int64_t> strides);
  // Packed tensor in the given layout.
  static TensorDesc packed(DType dtype, Layout layout, std::vector<int64_t> dims);
  static TensorDesc nchw(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
    return packed(dtype, Layout::nchw, {n, c, h, w});
  }
  static TensorDesc nhwc(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
    return packed(dtype, Layout::nhwc, {n, c, h, w});
  }

  DType dtype() const noexcept { return dtype_; }
  int rank() const noexcept { return int(dims_.size()); }
  int spatial_rank() const noexcept { return rank() - 2; }
  const std::vector<int64_t>& dims() const noexcept { return dims_; }
  const std::vector<int64_t>& strides() const noexcept { return strides_; }
  int64_t dim(int i) const { return dims_.at(std::size_t(i)); }
  int64_t stride(int i) const { return strides_.at(std::size_t(i)); }
  int64_t element_count() const noexcept;  // product of dims
  int64_t span() const noexcept;           // elements from the first to one past the last
  bool is_packed(Layout layout) const noexcept;
  std::string str() const;                 // "f32[2,3,5,5]:nchw" or with explicit strides

 private:
  DType dtype_ = DType::f32;
  std::vector<int64_t> dims_, strides_;
};

enum class FilterLayout {
  kcrs,  // K, C/groups, spatial... (PyTorch, cuDNN NCHW)
  krsc,  // K, spatial..., C/groups (cuDNN NHWC)
};

class FilterDesc {
 public:
  FilterDesc() = default;
  // dims {K, C/groups, spatial...} (logical order, whatever the layout).
  FilterDesc(DType dtype, FilterLayout layout, std::vector<int64_t> dims);
  static FilterDesc kcrs(DType dtype, int64_t k, int64_t c, int64_t r, int64_t s) {
    return FilterDesc(dtype, FilterLayout::kcrs, {k, c, r, s});
  }
  static FilterDesc krsc(DType dtype, int64_t k, int64_t c, int64_t r, int64_t s) {
    return FilterDesc(dtype, FilterLayout::krsc, {k, c, r, s});
  }

  DType dtype() const noexcept { return dtype_; }
  FilterLayout layout() const noexcept { return layout_; }
  int rank() const noexcept { return int(dims_.size()); }
  int spatial_rank() const noexcept { return rank() - 2; }
  const std::vector<int64_t>& dims() const noexcept { return dims_; }
  int64_t dim(int i) const { return dims_.at(std::size_t(i)); }
  // Element strides in logical order {K, C, spatial...}.
  std::vector<int64_t> strides() const;
  int64_t element_count() const noexcept;
  std::string str() const;

 private:
  DType dtype_ = DType::f32;
  FilterLayout layout_ = FilterLayout::kcrs;
  std::vector<int64_t> dims_;
};

}  // namespace strata::dnn
