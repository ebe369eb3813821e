// Construction-time checks of the descriptors: a descriptor that exists is self-consistent,
// so the operations only check how descriptors fit together.
#include <algorithm>
#include <numeric>
#include <sstream>

#include "strata/core/status.hpp"
#include "strata/dnn/convolution.hpp"
#include "strata/dnn/tensor.hpp"

namespace strata::dnn {

namespace {

std::string join(const std::vector<int64_t>& v) {
  std::ostringstream os;
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str();
}

// Packed strides for dims in logical order {N, C, spatial...} stored in `layout` order.
std::vector<int64_t> packed_strides(Layout layout, const std::vector<int64_t>& dims) {
  const std::size_t r = dims.size();
  std::vector<int64_t> order(r);  // memory order, outermost first, as logical indices
  if (layout == Layout::nchw) {
    std::iota(order.begin(), order.end(), 0);
  } else {
    order[0] = 0;
    for (std::size_t i = 2; i < r; ++i) order[i - 1] = int64_t(i);
    order[r - 1] = 1;
  }
  std::vector<int64_t> strides(r);
  int64_t s = 1;
  for (std::size_t i = r; i-- > 0;) {
    strides[std::size_t(order[i])] = s;
    s *= std::max<int64_t>(dims[std::size_t(order[i])], 1);
  }
  return strides;
}

}  // namespace

TensorDesc::TensorDesc(DType dtype, std::vector<int64_t> dims, std::vector<int64_t> strides)
    : dtype_(dtype), dims_(std::move(dims)), strides_(std::move(strides)) {
  check_arg(dtype_ == DType::f32 || dtype_ == DType::f16 || dtype_ == DType::bf16 || dtype_ == DType::i8, "dtype",
            "tensor dtype must be f32, f16, bf16 or i8");
  check_arg(dims_.size() >= 3 && dims_.size() <= 5, "dims", [&] {
    return "a tensor has N, C and 1 to 3 spatial dimensions (rank 3..5), got rank " + std::to_string(dims_.size());
  });
  check_arg(strides_.size() == dims_.size(), "strides", "need one stride per dimension");
  for (int64_t d : dims_)
    check_arg(d >= 0, "dims", [&] { return "dimensions must be >= 0, got [" + join(dims_) + "]"; });
  for (int64_t s : strides_)
    check_arg(s >= 1, "strides", [&] { return "strides must be >= 1, got [" + join(strides_) + "]"; });
  // No two elements may share an address: sorted by stride, each stride must step over the
  // whole extent of the dimensions inside it.
  std::vector<std::size_t> idx(dims_.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return strides_[a] < strides_[b]; });
  int64_t extent = 1;
  for (std::size_t i : idx) {
    if (dims_[i] <= 1) continue;
    check_arg(strides_[i] >= extent, "strides",
              [&] { return "strides [" + join(strides_) + "] make elements overlap for dims [" + join(dims_) + "]"; });
    extent = strides_[i] * dims_[i];
  }
}

TensorDesc TensorDesc::packed(DType dtype, Layout layout, std::vector<int64_t> dims) {
  check_arg(dims.size() >= 3 && dims.size() <= 5, "dims", [&] {
    return "a tensor has N, C and 1 to 3 spatial dimensions (rank 3..5), got rank " + std::to_string(dims.size());
  });
  for (int64_t d : dims) check_arg(d >= 0, "dims", [&] { return "dimensions must be >= 0, got [" + join(dims) + "]"; });
  auto strides = packed_strides(layout, dims);
  return TensorDesc(dtype, std::move(dims), std::move(strides));
}

int64_t TensorDesc::element_count() const noexcept {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t TensorDesc::span() const noexcept {
  if (element_count() == 0) return 0;
  int64_t last = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i) last += (dims_[i] - 1) * strides_[i];
  return last + 1;
}

bool TensorDesc::is_packed(Layout layout) const noexcept { return strides_ == packed_strides(layout, dims_); }

std::string TensorDesc::str() const {
  std::string s = std::string(dtype_name(dtype_)) + "[" + join(dims_) + "]";
  if (is_packed(Layout::nchw)) return s + ":nchw";
  if (is_packed(Layout::nhwc)) return s + ":nhwc";
  return s + ":strides[" + join(strides_) + "]";
}

