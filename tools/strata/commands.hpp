// Each subcommand of the `strata` CLI lives in its own cmd_<name>.cpp and registers itself here.
// A command's callback sets `exit_code` (0 ok, 1 problem found, 2 usage error).
#pragma once
#include <CLI/CLI.hpp>

namespace strata::cli {

void add_info_command(CLI::App& app, int& exit_code);
void add_doctor_command(CLI::App& app, int& exit_code);  // cmd_doctor.cpp
void add_bench_command(CLI::App& app, int& exit_code);   // cmd_bench.cpp

}  // namespace strata::cli
