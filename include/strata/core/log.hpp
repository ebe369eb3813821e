// Verbose dispatch trace, in the spirit of ONEDNN_VERBOSE.
//   STRATA_VERBOSE=0  silent (default)
//   STRATA_VERBOSE=1  one line per decision (which kernel/algorithm and why)
//   STRATA_VERBOSE=2  adds timings
// Lines go to stderr, or to the file named by STRATA_VERBOSE_FILE (appended).
//
//   if (strata::verbose(1)) strata::verbose_write("gemm", strata::cat("kernel=", name));
#pragma once
#include <sstream>
#include <string>
#include <string_view>

namespace strata {

int verbose_level() noexcept;  // read once from the environment, then cached
void set_verbose_level(int level) noexcept;
inline bool verbose(int level) noexcept { return verbose_level() >= level; }

// Writes "strata:<component>: <message>\n" with a single write so lines never interleave.
void verbose_write(std::string_view component, std::string_view message);

// Concatenates anything printable with operator<<.
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace strata
