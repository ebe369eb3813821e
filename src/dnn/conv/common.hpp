// Small helpers shared by the algorithms: alpha/beta stores, filter repacking, workspace carving.
#pragma once
#include <cstddef>
#include <cstdint>

#include "problem.hpp"
#include "strata/core/status.hpp"

namespace strata::dnn::detail {

// dst = alpha * v + beta * dst, never reading dst when beta == 0 (cuDNN's rule).
inline void blend_store(float* dst, float v, float alpha, float beta) {
  *dst = beta == 0.f ? alpha * v : alpha * v + beta * *dst;
}

// Packed filter orders the algorithms compute with. Both index groups first, then K/G.
enum class FilterOrder {
  kcrs,  // [G][K/G][C/G][T][R][S]
  krsc,  // [G][K/G][T][R][S][C/G]
};

// Copies the filter view of `p` into a packed buffer of p.k * p.cg() * p.filter_spatial() floats.
void pack_filter(const ConvProblem& p, const float* w, float* dst, FilterOrder order);
// The same for a bf16/f16 filter read as stored (ConvArgs::w_narrow).
void pack_filter(const ConvProblem& p, const uint16_t* w, uint16_t* dst, FilterOrder order);
// The inverse with blending: w = alpha * src + beta * w (beta == 0: w not read).
void unpack_filter_blend(const ConvProblem& p, const float* src, FilterOrder order, float* w, float alpha,
                         float beta);
// Whether the filter view already is packed in `order` (so no copy is needed).
bool filter_is(const ConvProblem& p, FilterOrder order);

// Hands out 64-byte aligned pieces of a workspace in order.
class WorkspaceCarver {
 public:
  WorkspaceCarver(void* base, std::size_t bytes) : base_(static_cast<std::byte*>(base)), bytes_(bytes) {}
  // The next count values. Taking more than the workspace holds means an algorithm's
  // workspace_size() undercounts: an internal error, never a write past the end.
  template <class T>
  T* take(std::size_t count) {
    T* p = reinterpret_cast<T*>(base_ + used_);
    used_ += round_up(count * sizeof(T));
    if (used_ > bytes_)
      throw_error(Status::internal_error, "workspace",
                  "convolution workspace undercounted: " + std::to_string(used_) + " bytes taken of " +
                      std::to_string(bytes_));
    return p;
  }
  static std::size_t round_up(std::size_t b) { return (b + 63) / 64 * 64; }
  std::size_t used() const { return used_; }

 private:
  std::byte* base_;
  std::size_t bytes_, used_ = 0;
};

// Chunk [lo, hi) of `n` items for part `i` of `parts` (static partition, as parallel_for).
inline int64_t chunk_begin(int64_t n, int parts, int i) { return n * i / parts; }

}  // namespace strata::dnn::detail

#include "strata/blas/handle.hpp"

namespace strata::dnn::detail {

// A BLAS handle running `threads` threads with the problem's ISA and determinism.
blas::Handle blas_handle_for(const ConvProblem& p, int threads);

}  // namespace strata::dnn::detail
