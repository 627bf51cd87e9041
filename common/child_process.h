// A daemon started as a child process: `protuner up` runs redis-server, a measurer, a
// coordinator and a searcher this way, and the farm's tests run the same daemons. Its
// output goes to a log file; it can be pinned to CPUs, runs in its own process group (a
// Ctrl-C at the terminal reaches the parent alone, which stops its children in order), is
// sent SIGTERM if the parent dies (so an embedded farm never outlives its command), and is
// stopped with SIGTERM (a clean stop) or SIGKILL (a crash), and waited for with a timeout. The destructor SIGKILLs it
// if it still runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace protuner {

struct ChildProcessOptions {
  // Its stdout and stderr are appended here; empty: /dev/null.
  std::string log_path;
  // CPUs to pin it to (sched_setaffinity); empty: the parent's.
  std::vector<int> cpus;
};

class ChildProcess {
 public:
  // Starts argv[0] (a path) with argv. Throws IoError when fork fails; an exec that fails
  // shows as exit status 127 and a line in the log.
  ChildProcess(std::vector<std::string> argv, ChildProcessOptions options = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;

  pid_t pid() const { return pid_; }
  // Whether it has not been reaped (it may have exited since the last wait()).
  bool running() const { return pid_ > 0; }
  void signal(int sig) const;
  // SIGKILL and reap.
  void kill();
  // The exit status (waitpid's), or nullopt if it still runs after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL if it has not exited within `grace`; returns the exit status.
  int stop(std::chrono::milliseconds grace);
  // What it has written to its log so far ("" without one).
  std::string log() const;

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

}  // namespace protuner
