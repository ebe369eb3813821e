#include "strata/core/memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "strata/core/env.hpp"
#include "strata/core/status.hpp"

namespace strata {

namespace {

// Buffers kept across calls (prepared filters, Winograd's transformed filters, packing blocks)
// are streamed from memory by the kernels; on 4 KiB pages a 16 MB stream walks 4096 pages and
// the hardware prefetchers stop at every page boundary. Large ones are allocated on 2 MiB
// boundaries and marked for transparent huge pages (honoured when the system's THP mode is
// "always" or "madvise"). Measured in-process against the same buffers on 4 KiB pages
// (bench/huge_pages_ab: prepared filters, NHWC batch 1, 1 thread): Winograd res5_3x3 (16 MB)
// 1.03-1.09x, res4_3x3 1.02-1.07x, res5_proj_s2 (8 MB) 1.02-1.06x, res5_3x3_s2 (9 MB)
// 1.00-1.04x; filters under 2 MiB and sgemm's packing buffers within the spread. Per-call
// temporaries stay on 4 KiB pages: with cgemm's split planes allocated per call on huge pages
// each call faulted in and zeroed whole 2 MiB pages (0.93-0.96x at 256-1024, worst call at
// 1024 219 ms against 149). Those planes now live in a kept per-thread buffer (gemm_dispatch).
constexpr std::size_t kHugePage = std::size_t(2) << 20;

// Read at each large allocation (few, and each costs far more than a getenv).
bool huge_pages_enabled() { return env_int("STRATA_HUGE_PAGES", 1) != 0; }

void* allocate(std::size_t bytes, std::size_t alignment, bool huge) {
  check_arg(alignment && (alignment & (alignment - 1)) == 0 && alignment >= sizeof(void*),
            "alignment", "must be a power of two >= sizeof(void*)");
  if (bytes == 0) bytes = alignment;
  huge = huge && bytes >= kHugePage && huge_pages_enabled();
  if (huge) alignment = std::max(alignment, kHugePage);
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes) != 0 || !p)
    throw_error(Status::out_of_memory, "bytes", "could not allocate " + std::to_string(bytes) + " bytes");
  // Only whole huge pages inside the buffer: advice on a tail shared with other allocations
  // would reach memory this buffer does not own.
  if (huge) madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  return p;
}

}  // namespace

void* aligned_alloc_bytes(std::size_t bytes, std::size_t alignment) { return allocate(bytes, alignment, false); }

void* aligned_alloc_long_lived(std::size_t bytes, std::size_t alignment) { return allocate(bytes, alignment, true); }

void aligned_free(void* p) noexcept { std::free(p); }

}  // namespace strata
