// The parent side of isolated measurement: prepare everything, fork and exec the helper
// at once, watch its status pipe against per-phase deadlines, and turn how it ended into a
// result (mapping in isolated_measurer.h).
#include "measurer/isolated_measurer.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <utility>

#include "common/errors.h"
#include "measurer/cache_key.h"
#include "measurer/child_environment.h"
#include "measurer/child_protocol.h"
#include "measurer/measure_json.h"

extern char **environ;

namespace protuner {
namespace {

namespace cp = child_protocol;
using Clock = std::chrono::steady_clock;

// How often the watch loop wakes without output to notice a child that exited while
// something else still holds its pipes open.
constexpr auto kPollInterval = std::chrono::milliseconds(200);
// Descriptors handed to the child are first moved at or above this number, so placing them
// at 0..3 in the child never overwrites one still to be placed.
constexpr int kHighFd = 10;
// Without close_range, the child closes descriptors up to this one before exec.
constexpr int kMaxInheritedFd = 4096;

// A descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd &operator=(Fd &&o) noexcept {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

[[noreturn]] void throw_errno(const std::string &what) {
  throw IoError("isolated measurer: " + what + ": " + std::strerror(errno));
}

Fd high_fd(int fd) {
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
  const int saved = errno;
  close(fd);
  errno = saved;
  if (moved < 0) throw_errno("fcntl(F_DUPFD_CLOEXEC)");
  return Fd(moved);
}

std::pair<Fd, Fd> make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2");
  Fd r = high_fd(fds[0]);
  Fd w = high_fd(fds[1]);
  if (fcntl(r.get(), F_SETFL, O_NONBLOCK) != 0) throw_errno("fcntl(O_NONBLOCK)");
  return {std::move(r), std::move(w)};
}

// The request as the child's stdin: an anonymous file, so a large request never blocks
// the parent on a full pipe.
Fd request_file(const std::string &request_json) {
  Fd fd = high_fd(memfd_create("protuner-request", MFD_CLOEXEC));
  size_t done = 0;
  while (done < request_json.size()) {
    const ssize_t n = write(fd.get(), request_json.data() + done, request_json.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno("writing the request");
    done += static_cast<size_t>(n);
  }
  if (lseek(fd.get(), 0, SEEK_SET) != 0) throw_errno("lseek");
  return fd;
}

// Everything the forked child needs, built before fork: after fork only system calls run.
struct SpawnPlan {
  std::vector<std::string> strings;  // owns argv and envp text
  std::vector<char *> argv, envp;
  cpu_set_t cpus;
  rlimit memory{};
};

SpawnPlan make_plan(const std::string &child, const std::string &cache_dir,
                    const std::vector<int> &cpus, const MeasureSettings &settings) {
  SpawnPlan plan;
  std::vector<std::string> args = {child, "--cache-dir", cache_dir};
  std::vector<std::string> own;
  for (char **e = environ; e && *e; ++e) own.emplace_back(*e);
  const std::vector<std::string> env = measure_child_environment(own, static_cast<int>(cpus.size()), settings.allocator);
  plan.strings = args;
  plan.strings.insert(plan.strings.end(), env.begin(), env.end());
  for (size_t i = 0; i < plan.strings.size(); ++i) {
    (i < args.size() ? plan.argv : plan.envp).push_back(plan.strings[i].data());
  }
  plan.argv.push_back(nullptr);
  plan.envp.push_back(nullptr);
  CPU_ZERO(&plan.cpus);
  for (int c : cpus) CPU_SET(c, &plan.cpus);
  plan.memory.rlim_cur = plan.memory.rlim_max = static_cast<rlim_t>(settings.memory_limit_mb) << 20;
  return plan;
}

void place_fd(int from, int to) {
  if (dup2(from, to) < 0) _exit(127);
}

// In the forked child: system calls only (no allocation, no locks), then exec.
[[noreturn]] void exec_child(const SpawnPlan &plan, int request_fd, int status_fd, int output_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
  setpgid(0, 0);
  // A measurer killed outright (SIGKILL, OOM killer) must not leave its candidate running
  // on the cores the next measurer instance times on.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  setrlimit(RLIMIT_AS, &plan.memory);
  sched_setaffinity(0, sizeof(plan.cpus), &plan.cpus);
  place_fd(request_fd, STDIN_FILENO);
  place_fd(output_fd, STDOUT_FILENO);
  place_fd(output_fd, STDERR_FILENO);
  place_fd(status_fd, cp::kStatusFd);
  if (close_range(cp::kStatusFd + 1, ~0U, 0) != 0) {  // kernels before 5.9
    for (int fd = cp::kStatusFd + 1; fd < kMaxInheritedFd; ++fd) close(fd);
  }
  execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  static const char kMessage[] = "protuner-measure-child: execve failed\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  _exit(127);
}

// What the watch loop saw.
struct ChildEnd {
  std::string phase = cp::kPhaseLoad;
  bool started = false;  // the child reported a phase: it runs our code
  bool timed_out = false;
  double timeout_seconds = 0;
  int wait_status = 0;
  std::optional<std::string> result_json;
  std::string output_tail;
};

class ChildWatcher {
 public:
  ChildWatcher(pid_t pid, Fd status, Fd output, const MeasureSettings &settings,
               size_t tail_bytes)
      : pid_(pid), status_(std::move(status)), output_(std::move(output)),
        settings_(settings), tail_bytes_(tail_bytes) {
    enter(cp::kPhaseLoad);
  }

  ChildEnd watch() {
    while (status_.get() >= 0 || output_.get() >= 0) {
      const auto now = Clock::now();
      if (now >= deadline_) return finish(true);
      const auto wait = std::min<Clock::duration>(deadline_ - now, kPollInterval);
      pollfd fds[2] = {{status_.get(), POLLIN, 0}, {output_.get(), POLLIN, 0}};
      const int ready = poll(fds, 2, static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(wait).count() + 1));
      if (ready < 0 && errno != EINTR) throw_errno("poll");
      drain();
      if (ready == 0 && exited()) break;
    }
    // The child exited or closed its pipes; give it until the deadline to be gone.
    while (!exited()) {
      if (Clock::now() >= deadline_) return finish(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    drain();
    return finish(false);
  }

 private:
  void enter(const std::string &phase) {
    end_.phase = phase;
    end_.timeout_seconds = cp::phase_timeout_seconds(phase, settings_);
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(end_.timeout_seconds));
  }

  // Reads whatever is available on both pipes without blocking.
  void drain() {
    char buf[65536];
    for (Fd *fd : {&status_, &output_}) {
      while (fd->get() >= 0) {
        const ssize_t n = read(fd->get(), buf, sizeof(buf));
        if (n > 0) {
          (fd == &status_ ? status_text_ : end_.output_tail).append(buf, static_cast<size_t>(n));
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) fd->reset();
        break;
      }
    }
    if (end_.output_tail.size() > 2 * tail_bytes_) {
      end_.output_tail.erase(0, end_.output_tail.size() - tail_bytes_);
    }
    for (size_t nl; (nl = status_text_.find('\n')) != std::string::npos;) {
      const std::string line = status_text_.substr(0, nl);
      status_text_.erase(0, nl + 1);
      if (line.rfind(cp::kPhasePrefix, 0) == 0) {
        end_.started = true;
        enter(line.substr(std::strlen(cp::kPhasePrefix)));
      } else if (line.rfind(cp::kResultPrefix, 0) == 0) {
        end_.result_json = line.substr(std::strlen(cp::kResultPrefix));
      }
    }
  }

  // Has the child exited? Leaves it unreaped, so its process group id stays ours until
  // finish() has killed the group.
  bool exited() {
    siginfo_t info{};
    if (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return errno == ECHILD;  // already reaped (a caller that ignores SIGCHLD)
    }
    return info.si_pid == pid_;
  }

  ChildEnd finish(bool timed_out) {
    end_.timed_out = timed_out;
    // Kill the whole group: the child on timeout, and anything it left behind otherwise.
    if (kill(-pid_, SIGKILL) != 0 && timed_out) kill(pid_, SIGKILL);
    while (waitpid(pid_, &end_.wait_status, 0) < 0 && errno == EINTR) {
    }
    if (end_.output_tail.size() > tail_bytes_) {
      end_.output_tail.erase(0, end_.output_tail.size() - tail_bytes_);
    }
    return std::move(end_);
  }

  pid_t pid_;
  Fd status_, output_;
  const MeasureSettings &settings_;
  size_t tail_bytes_;
  Clock::time_point deadline_;
  std::string status_text_;
  ChildEnd end_;
};

bool mentions_out_of_memory(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char *needle : {"out of memory", "bad_alloc", "cannot allocate memory",
                             "unable to allocate", "failed to map segment"}) {
    if (text.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string with_tail(std::string error, const std::string &tail) {
  if (tail.empty()) return error;
  return error + "\n--- last output of the measurement process ---\n" + tail;
}

// A death while loading or compiling is Halide or LLVM failing to compile the candidate
// (an internal error, an assertion); later it is the candidate's code.
MeasureStatus crash_status(const std::string &phase) {
  return phase == cp::kPhaseLoad || phase == cp::kPhaseCompile ? MeasureStatus::kCompileError
                                                               : MeasureStatus::kRuntimeCrash;
}

std::string phase_words(const std::string &phase) {
  if (phase == cp::kPhaseLoad) return "while loading and scheduling the pipeline";
  if (phase == cp::kPhaseReference) return "while computing the reference output";
  if (phase == cp::kPhaseCompile) return "while compiling";
  if (phase == cp::kPhaseStrictCheck) return "while checking the output with strict_float";
  return "while running";
}

MeasureResult classify(const ChildEnd &end) {
  MeasureResult r;
  if (end.result_json) {
    try {
      r = result_from_json(*end.result_json);
      if (!r.ok()) r.error = with_tail(r.error, end.output_tail);
      return r;
    } catch (const ConfigError &e) {
      r.status = MeasureStatus::kRuntimeCrash;
      r.error = with_tail(std::string("the measurement process sent an unreadable result: ") +
                              e.what(), end.output_tail);
      return r;
    }
  }
  const int ws = end.wait_status;
  std::string how;
  if (end.timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof(limit), "%g", end.timeout_seconds);
    r.status = MeasureStatus::kTimeout;
    r.error = "timed out " + phase_words(end.phase) + " (the " + end.phase + " phase limit is " +
              limit + " s wall clock); the process group was killed";
    return r;
  }
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == cp::kExitOutOfMemory) {
    r.status = MeasureStatus::kOutOfMemory;
    r.error = with_tail("out of memory " + phase_words(end.phase) +
                            " (operator new failed under the memory limit)", end.output_tail);
    return r;
  }
  if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL) {
    r.status = MeasureStatus::kOutOfMemory;
    r.error = with_tail("killed by SIGKILL " + phase_words(end.phase) +
                            ", not by the measurer: most likely the kernel's OOM killer",
                        end.output_tail);
    return r;
  }
  if (!end.started) {
    // It never ran our code: exec failed (the helper was missing or being rebuilt: exit
    // 127) or the loader refused it. The candidate was never tried.
    r.status = MeasureStatus::kMeasurerError;
    r.error = with_tail(
        std::string("the measurement helper did not start (") +
            (WIFSIGNALED(ws) ? std::string("signal ") + strsignal(WTERMSIG(ws))
                             : "exit code " + std::to_string(WEXITSTATUS(ws))) +
            "); the candidate was not measured",
        end.output_tail);
    return r;
  }
  how = WIFSIGNALED(ws) ? std::string("died of signal ") + std::to_string(WTERMSIG(ws)) + " (" +
                              strsignal(WTERMSIG(ws)) + ")"
                        : "exited with code " + std::to_string(WEXITSTATUS(ws)) +
                              " without a result";
  r.status = mentions_out_of_memory(end.output_tail) ? MeasureStatus::kOutOfMemory
                                                     : crash_status(end.phase);
  r.error = with_tail("the measurement process " + how + " " + phase_words(end.phase),
                      end.output_tail);
  return r;
}

std::vector<int> own_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) throw_errno("sched_getaffinity");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::string cpu_list(const std::vector<int> &cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

IsolatedMeasurerOptions resolved(IsolatedMeasurerOptions o) {
  if (o.child_executable.empty()) o.child_executable = default_child_executable();
  if (access(o.child_executable.c_str(), X_OK) != 0) {
    throw ConfigError("isolated measurer: the helper executable '" + o.child_executable +
                      "' is missing or not executable (build the protuner-measure-child target, "
                      "or set IsolatedMeasurerOptions::child_executable)");
  }
  const std::vector<int> allowed = own_cpus();
  if (o.cpus.empty()) o.cpus = allowed;
  std::sort(o.cpus.begin(), o.cpus.end());
  o.cpus.erase(std::unique(o.cpus.begin(), o.cpus.end()), o.cpus.end());
  for (int c : o.cpus) {
    if (!std::binary_search(allowed.begin(), allowed.end(), c)) {
      throw ConfigError("isolated measurer: CPU " + std::to_string(c) +
                        " is not available to this process (allowed: " + cpu_list(allowed) + ")");
    }
  }
  if (o.cache_dir.empty()) o.cache_dir = default_cache_dir();
  ensure_directory(o.cache_dir);
  if (o.smt_override && *o.smt_override != "on" && *o.smt_override != "off") {
    throw ConfigError("isolated measurer: smt_override must be \"on\" or \"off\", not \"" +
                      *o.smt_override + "\"");
  }
  return o;
}

}  // namespace

