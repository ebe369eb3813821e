// Aligned host memory. 64-byte alignment by default: one cache line, one AVX-512 vector.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

namespace strata {

inline constexpr std::size_t default_alignment = 64;

// Throws Error(out_of_memory) on failure; alignment must be a power of two.
void* aligned_alloc_bytes(std::size_t bytes, std::size_t alignment = default_alignment);
// The same for buffers kept across many calls (prepared filters, per-thread packing buffers),
// which the kernels stream from memory: those of 2 MiB and more start on a huge-page boundary
// and are advised for transparent huge pages (STRATA_HUGE_PAGES=0: never). Not for per-call
// temporaries: faulting in and zeroing whole 2 MiB pages on every call costs more than the
// page walks it saves.
void* aligned_alloc_long_lived(std::size_t bytes, std::size_t alignment = default_alignment);
void aligned_free(void* p) noexcept;

struct AlignedDeleter {
  void operator()(void* p) const noexcept { aligned_free(p); }
};

// Uninitialised array of trivially-copyable T.
template <class T>
using AlignedArray = std::unique_ptr<T[], AlignedDeleter>;

template <class T>
AlignedArray<T> make_aligned(std::size_t count, std::size_t alignment = default_alignment) {
  return AlignedArray<T>(static_cast<T*>(aligned_alloc_bytes(count * sizeof(T), alignment)));
}
template <class T>
AlignedArray<T> make_aligned_long_lived(std::size_t count, std::size_t alignment = default_alignment) {
  return AlignedArray<T>(static_cast<T*>(aligned_alloc_long_lived(count * sizeof(T), alignment)));
}

// A std::vector allocator on 64-byte boundaries: what frameworks hand a library (PyTorch's CPU
// tensors, oneDNN's own buffers). A std::vector's own storage of a few hundred KB and more
// starts 16 bytes past a page, so every 64-byte row of its floats crosses a cache line and every
// vector store to it is a split store: an f32 1x1 convolution's column walk ran 5-12% slower on
// such an output than on an aligned one (in-process), and two runs of one build read 0.91-0.94x
// apart where their buffers happened to fall differently.
template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(aligned_alloc_bytes(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { aligned_free(p); }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const noexcept { return true; }
};
template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace strata
