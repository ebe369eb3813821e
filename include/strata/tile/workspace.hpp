// Per-thread packing buffers, grown on demand and kept for the thread's lifetime so repeated
// GEMM calls neither allocate nor fault pages in again.
#pragma once
#include <cstddef>

#include "strata/core/memory.hpp"
#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

class PackBuffer {
 public:
  void* get(std::size_t bytes) {
    if (bytes > capacity_) {
      data_ = AlignedArray<unsigned char>(static_cast<unsigned char*>(aligned_alloc_long_lived(bytes, 4096)));
      capacity_ = bytes;
    }
    return data_.get();
  }

 private:
  AlignedArray<unsigned char> data_;
  std::size_t capacity_ = 0;
};

// Buffers per thread: 0 for A blocks, 1 for B blocks (the mainloop's); 2 to 5 for a caller
// that stages whole operands around a GEMM on the same thread (dnn's channels-last copies of
// NCHW images, its staged NCHW output blocks, a filter packed or re-cut once per call), which
// must outlive the GEMM's own packing; 6 for blas's transposed products' C^T blocks
// (transposed_product.hpp), which hold across their GEMM calls.
inline PackBuffer& thread_pack_buffer(int which) {
  thread_local PackBuffer buffers[7];
  return buffers[which];
}

STRATA_TILE_NS_END
