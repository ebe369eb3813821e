#include "algo_cache.hpp"

#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "strata/core/env.hpp"
#include "strata/core/log.hpp"
#include "strata/core/version.hpp"

namespace strata::dnn::detail {

namespace {

constexpr const char* kMagic = "strata-dnn-cache-1";

std::string checksum(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : line) {
    if (ch == '\t') out.push_back(cur), cur.clear();
    else cur += ch;
  }
  out.push_back(cur);
  return out;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, CachedChoice> entries;
  bool loaded = false;
  std::string file;  // empty: memory only

  void load_locked() {
    if (loaded) return;
    loaded = true;
    file = env_string("STRATA_DNN_CACHE").value_or("");
    if (file.empty()) return;
    std::ifstream in(file);
    if (!in) return;  // no file yet: the first find_* creates it
    std::string line;
    int bad = 0, stale = 0, good = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const auto f = split_tabs(line);
      if (f.size() != 6 || f[0] != kMagic) { ++bad; continue; }
      if (checksum(f[0] + '\t' + f[1] + '\t' + f[2] + '\t' + f[3] + '\t' + f[4]) != f[5]) { ++bad; continue; }
      if (f[1] != version_string()) { ++stale; continue; }
      CachedChoice c;
      try {
        c.algo = parse_conv_algo(f[3]);
        c.time_ms = std::stod(f[4]);
      } catch (...) {
        ++bad;
        continue;
      }
      entries[f[2]] = c;
      ++good;
    }
    if (bad || stale)
      verbose_write("dnn", cat("warning: algorithm cache ", file, ": ignored ", bad, " corrupt and ", stale,
                               " stale (other library version) entries; kept ", good));
    else if (verbose(1))
      verbose_write("dnn", cat("algorithm cache ", file, ": loaded ", good, " entries"));
  }
};

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

std::string cache_key(const ConvProblem& p, const Handle& h) {
  return cat(p.key(), " | dev=", h.device().name(), " isa=", isa_name(p.isa), " t=", p.threads,
             p.deterministic ? " det" : " fast");
}

std::optional<CachedChoice> cache_lookup(const std::string& key) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.load_locked();
  auto it = c.entries.find(key);
  if (it == c.entries.end()) return std::nullopt;
  return it->second;
}

void cache_store(const std::string& key, const CachedChoice& choice) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.load_locked();
  c.entries[key] = choice;
  if (c.file.empty()) return;
  std::ostringstream fields;
  fields << kMagic << '\t' << version_string() << '\t' << key << '\t' << conv_algo_name(choice.algo) << '\t'
         << choice.time_ms;
  const std::string body = fields.str();
  std::ofstream out(c.file, std::ios::app);
  if (!out) {
    verbose_write("dnn", cat("warning: cannot append to algorithm cache ", c.file, "; keeping the choice in memory"));
    return;
  }
  // One write per line, so concurrent processes appending to the file do not interleave mid-line.
  const std::string line = body + '\t' + checksum(body) + '\n';
  out.write(line.data(), std::streamsize(line.size()));
}

}  // namespace strata::dnn::detail

namespace strata::dnn {

void clear_algorithm_cache(bool also_file) {
  auto& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mu);
  if (also_file && !c.file.empty()) std::remove(c.file.c_str());
  c.entries.clear();
  c.loaded = false;  // the next use reads STRATA_DNN_CACHE again
}

std::size_t algorithm_cache_size() {
  auto& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.load_locked();
  return c.entries.size();
}

}  // namespace strata::dnn
