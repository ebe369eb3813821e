// blas::lt: validation, heuristics and execution of described matmuls on the tile engine.
#include "strata/blas/lt.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "../gemm/gemm_kernels.hpp"
#include "strata/tile/dot_gemm.hpp"
#include "strata/tile/small_gemm.hpp"
#include "strata/core/log.hpp"
#include "strata/core/status.hpp"
#include "strata/core/thread_pool.hpp"

namespace strata::blas::lt {

// ---- Epilogue builder ----------------------------------------------------------------------

Epilogue& Epilogue::bias(const void* vec, Along along) {
  check_arg(vec != nullptr, "bias", "must not be null");
  pieces_.push_back({Piece::Kind::bias, vec, nullptr, 0, along});
  return *this;
}
Epilogue& Epilogue::activation(Activation act, double alpha, double beta) {
  if (act == Activation::clamp) check_arg(alpha <= beta, "beta", "clamp needs lower bound <= upper bound");
  Piece p{Piece::Kind::activation};
  p.act = act, p.a = alpha, p.b = beta;
  pieces_.push_back(p);
  return *this;
}
Epilogue& Epilogue::residual(const void* matrix, index_t ld, double scale) {
  check_arg(matrix != nullptr, "residual", "must not be null");
  Piece p{Piece::Kind::residual, matrix, nullptr, ld};
  p.a = scale;
  pieces_.push_back(p);
  return *this;
}
Epilogue& Epilogue::aux(void* matrix, index_t ld) {
  check_arg(matrix != nullptr, "aux", "must not be null");
  pieces_.push_back({Piece::Kind::aux, nullptr, matrix, ld});
  return *this;
}
Epilogue& Epilogue::scale(double factor) {
  Piece p{Piece::Kind::scale_tensor};
  p.a = factor;
  pieces_.push_back(p);
  return *this;
}
Epilogue& Epilogue::scale(const void* vec, Along along) {
  check_arg(vec != nullptr, "scale", "must not be null");
  pieces_.push_back({Piece::Kind::scale_vec, vec, nullptr, 0, along});
  return *this;
}

std::string Epilogue::describe() const {
  static const char* act_names[] = {"none", "relu", "leaky_relu", "gelu_erf", "gelu_tanh", "silu", "sigmoid", "tanh", "clamp"};
  std::string s;
  for (const Piece& p : pieces_) {
    if (!s.empty()) s += "+";
    const char* along = p.along == Along::rows ? "(rows)" : "(cols)";
    switch (p.kind) {
      case Piece::Kind::bias: s += std::string("bias") + along; break;
      case Piece::Kind::activation: s += act_names[int(p.act)]; break;
      case Piece::Kind::residual: s += "residual"; break;
      case Piece::Kind::aux: s += "aux"; break;
      case Piece::Kind::scale_tensor: s += "scale"; break;
      case Piece::Kind::scale_vec: s += std::string("scale") + along; break;
    }
  }
  return s.empty() ? "none" : s;
}

namespace {

using detail::GemmCall;
using detail::GemmKernel;
using detail::GemmKernelInfo;

// ---- Validation ----------------------------------------------------------------------------

struct Shape {
  index_t m, n, k, batch;
};

bool is_narrow_output(DType t) {
  return t == DType::i8 || t == DType::u8 || t == DType::f8e4m3 || t == DType::f8e5m2 || t == DType::bf16 ||
         t == DType::f16;
}

void check_layout(const MatrixLayout& l, const char* name) {
  const std::string n(name);
  check_arg(l.rows >= 0 && l.cols >= 0, n, "rows and cols must be >= 0");
  check_arg(l.order == Order::col_major || l.order == Order::row_major, n, "order must be col_major or row_major");
  const index_t extent = l.order == Order::col_major ? l.rows : l.cols;
  check_arg(l.ld >= std::max<index_t>(1, extent), n,
            [&] { return "leading dimension " + std::to_string(l.ld) + " is smaller than " + std::to_string(extent); });
  check_arg(l.batch_count >= 1, n, "batch_count must be >= 1");
  check_arg(l.batch_stride >= 0, n, "batch_stride must be >= 0");
}

Shape validate(const MatmulDesc& desc, const MatrixLayout& a, const MatrixLayout& b, const MatrixLayout& c,
               const MatrixLayout& d) {
  check_arg(desc.compute == DType::f32 || desc.compute == DType::f64, "compute", "compute type must be f32 or f64");
  auto valid_op = [](Op o) { return o == Op::N || o == Op::T || o == Op::C; };
  check_arg(valid_op(desc.transa), "transa", "must be Op::N, Op::T or Op::C");
  check_arg(valid_op(desc.transb), "transb", "must be Op::N, Op::T or Op::C");
  check_layout(a, "a"), check_layout(b, "b"), check_layout(c, "c"), check_layout(d, "d");
  // Narrow inputs (bf16, f16) with f32 compute: converted exactly while packing, or multiplied
  // natively where gemm_ex has a kernel for them (bf16 on AMX or AVX512_BF16).
  const bool narrow_in = desc.compute == DType::f32 && (a.type == DType::bf16 || a.type == DType::f16);
  check_arg(a.type == desc.compute || narrow_in, "a", "A's type must be the compute type, or (with f32 compute) bf16 or f16");
  check_arg(b.type == a.type, "b", "B's type must equal A's");
  check_arg(c.type == desc.compute, "c", "C's type must equal the compute type");
  check_arg(d.type == desc.compute || (desc.compute == DType::f32 && is_narrow_output(d.type)), "d",
            "D's type must be the compute type, or (with f32 compute) i8, u8, f8e4m3, f8e5m2, bf16 or f16");
  Shape s;
  s.m = desc.transa == Op::N ? a.rows : a.cols;
  s.k = desc.transa == Op::N ? a.cols : a.rows;
  const index_t kb = desc.transb == Op::N ? b.rows : b.cols;
  s.n = desc.transb == Op::N ? b.cols : b.rows;
  check_arg(kb == s.k, "b", [&] {
    return "op(B) has " + std::to_string(kb) + " rows but op(A) has " + std::to_string(s.k) + " columns";
  });
  check_arg(d.rows == s.m && d.cols == s.n, "d",
            [&] { return "D must be " + std::to_string(s.m) + " x " + std::to_string(s.n); });
  check_arg(c.rows == s.m && c.cols == s.n, "c",
            [&] { return "C must be " + std::to_string(s.m) + " x " + std::to_string(s.n); });
  check_arg(c.order == d.order, "c", "C and D must have the same order");
  s.batch = d.batch_count;
  for (auto [l, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}, std::pair{&c, "c"}})
    check_arg(l->batch_count == s.batch || l->batch_count == 1, name,
              "batch_count must equal D's or be 1 (broadcast)");
  for (const auto& p : desc.epilogue.pieces())
    if (p.kind == Epilogue::Piece::Kind::residual || p.kind == Epilogue::Piece::Kind::aux)
      check_arg(p.ld >= std::max<index_t>(1, d.order == Order::col_major ? s.m : s.n),
                p.kind == Epilogue::Piece::Kind::aux ? "aux" : "residual", "leading dimension too small for D's shape");
  return s;
}

// ---- Heuristics ----------------------------------------------------------------------------

// op(X) of a stored matrix as a strided view (strides in elements of its stored type).
struct View {
  const void* p;
  index_t rs, cs;
};

View op_view(const void* p, const MatrixLayout& l, Op op) {
  View v{p, l.order == Order::col_major ? 1 : l.ld, l.order == Order::col_major ? l.ld : 1};
  if (op != Op::N) std::swap(v.rs, v.cs);  // real types: C is T
  return v;
}

// The engine's op(A) and op(B), column-major: a row-major D is the column-major D^T = op(B)^T
// op(A)^T, so the operands swap and each view transposes.
std::pair<View, View> engine_views(const void* A, const MatrixLayout& a, Op transa, const void* B,
                                   const MatrixLayout& b, Op transb, Order d_order) {
  const View va = op_view(A, a, transa), vb = op_view(B, b, transb);
  if (d_order == Order::col_major) return {va, vb};
  return {View{vb.p, vb.cs, vb.rs}, View{va.p, va.cs, va.rs}};
}

template <class T>
GemmKernelInfo kernel_info(const Handle& h) {
  return detail::gemm_kernels<T>().select(h.isa()).info();
}

std::vector<Algorithm> rank(const Handle& h, const MatmulDesc& desc, const MatrixLayout& a, const MatrixLayout& b,
                            const Shape& s, const MatrixLayout& d) {
  const bool native_bf16 = a.type == DType::bf16 && bool(detail::gemm_kernels_bf16().select(h.isa()));
  const GemmKernelInfo ki = native_bf16                 ? detail::gemm_kernels_bf16().select(h.isa()).info()
                            : desc.compute == DType::f32 ? kernel_info<float>(h)
                                                         : kernel_info<double>(h);
  // Narrow inputs are always packed (converted, or laid out for the native kernel): only the
  // packing algorithms apply.
  const bool in_place_ok = a.type == desc.compute;
  const int threads = h.num_threads();
  const std::size_t tile_bytes = std::size_t(s.m) * std::size_t(s.n) * dtype_size(desc.compute);
  const bool narrow = d.type != desc.compute;
  // A column-major, untransposed A (or a row-major, transposed one) has unit row stride.
  const bool a_unit_rows = (a.order == Order::col_major) == (desc.transa == Op::N);
  const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
  std::vector<std::pair<double, Algorithm>> scored;
  auto add = [&](double score, AlgoId id, const char* name, std::size_t ws, std::string why) {
    scored.push_back({score, Algorithm{id, name, ws, std::move(why)}});
  };
  const std::string kern = cat("kernel ", ki.name, " (", ki.mr, "x", ki.nr, ")");
  // Few columns of a TN product (column-major terms: a row-major D is D^T) with an epilogue of
  // bias, activation and scale run as their transpose (blas's transposed_product.hpp).
  const auto [va, vb] = engine_views(nullptr, a, desc.transa, nullptr, b, desc.transb, d.order);
  const index_t cm = d.order == Order::row_major ? s.n : s.m, cn = d.order == Order::row_major ? s.m : s.n;
  bool pointwise_epilogue = true;
  for (const auto& p : desc.epilogue.pieces())
    pointwise_epilogue &= p.kind != Epilogue::Piece::Kind::residual && p.kind != Epilogue::Piece::Kind::aux;
  const bool transposed = a.type == b.type && !narrow && pointwise_epilogue && va.cs == 1 && vb.rs == 1 && va.rs != 1 &&
                          (!native_bf16 || (va.rs % 2 == 0 && s.k % 2 == 0)) &&
                          detail::few_columns_transpose(cm, cn, s.k, ki.mr,
                                                        native_bf16 ? 2 : int64_t(dtype_size(desc.compute)));
  const std::string few_columns =
      transposed ? "; few columns of a TN product: run as C^T = op(B)^T op(A)^T, whose few rows read op(A) in place"
                 : "";
  add(1.5, AlgoId::tiled_auto, "tiled_auto", narrow ? tile_bytes : 0,
      !in_place_ok
          ? cat(dtype_name(a.type), " inputs: ",
                native_bf16 ? "the native kernel's packed panels (gemm_ex's), " : "converted exactly to f32 while packed, ",
                kern, few_columns)
          : cat("general shape: the engine's own operand policy, as gemm uses (B read in place while at most three "
                "row blocks of A read it or it fits L1, A in place when small with close columns, else packed into "
                "MCxKC / KCxNC cache blocks), ", kern, few_columns));
  add(1.0, AlgoId::tiled_pack_both, "tiled_pack_both", narrow ? tile_bytes : 0,
      cat("pack A and B into MCxKC / KCxNC cache blocks whatever the shape, ", kern));
  if (in_place_ok) {
    if (s.m <= 2 * ki.mr)
      add(2.0, AlgoId::tiled_stream_b, "tiled_stream_b", narrow ? tile_bytes : 0,
          cat("M=", s.m, " is at most two register tiles: B is used by so few rows that packing it costs more than "
                       "streaming it in place"));
    else
      add(0.5, AlgoId::tiled_stream_b, "tiled_stream_b", narrow ? tile_bytes : 0,
          cat("streams B in place; slower than packing when M=", s.m, " > ", 2 * ki.mr));
  }
  if (a_unit_rows && in_place_ok) {
    if (s.n <= ki.nr)
      add(2.0, AlgoId::tiled_stream_a, "tiled_stream_a", narrow ? tile_bytes : 0,
          cat("N=", s.n, " fits one register tile: each A element is used once, so A is read in place"));
    else
      add(0.4, AlgoId::tiled_stream_a, "tiled_stream_a", narrow ? tile_bytes : 0,
          cat("reads A in place; slower than packing when N=", s.n, " > ", ki.nr));
  }
  // The engine's small path serves these (inputs of the compute type, as the engine requires).
  const bool small_path = a.type == desc.compute && b.type == desc.compute &&
                          (desc.compute == DType::f32
                               ? tile::small_gemm_serves_rows<float>(ki.small_rows, s.m, s.n, s.k, a_unit_rows ? 1 : 0)
                               : tile::small_gemm_serves_rows<double>(ki.small_rows, s.m, s.n, s.k, a_unit_rows ? 1 : 0));
  if (in_place_ok && s.k <= ki.kc && s.m <= tile::one_block_row_tiles * ki.mr &&
      s.n <= tile::one_block_col_tiles * ki.nr)
    add(2.5, AlgoId::one_block, "one_block", narrow ? tile_bytes : 0,
        small_path ? cat("M=", s.m, " rows (at most ", ki.small_rows, ") over K=", s.k, " (at most ",
                         tile::small_gemm_max_k, "): the small path, A and C in place with the last vector's "
                         "rows masked, B where it lies, nothing copied, ", kern)
                   : cat("K=", s.k, " is one k block (KC=", ki.kc, ") and C at most ", tile::one_block_row_tiles,
                         "x", tile::one_block_col_tiles, " register tiles: operands read in place, no blocking or "
                         "packing (each thread's part too), ", kern));
  // op(A)'s and op(B)'s depth contiguous in memory (else the dot path copies their rows).
  const bool a_depth_unit = (a.order == Order::col_major) != (desc.transa == Op::N);
  const bool b_depth_unit = (b.order == Order::col_major) == (desc.transb == Op::N);
  // Kernels that take the path and inputs of the compute type only (as the engine); below
  // batch_parallel where a batch gives every thread entries (which then take this path each).
  if (ki.dot_path && a.type == desc.compute && b.type == desc.compute &&
      tile::dot_gemm_serves(s.m, s.n, s.k, a_depth_unit ? 1 : 0, b_depth_unit ? 1 : 0))
    add(s.batch >= 2 && s.batch >= threads ? 2.8 : 3.5, AlgoId::dot_products, "dot_products",
        narrow ? tile_bytes : 0,
        cat("M=", s.m, " and N=", s.n, " are at most ", tile::dot_gemm_max_mn, " over K=", s.k,
            ": each entry one vector accumulator along the depth (the register tiles would be mostly padding); "
            "results differ in the last bits from the tiled algorithms (another summation order)"));
  if (s.batch >= 2) {
    const bool small = flops <= 2.0 * 128 * 128 * 128;
    add(small && s.batch >= threads ? 3.0 : 0.3, AlgoId::batch_parallel, "batch_parallel",
        narrow ? tile_bytes * std::size_t(threads) : 0,
        small ? cat(s.batch, " small problems: one problem per thread, no synchronisation inside a product")
              : cat("one problem per thread; large problems (", s.m, "x", s.n, "x", s.k,
                    ") are better split inside each product"));
  }
  std::stable_sort(scored.begin(), scored.end(), [](auto& x, auto& y) { return x.first > y.first; });
  std::vector<Algorithm> out;
  for (auto& [score, algo] : scored) out.push_back(std::move(algo));
  return out;
}

// ---- Execution -----------------------------------------------------------------------------

// Matrix `item` of a batch described by `l` (batch count 1: the one matrix, broadcast).
const void* batch_item(const void* base, const MatrixLayout& l, index_t item) {
  if (l.batch_count == 1) return base;
  return static_cast<const char*>(base) + std::size_t(item * l.batch_stride) * dtype_size(l.type);
}

// The kernel for T with these input types: gemm_ex's native bf16 kernel where one exists, else
// T's (which converts narrow inputs exactly while packing).
template <class T>
GemmKernel<T> kernel_for(const Handle& h, DType in) {
  if constexpr (std::is_same_v<T, float>)
    if (in == DType::bf16)
      if (const auto native = detail::gemm_kernels_bf16().select(h.isa())) return native;
  return detail::gemm_kernels<T>().select(h.isa());
}

template <class T>
void run_typed(const Handle& h, const MatmulDesc& desc, T alpha, const void* A, const MatrixLayout& a, const void* B,
               const MatrixLayout& b, T beta, const T* C, const MatrixLayout& c, void* D, const MatrixLayout& d,
               const Shape& s, const Algorithm& algo, void* workspace) {
  const bool row_major = d.order == Order::row_major;
  const bool narrow = d.type != desc.compute;
  // A row-major D is the column-major D^T = op(B)^T op(A)^T: swap operands and vector axes.
  const index_t m = row_major ? s.n : s.m, n = row_major ? s.m : s.n;
  auto flip = [&](Epilogue::Along al) {
    return (al == Epilogue::Along::rows) != row_major ? tile::Broadcast::row : tile::Broadcast::col;
  };
  const GemmKernel<T> kernel = kernel_for<T>(h, a.type);
  const int threads = h.num_threads();
  const bool per_item_threads = algo.id == AlgoId::batch_parallel;

  auto run_item = [&](index_t item, int item_threads, T* scratch) {
    const T* Ci = static_cast<const T*>(batch_item(C, c, item));
    const index_t d_off = item * d.batch_stride;
    const auto [va, vb] =
        engine_views(batch_item(A, a, item), a, desc.transa, batch_item(B, b, item), b, desc.transb, d.order);
    // Target tile storage: D itself, or f32 scratch when D is narrow.
    T* out = narrow ? scratch : static_cast<T*>(D) + d_off;
    const index_t ldo = narrow ? m : d.ld;
    if (beta != T(0) && (narrow || static_cast<const void*>(Ci) != static_cast<const void*>(out)))
      for (index_t j = 0; j < n; ++j)
        std::memcpy(out + j * ldo, Ci + j * c.ld, sizeof(T) * std::size_t(m));
    std::vector<tile::EpilogueStep<T>> steps;
    for (const auto& p : desc.epilogue.pieces()) {
      tile::EpilogueStep<T> st{};
      using K = Epilogue::Piece::Kind;
      switch (p.kind) {
        case K::bias:
          st.kind = flip(p.along) == tile::Broadcast::row ? tile::EpilogueKind::bias_row : tile::EpilogueKind::bias_col;
          st.vec = static_cast<const T*>(p.in);
          break;
        case K::activation:
          st.kind = tile::EpilogueKind::activation, st.act = p.act, st.a = T(p.a), st.b = T(p.b);
          break;
        case K::residual:
          st.kind = tile::EpilogueKind::residual_add, st.src = static_cast<const T*>(p.in) + d_off, st.ld = p.ld,
          st.a = T(p.a);
          break;
        case K::aux:
          st.kind = tile::EpilogueKind::aux_store, st.dst = static_cast<T*>(p.out) + d_off, st.ld = p.ld;
          break;
        case K::scale_tensor:
          st.kind = tile::EpilogueKind::scale, st.broadcast = tile::Broadcast::tensor, st.a = T(p.a);
          break;
        case K::scale_vec:
          st.kind = tile::EpilogueKind::scale, st.broadcast = flip(p.along), st.vec = static_cast<const T*>(p.in);
          break;
      }
      steps.push_back(st);
    }
    if (narrow) {
      tile::EpilogueStep<T> q{};
      q.kind = tile::EpilogueKind::quantize_store, q.dst_type = d.type, q.ld = d.ld;
      q.dst = static_cast<unsigned char*>(D) + std::size_t(d_off) * dtype_size(d.type);
      steps.push_back(q);
    }
    GemmCall<T> call = detail::make_gemm_call<T>(m, n, s.k, alpha, va.p, va.rs, va.cs, vb.p, vb.rs, vb.cs, beta, out, ldo,
                                                   item_threads);
    call.epilogue = steps.data(), call.epilogue_count = steps.size();
    call.a_type = a.type, call.b_type = b.type;
    call.split_depth = h.math_mode() == MathMode::fast;
    using P = typename GemmCall<T>::Packing;
    call.packing = algo.id == AlgoId::tiled_pack_both ? P::pack_both
                   : algo.id == AlgoId::tiled_stream_b ? P::stream_b
                   : algo.id == AlgoId::tiled_stream_a ? P::stream_a
                                                       : P::automatic;
    kernel.run(call);
  };

  T* ws = static_cast<T*>(workspace);
  const std::size_t item_elems = std::size_t(m) * std::size_t(n);
  if (per_item_threads) {
    parallel_chunks(s.batch, threads, [&](int64_t lo, int64_t hi, int part) {
      for (int64_t item = lo; item < hi; ++item) run_item(item, 1, narrow ? ws + item_elems * std::size_t(part) : nullptr);
    });
  } else {
    for (index_t item = 0; item < s.batch; ++item) run_item(item, threads, ws);
  }
}

}  // namespace

