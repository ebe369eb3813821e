// Choosing an algorithm: the heuristic ranking (get_*), measurement (find_*) and the choice
// the convenience entry points use (cache, else heuristic).
#pragma once
#include <vector>

#include "dispatch.hpp"

namespace strata::dnn::detail {

// With p.filter_prepared, ranked as calls with a prepared filter run (no per-call filter
// transform in the estimates or the workspace).
std::vector<AlgoPerf> rank_by_heuristic(const Handle& h, const ConvProblem& p, const ConvDescs& d);
// prepared: time calls with the filter prepared (forward, f32; the preparation is not timed),
// report their workspace, and cache the winner under prepared_cache_key.
std::vector<AlgoPerf> rank_by_measurement(const Handle& h, const ConvProblem& p, const ConvDescs& d,
                                          bool prepared = false);
std::string prepared_cache_key(const ConvProblem& p, const Handle& h);
// Filters are prepared for f32 forward convolutions only: throws not_supported naming "w".
void check_preparable(const ConvProblem& p);

struct Choice {
  ConvAlgo algo;
  std::size_t workspace;
  std::string why;
};
// The algorithm the handle would run now: a cached find_* result when it is still usable
// within the budget, else the best heuristic answer. Throws insufficient_workspace naming
// "workspace_budget" when nothing fits.
Choice choose_algorithm(const Handle& h, const ConvProblem& p, const ConvDescs& d);
// The algorithm to prepare a filter for: a cached prepared find result, else the heuristic's
// first usable answer for prepared filters (same errors as choose_algorithm).
ConvAlgo choose_prepared_algorithm(const Handle& h, const ConvProblem& p, const ConvDescs& d);

}  // namespace strata::dnn::detail
