#include "strata/core/memory.hpp"

#include <cstdlib>
#include <string>

#include "strata/core/status.hpp"

namespace strata {

void* aligned_alloc_bytes(std::size_t bytes, std::size_t alignment) {
  check_arg(alignment && (alignment & (alignment - 1)) == 0 && alignment >= sizeof(void*),
            "alignment", "must be a power of two >= sizeof(void*)");
  if (bytes == 0) bytes = alignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes) != 0 || !p)
    throw_error(Status::out_of_memory, "bytes", "could not allocate " + std::to_string(bytes) + " bytes");
  return p;
}

void aligned_free(void* p) noexcept { std::free(p); }

}  // namespace strata
