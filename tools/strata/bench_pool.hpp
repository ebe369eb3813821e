// `strata bench pool`: registered under the `bench` subcommand by cmd_bench.cpp.
#pragma once
#include <CLI/CLI.hpp>

namespace strata::cli {

void add_bench_pool_command(CLI::App& bench, int& exit_code);  // cmd_bench_pool.cpp

}  // namespace strata::cli
