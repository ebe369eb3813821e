// blas::lt — the cuBLASLt role: a matmul described once (types, transposes, storage order per
// matrix, batch, a composed epilogue), a heuristic query returning ranked algorithms with
// their workspace and a reason, and execution.
//
//   D = epilogue(alpha * op(A) op(B) + beta * C)
//
// A, B, C, D each have their own layout (rows x cols as stored, leading dimension, row- or
// column-major, batch count and stride). C and D may alias (in place) or differ.
// Compute types: f32 (C in f32; A and B f32, or both bf16 or both f16: converted exactly while
// packed, or bf16 on gemm_ex's native kernel, AMX or AVX512_BF16, where it has one) and f64
// (all f64). D may be f32/f64 or a narrow type (i8, u8,
// f8e4m3, f8e5m2, bf16, f16), which adds a saturating, round-to-nearest-even quantising store
// and needs workspace for the f32 tile results. STRATA_VERBOSE=1 prints the algorithm and why.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "strata/blas/handle.hpp"
#include "strata/blas/types.hpp"
#include "strata/core/dtype.hpp"
#include "strata/tile/activation.hpp"

namespace strata::blas::lt {

using tile::Activation;

struct MatrixLayout {
  DType type = DType::f32;
  index_t rows = 0, cols = 0;  // of the matrix as stored (before op)
  index_t ld = 0;              // leading dimension (column stride if col-major, row stride if row-major)
  Order order = Order::col_major;
  index_t batch_count = 1;
  index_t batch_stride = 0;    // elements between consecutive matrices of the batch
};

// An epilogue composed from pieces, applied in the order added. Vectors/matrices are in the
// compute type (f32 or f64); residual and aux matrices use D's order with their own ld.
class Epilogue {
 public:
  enum class Along { rows, cols };  // a vector indexed by D's row (e.g. output channel) or column

  Epilogue& bias(const void* vec, Along along = Along::rows);
  Epilogue& activation(Activation act, double alpha = 0, double beta = 0);  // leaky slope / clamp bounds
  Epilogue& residual(const void* matrix, index_t ld, double scale = 1);
  Epilogue& aux(void* matrix, index_t ld);  // stores the value at this point (e.g. pre-activation)
  Epilogue& scale(double factor);
  Epilogue& scale(const void* vec, Along along);

  struct Piece {
    enum class Kind { bias, activation, residual, aux, scale_tensor, scale_vec } kind;
    const void* in = nullptr;
    void* out = nullptr;
    index_t ld = 0;
    Along along = Along::rows;
    Activation act = Activation::none;
    double a = 0, b = 0;
  };
  const std::vector<Piece>& pieces() const { return pieces_; }
  bool empty() const { return pieces_.empty(); }
  std::string describe() const;  // "bias(rows)+gelu_erf"

 private:
  std::vector<Piece> pieces_;
};

struct MatmulDesc {
  DType compute = DType::f32;
  Op transa = Op::N, transb = Op::N;
  Epilogue epilogue;
};

struct Preference {
  std::size_t max_workspace_bytes = std::numeric_limits<std::size_t>::max();
};

enum class AlgoId : int {
  tiled_pack_both = 0,
  tiled_stream_b = 1,
  tiled_stream_a = 2,
  batch_parallel = 3,
  one_block = 4,
  tiled_auto = 5,  // the engine's own per-shape operand policy, as blas::gemm uses
  dot_products = 6,  // few rows and columns over a long depth: dot products along the depth
};

struct Algorithm {
  AlgoId id;
  std::string name;
  std::size_t workspace_bytes = 0;
  std::string reason;  // why it is ranked where it is
};

// Ranked candidates (best first) that fit the preference; throws for an invalid description.
std::vector<Algorithm> heuristics(const Handle& h, const MatmulDesc& desc, const MatrixLayout& a,
                                  const MatrixLayout& b, const MatrixLayout& c, const MatrixLayout& d,
                                  const Preference& pref = {}, int max_results = 4);

// Executes with `algo` (null: the first heuristic result). alpha/beta point to compute-type
// scalars on the host. Throws insufficient_workspace when workspace_bytes is too small.
void matmul(const Handle& h, const MatmulDesc& desc, const void* alpha, const void* A, const MatrixLayout& a,
            const void* B, const MatrixLayout& b, const void* beta, const void* C, const MatrixLayout& c, void* D,
            const MatrixLayout& d, const Algorithm* algo = nullptr, void* workspace = nullptr,
            std::size_t workspace_bytes = 0);

}  // namespace strata::blas::lt
