// add_bias (cudnnAddTensor for the bias case): y = alpha * bias[c] + beta * y.
#include <string>

#include "strata/core/status.hpp"
#include "strata/dnn/convolution.hpp"
#include "tensor_access.hpp"

namespace strata::dnn {

void add_bias(const Handle& h, const void* alpha, const TensorDesc& bias_desc, const void* bias, const void* beta,
              const TensorDesc& y_desc, void* y) {
  (void)h;
  check_arg(alpha != nullptr, "alpha", "alpha is null (it points to a float)");
  check_arg(beta != nullptr, "beta", "beta is null (it points to a float)");
  std::vector<int64_t> want(std::size_t(y_desc.rank()), 1);
  want[1] = y_desc.dim(1);
  check_arg(bias_desc.dims() == want, "bias_desc", "bias must have dims {1, C, 1...} matching y's C");
  check_arg(bias_desc.dtype() == y_desc.dtype(), "bias_desc", "bias must have y's dtype");
  check_arg(bias != nullptr || bias_desc.element_count() == 0, "bias", "bias is null");
  check_arg(y != nullptr || y_desc.element_count() == 0, "y", "y is null");
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  const DType t = y_desc.dtype();
  const int64_t bstride = bias_desc.stride(1);
  detail::for_each_element(y_desc.dims(), y_desc.strides(), [&](int64_t off, int64_t c) {
    const float v = a * detail::load_f32(t, bias, c * bstride);
    detail::store_f32(t, y, off, b == 0.f ? v : v + b * detail::load_f32(t, y, off));
  });
}

}  // namespace strata::dnn
