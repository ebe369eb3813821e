// Version parsing and comparison.
#include "strata/doctor/version.hpp"

#include <cctype>

namespace strata::doctor {

std::optional<Version> Version::parse(std::string_view text) {
  Version v;
  std::size_t i = 0;
  if (text.empty()) return std::nullopt;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    long value = 0;
    std::size_t digits = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (++digits > 9) return std::nullopt;
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    v.parts.push_back(int(value));
    if (v.parts.size() > 6) return std::nullopt;
    if (i == text.size()) break;
    if (text[i] != '.' || i + 1 == text.size()) return std::nullopt;
    ++i;
  }
  v.text = std::string(text);
  return v;
}

std::optional<Version> Version::find_in(std::string_view text, int min_parts) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
      std::size_t j = i;
      while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
      std::string_view cand = text.substr(i, j - i);
      while (!cand.empty() && cand.back() == '.') cand.remove_suffix(1);
      if (auto v = parse(cand); v && int(v->parts.size()) >= min_parts) return v;
      i = j;
    } else {
      ++i;
    }
  }
  return std::nullopt;
}

std::string Version::str() const {
  if (!text.empty()) return text;
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(parts[i]);
  }
  return out;
}

Version Version::prefix(std::size_t n) const {
  Version v;
  for (std::size_t i = 0; i < parts.size() && i < n; ++i) v.parts.push_back(parts[i]);
  return v;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  std::size_t n = std::max(a.parts.size(), b.parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    int x = i < a.parts.size() ? a.parts[i] : 0;
    int y = i < b.parts.size() ? b.parts[i] : 0;
    if (x != y) return x <=> y;
  }
  return std::strong_ordering::equal;
}

}  // namespace strata::doctor