std::vector<Algorithm> heuristics(const Handle& h, const MatmulDesc& desc, const MatrixLayout& a,
                                  const MatrixLayout& b, const MatrixLayout& c, const MatrixLayout& d,
                                  const Preference& pref, int max_results) {
  check_arg(max_results >= 1, "max_results", "must be >= 1");
  const Shape s = validate(desc, a, b, c, d);
  std::vector<Algorithm> out;
  for (auto& algo : rank(h, desc, a, b, s, d))
    if (algo.workspace_bytes <= pref.max_workspace_bytes && int(out.size()) < max_results) out.push_back(algo);
  return out;
}

void matmul(const Handle& h, const MatmulDesc& desc, const void* alpha, const void* A, const MatrixLayout& a,
            const void* B, const MatrixLayout& b, const void* beta, const void* C, const MatrixLayout& c, void* D,
            const MatrixLayout& d, const Algorithm* algo, void* workspace, std::size_t workspace_bytes) {
  const Shape s = validate(desc, a, b, c, d);
  check_arg(alpha != nullptr, "alpha", "must not be null");
  check_arg(beta != nullptr, "beta", "must not be null");
  if (s.m == 0 || s.n == 0) return;
  check_arg(D != nullptr, "D", "must not be null");
  if (s.k > 0) {
    check_arg(A != nullptr, "A", "must not be null");
    check_arg(B != nullptr, "B", "must not be null");
  }
  Algorithm chosen;
  if (algo) {
    chosen = *algo;
    bool known = false;
    for (auto& cand : rank(h, desc, a, b, s, d))
      if (cand.id == chosen.id) known = true, chosen.workspace_bytes = cand.workspace_bytes;
    check_arg(known, "algo", "this algorithm does not apply to the described matmul");
  } else {
    chosen = rank(h, desc, a, b, s, d).front();
  }
  if (chosen.workspace_bytes > workspace_bytes || (chosen.workspace_bytes > 0 && !workspace))
    throw_error(Status::insufficient_workspace, "workspace",
                cat("algorithm '", chosen.name, "' needs ", chosen.workspace_bytes, " bytes, got ", workspace_bytes));
  const bool beta_nonzero = desc.compute == DType::f32 ? *static_cast<const float*>(beta) != 0.0f
                                                       : *static_cast<const double*>(beta) != 0.0;
  if (beta_nonzero) check_arg(C != nullptr, "C", "must not be null when beta != 0");
  if (verbose(1))
    verbose_write("lt", cat("matmul ", dtype_name(a.type), "->", dtype_name(desc.compute), " ", char(desc.transa), char(desc.transb), " m=", s.m,
                            " n=", s.n, " k=", s.k, " batch=", s.batch, " D=", dtype_name(d.type),
                            d.order == Order::row_major ? " row-major" : " col-major",
                            " epilogue=", desc.epilogue.describe(), " algo=", chosen.name, " because ", chosen.reason));
  if (desc.compute == DType::f32)
    run_typed<float>(h, desc, *static_cast<const float*>(alpha), A, a, B, b, *static_cast<const float*>(beta),
                     static_cast<const float*>(C), c, D, d, s, chosen, workspace);
  else
    run_typed<double>(h, desc, *static_cast<const double*>(alpha), A, a, B, b, *static_cast<const double*>(beta),
                      static_cast<const double*>(C), c, D, d, s, chosen, workspace);
}

}  // namespace strata::blas::lt
