#include "strata/core/env.hpp"

#include <cerrno>
#include <cstdlib>

#include "strata/core/status.hpp"

namespace strata {

std::optional<std::string> env_string(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

long env_int(const char* name, long fallback) {
  auto v = env_string(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v->c_str(), &end, 10);
  if (errno != 0 || end == v->c_str() || *end != '\0')
    throw_error(Status::invalid_argument, name, "expected an integer, got '" + *v + "'");
  return x;
}

}  // namespace strata
