// A daemon the test starts as a child process (protuner-measurerd, protuner coordinator,
// protuner searcher): started from an argv, its output appended to a log file the test can
// print on failure, signalled (SIGTERM for a clean stop, SIGKILL for a crash), and waited
// for with a timeout. The destructor SIGKILLs it if it still runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace protuner::testing {

class ChildProcess {
 public:
  // Starts argv[0] with its stdout and stderr appended to `log_path`. Throws
  // std::runtime_error when fork fails.
  ChildProcess(std::vector<std::string> argv, std::string log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;

  bool running() const { return pid_ > 0; }
  void signal(int sig) const;
  // SIGKILL and reap.
  void kill();
  // The exit status (waitpid's), or nullopt if it still runs after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // What it has written so far.
  std::string log() const;

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

}  // namespace protuner::testing
