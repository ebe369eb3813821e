// The process-wide algorithm cache (find_* results), optionally persisted to the file named by
// STRATA_DNN_CACHE so that the search is paid once per machine rather than once per process.
//
// File format: one entry per line, tab-separated:
//   strata-dnn-cache-1 <library version> <key> <algo name> <time ms> <checksum>
// The checksum (FNV-1a over the other fields) catches truncated or edited lines. Lines with a
// bad checksum, an unknown algorithm, another library version or the wrong field count are
// skipped with one warning per file naming how many were ignored; they are never trusted.
#pragma once
#include <optional>
#include <string>

#include "problem.hpp"
#include "strata/dnn/handle.hpp"

namespace strata::dnn::detail {

struct CachedChoice {
  ConvAlgo algo = ConvAlgo::direct;
  double time_ms = 0;
};

// problem + device + ISA + threads + determinism + library version.
std::string cache_key(const ConvProblem& p, const Handle& h);
std::optional<CachedChoice> cache_lookup(const std::string& key);
void cache_store(const std::string& key, const CachedChoice& choice);

}  // namespace strata::dnn::detail
