// strata: one command for the whole project (info, doctor, bench).
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "strata/core/status.hpp"
#include "strata/core/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"strata: open base libraries for GPU/CPU compute, and a doctor for the stack"};
  app.set_version_flag("--version", std::string("strata ") + strata::version_string());
  app.require_subcommand(0, 1);
  int exit_code = 0;
  strata::cli::add_info_command(app, exit_code);
#ifdef STRATA_CLI_DOCTOR
  strata::cli::add_doctor_command(app, exit_code);
#endif
#ifdef STRATA_CLI_BENCH
  strata::cli::add_bench_command(app, exit_code);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the usage hint
    return 2;
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.status() == strata::Status::invalid_argument ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: %s\n", e.what());
    return 1;
  }
  if (argc == 1) {
    std::printf("%s", app.help().c_str());
    return 0;
  }
  return exit_code;
}
