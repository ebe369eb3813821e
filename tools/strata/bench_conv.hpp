// `strata bench conv`: registered under the `bench` subcommand by cmd_bench.cpp.
#pragma once
#include <CLI/CLI.hpp>

namespace strata::cli {

void add_bench_conv_command(CLI::App& bench, int& exit_code);  // cmd_bench_conv.cpp

}  // namespace strata::cli
