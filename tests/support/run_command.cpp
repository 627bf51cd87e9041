#include "tests/support/run_command.h"

#include <sys/wait.h>

#include <cstdio>

namespace protuner::testing {

CommandResult run_command(const std::string &command) {
  CommandResult r;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) {
    r.output = "popen failed for: " + command;
    return r;
  }
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace protuner::testing
