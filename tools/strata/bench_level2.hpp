// `strata bench level2`: registered under the `bench` subcommand by cmd_bench.cpp.
#pragma once
#include <CLI/CLI.hpp>

namespace strata::cli {

void add_bench_level2_command(CLI::App& bench, int& exit_code);  // cmd_bench_level2.cpp

}  // namespace strata::cli