FilterDesc::FilterDesc(DType dtype, FilterLayout layout, std::vector<int64_t> dims)
    : dtype_(dtype), layout_(layout), dims_(std::move(dims)) {
  check_arg(dtype_ == DType::f32 || dtype_ == DType::f16 || dtype_ == DType::bf16 || dtype_ == DType::i8, "dtype",
            "filter dtype must be f32, f16, bf16 or i8");
  check_arg(dims_.size() >= 3 && dims_.size() <= 5, "dims", [&] {
    return "a filter has K, C/groups and 1 to 3 spatial dimensions (rank 3..5), got rank " +
           std::to_string(dims_.size());
  });
  for (int64_t d : dims_)
    check_arg(d >= 1, "dims", [&] { return "filter dimensions must be >= 1, got [" + join(dims_) + "]"; });
}

std::vector<int64_t> FilterDesc::strides() const {
  return packed_strides(layout_ == FilterLayout::kcrs ? Layout::nchw : Layout::nhwc, dims_);
}

int64_t FilterDesc::element_count() const noexcept {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::string FilterDesc::str() const {
  return std::string(dtype_name(dtype_)) + "[" + join(dims_) + "]:" + (layout_ == FilterLayout::kcrs ? "kcrs" : "krsc");
}

ConvDesc::ConvDesc(std::vector<int64_t> pads, std::vector<int64_t> strides, std::vector<int64_t> dilations,
                   int64_t groups, ConvMode mode)
    : pads_(std::move(pads)), strides_(std::move(strides)), dilations_(std::move(dilations)), groups_(groups),
      mode_(mode) {
  check_arg(!pads_.empty() && pads_.size() <= 3, "pads", "a convolution has 1 to 3 spatial dimensions");
  check_arg(strides_.size() == pads_.size(), "strides", "need one stride per padded dimension");
  check_arg(dilations_.size() == pads_.size(), "dilations", "need one dilation per padded dimension");
  for (int64_t p : pads_) check_arg(p >= 0, "pads", [&] { return "padding must be >= 0, got [" + join(pads_) + "]"; });
  for (int64_t s : strides_)
    check_arg(s >= 1, "strides", [&] { return "strides must be >= 1, got [" + join(strides_) + "]"; });
  for (int64_t d : dilations_)
    check_arg(d >= 1, "dilations", [&] { return "dilations must be >= 1, got [" + join(dilations_) + "]"; });
  check_arg(groups_ >= 1, "groups", [&] { return "groups must be >= 1, got " + std::to_string(groups_); });
  check_arg(mode_ == ConvMode::cross_correlation || mode_ == ConvMode::convolution, "mode", "unknown ConvMode");
}

std::string ConvDesc::str() const {
  return "pad[" + join(pads_) + "] stride[" + join(strides_) + "] dil[" + join(dilations_) + "] g" +
         std::to_string(groups_) + (mode_ == ConvMode::convolution ? " conv" : "");
}

std::vector<int64_t> conv_output_dims(const TensorDesc& x, const FilterDesc& w, const ConvDesc& conv) {
  check_arg(x.spatial_rank() == conv.spatial_rank(), "conv", [&] {
    return "the convolution has " + std::to_string(conv.spatial_rank()) + " spatial dimensions, x has " +
           std::to_string(x.spatial_rank());
  });
  check_arg(w.spatial_rank() == conv.spatial_rank(), "w", [&] {
    return "the filter has " + std::to_string(w.spatial_rank()) + " spatial dimensions, the convolution " +
           std::to_string(conv.spatial_rank());
  });
  check_arg(x.dim(1) == w.dim(1) * conv.groups(), "w", [&] {
    return "x has " + std::to_string(x.dim(1)) + " channels but the filter expects " + std::to_string(w.dim(1)) +
           " per group x " + std::to_string(conv.groups()) + " groups";
  });
  check_arg(w.dim(0) % conv.groups() == 0, "w", [&] {
    return "the filter's K = " + std::to_string(w.dim(0)) +
           " is not divisible by groups = " + std::to_string(conv.groups());
  });
  std::vector<int64_t> out{x.dim(0), w.dim(0)};
  for (int i = 0; i < conv.spatial_rank(); ++i) {
    const auto si = std::size_t(i);
    const int64_t extent = conv.dilations()[si] * (w.dim(i + 2) - 1) + 1;
    const int64_t padded = x.dim(i + 2) + 2 * conv.pads()[si];
    check_arg(padded >= extent, "w", [&] {
      return "the dilated filter (" + std::to_string(extent) + ") is larger than the padded input (" +
             std::to_string(padded) + ") in spatial dimension " + std::to_string(i);
    });
    out.push_back((padded - extent) / conv.strides()[si] + 1);
  }
  return out;
}

}  // namespace strata::dnn
