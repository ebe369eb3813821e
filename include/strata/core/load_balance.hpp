// Load-aware shares for the pool's parts: how much of a job each thread should take so that all
// finish together, learnt from how long recent jobs' parts took.
//
// Equal shares assume equal cores. They are not always: a core whose sibling hyperthread or
// host neighbour is busy (a VM's vCPU), a hybrid CPU's efficiency core, or a core shared with
// another process runs its part slower, and a statically split job then waits for it (on the
// 2-core VM these numbers come from, the caller's thread spent ~11% of a 2-thread GEMM waiting
// for the worker in the host's slow phases). Callers whose results do not depend on where the
// borders fall (the GEMM engine: borders on whole micro-tiles) ask balanced_shares for the
// split and run it with parallel_run_timed, which times each part and updates each thread's
// relative speed. Results never depend on the shares; only the time does.
#pragma once
#include <functional>

namespace strata {

// Parts beyond this count are split equally and not timed.
inline constexpr int kMaxBalancedParts = 64;

// Fills shares[0, parts) (summing to 1) in proportion to the pool threads' learnt speeds: part p
// runs on pool thread p (0: the caller). Equal while nothing is learnt, when balancing is off
// (set_load_balancing, STRATA_LOAD_BALANCE=0), or for more than kMaxBalancedParts parts.
void balanced_shares(int parts, double* shares);

// parallel_run(parts, body), timing each part; shares[p]: the fraction of the work part p was
// given. Learns from jobs whose parts ran on distinct threads and each took at least
// kMinTimedSeconds (shorter parts are dominated by wake-up and timer noise).
inline constexpr double kMinTimedSeconds = 20e-6;
void parallel_run_timed(int parts, const double* shares, const std::function<void(int part)>& body);

// Turns learning and unequal shares on or off (default: on unless STRATA_LOAD_BALANCE=0); what
// was learnt is kept while off.
void set_load_balancing(bool on);
bool load_balancing();

// Sets the relative speeds of pool threads 0..count-1 (the caller first), as if learnt: for a
// machine whose cores are known to differ, and for tests. Learning goes on from there.
void set_thread_speeds(const double* speeds, int count);

}  // namespace strata
