// Reading STRATA_* environment variables in one place, with clear errors for bad values.
#pragma once
#include <optional>
#include <string>

namespace strata {

std::optional<std::string> env_string(const char* name);
// Integer variable; unset or empty → fallback; a non-integer value throws invalid_argument.
long env_int(const char* name, long fallback);

}  // namespace strata
