#include "strata/core/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "strata/core/env.hpp"

namespace strata {

namespace {
std::atomic<int> g_level{-1};
std::mutex g_write_mutex;
}  // namespace

int verbose_level() noexcept {
  int level = g_level.load(std::memory_order_relaxed);
  if (level < 0) {
    try {
      level = int(env_int("STRATA_VERBOSE", 0));
    } catch (const std::exception&) {
      level = 1;  // a malformed value still means the user asked for output
    }
    g_level.store(level, std::memory_order_relaxed);
  }
  return level;
}

void set_verbose_level(int level) noexcept { g_level.store(level < 0 ? 0 : level); }

void verbose_write(std::string_view component, std::string_view message) {
  std::string line = "strata:";
  line.append(component).append(": ").append(message).push_back('\n');
  std::lock_guard lock(g_write_mutex);
  static FILE* out = [] {
    const char* path = std::getenv("STRATA_VERBOSE_FILE");
    if (path && *path)
      if (FILE* f = std::fopen(path, "a")) return f;
    return stderr;
  }();
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace strata