std::string default_child_executable() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return cp::kExecutableName;
  return (self.parent_path() / cp::kExecutableName).string();
}

IsolatedMeasurer::IsolatedMeasurer(IsolatedMeasurerOptions options)
    : options_(resolved(std::move(options))),
      host_(detect_host_facts()),
      cache_(options_.cache_dir) {
  if (options_.smt_override) host_.smt = *options_.smt_override;
  host_target_ = host_.halide_target;
  spdlog::debug("isolated measurer: helper {}, cpus {}, cache {}, smt {}",
                options_.child_executable, cpu_list(options_.cpus), options_.cache_dir, host_.smt);
}

MeasureResult IsolatedMeasurer::measure(const MeasureRequest &request) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (host_.smt == "on") {
    if (request.settings.require_smt_off) {
      MeasureResult r;
      r.status = MeasureStatus::kBadRequest;
      r.host = host_;
      r.cpus = options_.cpus;
      r.error = "refusing to measure: SMT is on (/sys/devices/system/cpu/smt/active) and the "
                "request sets require_smt_off; turn SMT off (echo off > "
                "/sys/devices/system/cpu/smt/control) or measure without require_smt_off";
      return r;
    }
    static std::once_flag warned;
    std::call_once(warned, [] {
      spdlog::warn("SMT is on: sibling hyper-threads share cores, so runtimes are noisier; "
                   "the farm's measurers run with SMT off (require_smt_off)");
    });
  }
  const std::string target = request.target == "host" ? host_target_ : request.target;
  const std::string key =
      measurement_key(request, target, host_class_key(host_, static_cast<int>(options_.cpus.size())));
  if (options_.use_result_cache) {
    if (auto hit = cache_.find(key)) return *hit;
  }
  MeasureResult result = measure_uncached(request);
  result.cpus = options_.cpus;
  if (options_.smt_override) result.host.smt = *options_.smt_override;
  if (options_.use_result_cache) cache_.store(key, result);
  return result;
}

MeasureResult IsolatedMeasurer::measure_uncached(const MeasureRequest &request) {
  const SpawnPlan plan =
      make_plan(options_.child_executable, options_.cache_dir, options_.cpus, request.settings);
  Fd request_fd = request_file(request_to_json(request));
  auto [status_r, status_w] = make_pipe();
  auto [output_r, output_w] = make_pipe();

  const pid_t pid = fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) exec_child(plan, request_fd.get(), status_w.get(), output_w.get());
  setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  request_fd.reset();
  status_w.reset();
  output_w.reset();

  ChildWatcher watcher(pid, std::move(status_r), std::move(output_r), request.settings,
                       options_.stderr_tail_bytes);
  ChildEnd end;
  try {
    end = watcher.watch();
  } catch (...) {  // poll failed: leave no child behind
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw;
  }
  // What the child compiled, whether it finished or was killed.
  std::error_code ec;
  std::filesystem::remove_all(candidate_dir(options_.cache_dir, pid), ec);
  MeasureResult result = classify(end);
  if (result.host.cpu_model.empty()) result.host = host_;
  result.allocator = request.settings.allocator;
  return result;
}

}  // namespace protuner
