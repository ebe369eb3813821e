// The knowledge-base files from data/doctor, compiled into the library (see embed_data.cmake).
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace strata::doctor::detail {

struct EmbeddedFile {
  std::string_view name;
  std::string_view text;
};
extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kEmbeddedFileCount;

inline std::optional<std::string_view> embedded_file(std::string_view name) {
  for (std::size_t i = 0; i < kEmbeddedFileCount; ++i)
    if (kEmbeddedFiles[i].name == name) return kEmbeddedFiles[i].text;
  return std::nullopt;
}

}  // namespace strata::doctor::detail
