// Choosing an algorithm: the heuristic ranking (get_*), measurement (find_*) and the choice
// the convenience entry points use (cache, else heuristic).
#pragma once
#include <vector>

#include "dispatch.hpp"

namespace strata::dnn::detail {

std::vector<AlgoPerf> rank_by_heuristic(const Handle& h, const ConvProblem& p, const ConvDescs& d);
std::vector<AlgoPerf> rank_by_measurement(const Handle& h, const ConvProblem& p, const ConvDescs& d);

struct Choice {
  ConvAlgo algo;
  std::size_t workspace;
  std::string why;
};
// The algorithm the handle would run now: a cached find_* result when it is still usable
// within the budget, else the best heuristic answer. Throws insufficient_workspace naming
// "workspace_budget" when nothing fits.
Choice choose_algorithm(const Handle& h, const ConvProblem& p, const ConvDescs& d);

}  // namespace strata::dnn::detail
