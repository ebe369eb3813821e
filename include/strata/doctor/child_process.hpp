// Runs a program in a child process with a deadline and captures its output (bounded), so
// that anything that might hang or crash (libcuda's cuInit, `import torch`) never runs in the
// doctor's own process.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace strata::doctor {

struct ChildResult {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;     // valid when exited normally
  int signal = 0;         // killed by this signal (0: none)
  std::string out, err;   // at most max_output bytes each
  std::string error;      // why it could not start
  double seconds = 0;
};

// argv[0] is the program path (no PATH search). `env` replaces the environment entirely.
ChildResult run_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                      double timeout_s, std::size_t max_output = 1 << 20);

}  // namespace strata::doctor
