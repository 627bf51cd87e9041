// The embedded farm of `protuner up` (local_farm.h): its processes, its progress lines and
// its final report.
#include "coordinator/local_farm.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "common/child_process.h"
#include "common/errors.h"
#include "common/farm/redis_schema.h"
#include "common/loopback_port.h"
#include "common/redis_client.h"
#include "common/suite.h"
#include "coordinator/farm_report.h"
#include "coordinator/submit.h"
#include "coordinator/text_table.h"

namespace protuner {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// How long each daemon gets to stop after SIGTERM before it is killed: the searcher hands
// its job back, Redis flushes its AOF.
constexpr milliseconds kStopGrace{15000};
// How long Redis may take to answer after it starts (an AOF to load).
constexpr milliseconds kRedisStartTimeout{20000};
// `protuner schedule` loads the app and rebuilds its schedule: seconds, for large apps.
constexpr milliseconds kScheduleSourceTimeout{120000};

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i) {
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
    }
  }
  return cpus;
}

std::string join(const std::vector<int> &v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

std::string minutes_text(int64_t ms) {
  const int64_t s = std::max<int64_t>(0, ms / 1000);
  return std::to_string(s / 60) + ":" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60);
}

int64_t unix_ms() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The farm's processes, stopped in order (searcher first, Redis last) when it goes.
class LocalFarm {
 public:
  LocalFarm(const fs::path &data, const std::string &self, const LocalFarmOptions &options)
      : data_(data) {
    fs::create_directories(data / "redis");
    fs::create_directories(data / "logs");
    const fs::path bin = fs::path(self).parent_path();
    const int redis_port = free_loopback_port();
    redis_url_ = "redis://127.0.0.1:" + std::to_string(redis_port);
    start("redis", {PROTUNER_REDIS_SERVER, "--port", std::to_string(redis_port), "--bind",
                    "127.0.0.1", "--dir", (data / "redis").string(), "--appendonly", "yes",
                    "--appendfsync", "always", "--save", "", "--daemonize", "no"},
          {});
    wait_for_redis(redis_port);

    // The measurer on a CPU of its own where there are two or more.
    const std::vector<int> cpus = allowed_cpus();
    std::vector<int> measurer_cpus = cpus, search_cpus = cpus;
    if (cpus.size() >= 2) {
      measurer_cpus = {cpus.back()};
      search_cpus.pop_back();
    }
    const std::string measurer =
        "tcp://127.0.0.1:" + std::to_string(free_loopback_port());
    // Serving this farm: registered in its Redis, loading only the libraries submitted.
    std::vector<std::string> measurerd{(bin / "protuner-measurerd").string(), "--bind",
                                       measurer, "--cache-dir",
                                       (data / "measurer-cache").string(), "--redis",
                                       redis_url_, "--name", "local-measurer"};
    if (!measurer_cpus.empty()) {
      measurerd.insert(measurerd.end(), {"--cpus", join(measurer_cpus)});
    }
    start("measurer", measurerd, {});
    start("coordinator", {self, "coordinator", "--redis", redis_url_, "--name", "local-coordinator"},
          search_cpus);
    // The searchers find the measurer in the registry, as a farm's searchers do, so each app
    // keeps the measurer's host class and a suite run again reads the farm-wide cache.
    for (int i = 1; i <= options.searchers; ++i) {
      const std::string name = i == 1 ? "searcher" : "searcher-" + std::to_string(i);
      start(name,
            {self, "searcher", "--redis", redis_url_, "--name", "local-" + name, "--cores",
             std::to_string(std::max<size_t>(1, measurer_cpus.size())), "--library-cache",
             (data / "libraries").string(), "--join", farm::join_policy_name(options.join)},
            search_cpus);
    }
    spdlog::info("up: farm in {} (Redis {}, measurer {} on CPU {}, {} searcher(s) on CPU {}, "
                 "joining {}); logs in {}",
                 data.string(), redis_url_, measurer, join(measurer_cpus), options.searchers,
                 join(search_cpus), farm::join_policy_name(options.join),
                 (data / "logs").string());
  }

  ~LocalFarm() {
    for (auto it = processes_.rbegin(); it != processes_.rend(); ++it) {
      const int status = it->second->stop(kStopGrace);
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        spdlog::warn("up: the {} stopped with status {} (its log: {})", it->first, status,
                     log_path(it->first));
      }
    }
  }

  const std::string &redis_url() const { return redis_url_; }

  // Throws IoError naming the daemon and its log when one of them has exited.
  void check_alive() {
    for (auto &[name, process] : processes_) {
      if (const auto status = process->wait(milliseconds(0))) {
        throw IoError("up: the " + name + " exited (status " + std::to_string(*status) +
                      "); its log: " + log_path(name));
      }
    }
  }

 private:
  std::string log_path(const std::string &name) const {
    return (data_ / "logs" / (name + ".log")).string();
  }

  void start(const std::string &name, std::vector<std::string> argv, std::vector<int> cpus) {
    ChildProcessOptions options;
    options.log_path = log_path(name);
    options.cpus = std::move(cpus);
    processes_.emplace_back(name, std::make_unique<ChildProcess>(std::move(argv), options));
  }

  void wait_for_redis(int port) {
    const auto deadline = std::chrono::steady_clock::now() + kRedisStartTimeout;
    for (;;) {
      try {
        RedisClient probe("127.0.0.1", port);
        if (probe.ping()) return;
      } catch (const Error &) {
      }
      check_alive();
      if (std::chrono::steady_clock::now() > deadline) {
        throw IoError("up: redis-server did not answer within " +
                      std::to_string(kRedisStartTimeout.count() / 1000) + " s; its log: " +
                      log_path("redis"));
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
  }

  fs::path data_;
  std::string redis_url_;
  std::vector<std::pair<std::string, std::unique_ptr<ChildProcess>>> processes_;
};

// The unfinished suite of this name in the farm, if any: the latest one submitted.
std::optional<std::string> unfinished_suite(RedisClient &redis, const std::string &name) {
  const std::vector<std::string> ids = farm::suite_ids(redis);
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    if (read_suite(redis, *it).name != name) continue;
    const std::string phase = read_suite_phase(redis, *it);
    if (phase == "done" || phase == "cancelled") return std::nullopt;
    return *it;
  }
  return std::nullopt;
}

