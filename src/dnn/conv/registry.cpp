// The list of convolution algorithms, in ConvAlgo order (one line per algorithm).
#include "algorithm.hpp"

namespace strata::dnn::detail {

const std::vector<const ConvAlgorithm*>& conv_algorithms() {
  static const std::vector<const ConvAlgorithm*> all{
      &direct_algorithm(),        &im2col_gemm_algorithm(),   &implicit_gemm_algorithm(),
      &winograd_2x2_algorithm(),  &winograd_4x4_algorithm(),  &fft_tiled_algorithm(),
  };
  return all;
}

const ConvAlgorithm& conv_algorithm(ConvAlgo a) { return *conv_algorithms().at(std::size_t(a)); }

}  // namespace strata::dnn::detail
