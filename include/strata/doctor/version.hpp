// Dotted version numbers as drivers, toolkits and libraries write them ("580.65.06", "13.0",
// "9.19.0.56"), compared numerically part by part.
#pragma once
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::doctor {

struct Version {
  std::vector<int> parts;
  std::string text;  // as written (keeps zero padding such as "580.65.06")

  // Accepts digits separated by dots; leading/trailing junk is rejected. At most 6 parts.
  static std::optional<Version> parse(std::string_view text);
  // Finds the first dotted version with at least `min_parts` parts inside free text.
  static std::optional<Version> find_in(std::string_view text, int min_parts = 2);

  int major() const { return parts.empty() ? 0 : parts[0]; }
  int minor() const { return parts.size() < 2 ? 0 : parts[1]; }
  std::string str() const;
  // First `n` parts ("13.0.96" -> "13.0" for n = 2).
  Version prefix(std::size_t n) const;
  // Missing parts compare as 0, so "13.0" == "13.0.0".
  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }
};

}  // namespace strata::doctor