// One line per app whose phase, counters or best changed since the last call.
class ProgressPrinter {
 public:
  void print(const FarmSuiteReport &report) {
    for (const FarmAppReport &a : report.apps) {
      if (!a.state) continue;
      const farm::AppState &s = *a.state;
      std::string line = fmt::format("{:<16} {:<9} {:>4} measured", a.app.name,
                                     farm::app_phase_name(s.phase), s.measurements);
      if (s.failures > 0) line += fmt::format(" ({} failed)", s.failures);
      if (s.best_ms) line += fmt::format(", best {:.3f} ms", *s.best_ms);
      const auto adams = a.speedups.find("Adams2019");
      if (adams != a.speedups.end()) line += fmt::format(" ({:.2f}x Adams2019)", adams->second);
      if (last_[a.app.name] == line) continue;
      last_[a.app.name] = line;
      std::string clock;
      if (s.started_ms && !farm::is_final(s.phase)) {
        clock = "  " + minutes_text(unix_ms() - *s.started_ms) + " of " +
                minutes_text(s.budget_ms);
      }
      std::cout << "  " << line << clock << "\n" << std::flush;
    }
  }

 private:
  std::map<std::string, std::string> last_;
};

// Writes report.json and each app's best schedule. The C++ source is made by `protuner
// schedule` in a child process: it loads the app's library from the farm's cache, and this
// process has loaded the same generators from the suite's paths (a second copy of a
// generator library in one process is an error in Halide).
void write_results(const FarmSuiteReport &report, const fs::path &out, const std::string &self,
                   const std::string &redis_url, const fs::path &library_cache) {
  fs::create_directories(out);
  std::ofstream(out / "report.json") << suite_report_json(report).dump(2) << "\n";
  for (const FarmAppReport &a : report.apps) {
    if (!a.best) continue;
    const fs::path dir = out / a.app.name;
    fs::create_directories(dir);
    std::ofstream(dir / "schedule.json") << a.best->schedule_json << "\n";
    const fs::path partial = dir / "schedule.h.partial";
    fs::remove(partial);
    ChildProcessOptions options;
    options.log_path = partial.string();
    ChildProcess schedule({self, "--log-level", "error", "schedule", report.suite.id, a.app.name,
                           "--redis", redis_url, "--library-cache", library_cache.string()},
                          options);
    const auto status = schedule.wait(kScheduleSourceTimeout);
    if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) {
      fs::rename(partial, dir / "schedule.h");
      continue;
    }
    std::ifstream in(partial);
    std::string why((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    spdlog::warn("up: {}: no C++ source written: {}", a.app.name,
                 status ? why : std::string("protuner schedule took too long"));
    fs::remove(partial);
  }
}

}  // namespace

std::string default_farm_data_dir() {
  if (const char *xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/protuner/farm";
  }
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/share/protuner/farm";
}

int run_local_farm(const LocalFarmOptions &options, const std::atomic<bool> &stop) {
  Suite suite = parse_suite_file(options.suite_path);
  validate_suite_apps(suite);  // before any process starts
  const fs::path data = options.data_dir.empty() ? default_farm_data_dir() : options.data_dir;
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw IoError("up: cannot find the protuner executable: " + ec.message());

  if (options.searchers < 1) {
    throw ConfigError("up: --searchers is " + std::to_string(options.searchers) +
                      "; the farm needs at least one");
  }
  LocalFarm farm(data, self, options);
  RedisClient redis(parse_redis_url(farm.redis_url()));
  farm::check_layout(redis);
  std::string id;
  if (const auto resumed = unfinished_suite(redis, suite.name)) {
    id = *resumed;
    std::cout << "resuming suite '" << suite.name << "' (" << id << ") from " << data.string()
              << "\n";
  } else {
    id = store_suite(redis, suite).id;
    std::cout << "submitted suite '" << suite.name << "' (" << id << "): "
              << suite.apps.size() << " apps\n";
  }
  ProgressPrinter progress;
  FarmSuiteReport report;
  for (;;) {
    farm.check_alive();
    report = read_suite_report(redis, id);
    progress.print(report);
    if (report.phase == "done" || report.phase == "cancelled") break;
    const auto wake = std::chrono::steady_clock::now() + options.progress_interval;
    while (!stop.load() && std::chrono::steady_clock::now() < wake) {
      std::this_thread::sleep_for(milliseconds(50));
    }
    if (stop.load()) {
      std::cout << "stopping the farm; run the same command again to resume suite " << id
                << "\n";
      return 130;
    }
  }
  std::cout << "\n";
  print_suite_report(report, std::cout);
  write_results(report, options.out_dir, self, farm.redis_url(), data / "libraries");
  std::cout << "\nschedules: " << (fs::path(options.out_dir) / "<app>" / "schedule.h").string()
            << " (and schedule.json); the report as JSON: "
            << (fs::path(options.out_dir) / "report.json").string() << "\n";
  for (const FarmAppReport &a : report.apps) {
    if (!a.state || a.state->phase != farm::AppPhase::kDone) return 1;
  }
  return 0;
}

}  // namespace protuner
