// ChildProcess (child_process.h): fork, exec with redirected output, signal, reap.
#include "common/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/errors.h"

namespace protuner {

ChildProcess::ChildProcess(std::vector<std::string> argv, ChildProcessOptions options)
    : log_path_(std::move(options.log_path)) {
  if (argv.empty()) throw ConfigError("ChildProcess: no program to run");
  std::vector<char *> args;
  for (std::string &a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : options.cpus) CPU_SET(cpu, &set);
  const pid_t parent = getpid();
  const char *log = log_path_.empty() ? "/dev/null" : log_path_.c_str();
  pid_ = fork();
  if (pid_ < 0) throw IoError(std::string("cannot fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Only async-signal-safe calls from here to exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    const int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    if (!options.cpus.empty()) sched_setaffinity(0, sizeof(set), &set);
    execv(args[0], args.data());
    const char message[] = "ChildProcess: exec failed\n";
    (void)!write(STDERR_FILENO, message, sizeof(message) - 1);
    _exit(127);
  }
}

ChildProcess::~ChildProcess() { kill(); }

void ChildProcess::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

void ChildProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  do {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    if (pid_ <= 0) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return std::nullopt;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  signal(SIGTERM);
  if (const auto status = wait(grace)) return *status;
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

std::string ChildProcess::log() const {
  if (log_path_.empty()) return "";
  std::ifstream in(log_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace protuner
