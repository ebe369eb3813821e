// Little-endian reads that never step outside the buffer: every read checks its range first.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

namespace strata::doctor::detail {

// True if [offset, offset + length) lies inside a buffer of `size` bytes (overflow-safe).
inline bool in_range(std::uint64_t size, std::uint64_t offset, std::uint64_t length) {
  return offset <= size && length <= size - offset;
}

template <class T>
std::optional<T> read_le(std::span<const std::uint8_t> b, std::uint64_t offset) {
  if (!in_range(b.size(), offset, sizeof(T))) return std::nullopt;
  T v;
  std::memcpy(&v, b.data() + offset, sizeof(T));  // x86-64 and aarch64 Linux are little-endian
  return v;
}

// NUL-terminated string at `offset`, at most `max_len` bytes; nullopt if unterminated.
inline std::optional<std::string> read_cstr(std::span<const std::uint8_t> b, std::uint64_t offset, std::size_t max_len) {
  if (offset >= b.size()) return std::nullopt;
  std::size_t avail = std::size_t(std::min<std::uint64_t>(b.size() - offset, max_len));
  const void* end = std::memchr(b.data() + offset, 0, avail);
  if (!end) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(b.data() + offset), static_cast<const std::uint8_t*>(end) - (b.data() + offset));
}

}  // namespace strata::doctor::detail
