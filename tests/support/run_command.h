// Running a command line the way a user would, for tests of executables (the CLI, Halide's
// generator driver, a compiler): its combined stdout and stderr, and its exit code.
#pragma once

#include <string>

namespace protuner::testing {

struct CommandResult {
  std::string output;  // stdout and stderr, interleaved
  int exit_code = -1;  // -1 when it did not exit normally (or could not start)
};

// Runs `command` through /bin/sh with stderr joined to stdout.
CommandResult run_command(const std::string &command);

}  // namespace protuner::testing
