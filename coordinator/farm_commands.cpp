// The farm's subcommands (farm_commands.h): options, signal handling and the status table.
#include "coordinator/farm_commands.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <iostream>
#include <memory>
#include <thread>

#include "common/errors.h"
#include "common/metrics_server.h"
#include "common/farm/app_state.h"
#include "common/farm/job_queue.h"
#include "common/farm/redis_schema.h"
#include "common/farm/suite_record.h"
#include "common/redis_client.h"
#include "common/redis_options.h"
#include "common/stop_signals.h"
#include "coordinator/coordinator_daemon.h"
#include "coordinator/farm_report.h"
#include "coordinator/local_farm.h"
#include "coordinator/redis_option.h"
#include "measurer/cache_key.h"
#include "searcher/daemon/searcher_daemon.h"

namespace protuner {

struct FarmCommands::Args {
  std::string redis = kDefaultRedisUrl;
  // coordinator
  CoordinatorOptions coordinator;
  int64_t lease_ms = 0, tick_ms = 0;
  // searcher
  SearcherDaemonOptions searcher;
  int64_t reclaim_after_ms = 0, heartbeat_ms = 0;
  std::string join_policy = farm::join_policy_name(SearcherDaemonOptions().join.policy);
  // up
  LocalFarmOptions up;
  // status, report, schedule, cancel
  std::string suite, app, format = "cpp", library_cache;
  bool json = false;
  double watch_seconds = 0;
  // coordinator and searcher: /metrics on 127.0.0.1; -1: none
  int metrics_port = -1;
};

namespace {

// The daemon a signal stops; each stop() is one lock-free atomic store.
std::atomic<CoordinatorDaemon *> g_coordinator{nullptr};
std::atomic<SearcherDaemon *> g_searcher{nullptr};
std::atomic<bool> g_up_stop{false};

extern "C" void on_farm_stop_signal(int) {
  if (CoordinatorDaemon *c = g_coordinator.load()) c->stop();
  if (SearcherDaemon *s = g_searcher.load()) s->stop();
  g_up_stop.store(true);
}

// The daemon's /metrics endpoint on 127.0.0.1, when a port was given.
std::unique_ptr<MetricsServer> metrics_server(int port, const char *daemon) {
  if (port < 0) return nullptr;
  auto server = std::make_unique<MetricsServer>("127.0.0.1:" + std::to_string(port));
  spdlog::info("{}: metrics on port {}", daemon, server->port());
  return server;
}

void add_metrics_option(CLI::App *cmd, int &port) {
  cmd->add_option("--metrics-port", port,
                  "port for Prometheus /metrics on 127.0.0.1 (0: any free port; default: no "
                  "metrics endpoint)")
      ->check(CLI::NonNegativeNumber);
}

void add_join_option(CLI::App *cmd, std::string &policy) {
  cmd->add_option("--join", policy,
                  "with the queue empty, a searcher adds a job to the running app that is "
                  "improving fastest (adaptive), that has the fewest unfinished jobs "
                  "(round-robin), or waits (off)")
      ->check(CLI::IsMember({"adaptive", "round-robin", "off"}))
      ->capture_default_str();
}

// Runs `daemon` until a signal stops it through `slot`.
template <class Daemon>
int run_until_signalled(Daemon &daemon, std::atomic<Daemon *> &slot) {
  slot.store(&daemon);
  install_stop_handler(on_farm_stop_signal);
  daemon.run();
  slot.store(nullptr);
  return 0;
}

int run_coordinator(FarmCommands::Args &a) {
  if (a.lease_ms > 0) a.coordinator.lease = std::chrono::milliseconds(a.lease_ms);
  if (a.tick_ms > 0) a.coordinator.tick = std::chrono::milliseconds(a.tick_ms);
  const auto metrics = metrics_server(a.metrics_port, "coordinator");
  CoordinatorDaemon daemon(parse_redis_url(a.redis), a.coordinator,
                           metrics ? &metrics->registry() : nullptr);
  return run_until_signalled(daemon, g_coordinator);
}

int run_searcher(FarmCommands::Args &a) {
  if (a.reclaim_after_ms > 0) {
    a.searcher.queue.reclaim_after = std::chrono::milliseconds(a.reclaim_after_ms);
  }
  if (a.heartbeat_ms > 0) a.searcher.heartbeat_interval = std::chrono::milliseconds(a.heartbeat_ms);
  a.searcher.join.policy = farm::parse_join_policy(a.join_policy, "--join");
  const auto metrics = metrics_server(a.metrics_port, "searcher");
  SearcherDaemon daemon(parse_redis_url(a.redis), a.searcher,
                        metrics ? &metrics->registry() : nullptr);
  return run_until_signalled(daemon, g_searcher);
}

// `status` and `report`: one table or JSON object; with --watch, status reprints until the
// suite is done or cancelled.
int run_status(const FarmCommands::Args &a, bool watch) {
  RedisClient redis(parse_redis_url(a.redis));
  for (;;) {
    const FarmSuiteReport report = read_suite_report(redis, a.suite);
    if (a.json) {
      std::cout << suite_report_json(report).dump(2) << "\n";
    } else {
      print_suite_report(report, std::cout);
    }
    std::cout.flush();
    if (!watch || a.watch_seconds <= 0 || report.phase == "done" || report.phase == "cancelled") {
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(
        static_cast<int64_t>(a.watch_seconds * 1000)));
    if (!a.json) std::cout << "\n";
  }
}

int run_schedule(const FarmCommands::Args &a) {
  RedisClient redis(parse_redis_url(a.redis));
  farm::check_layout(redis);
  if (a.format == "json") {
    std::cout << best_schedule_json(redis, a.suite, a.app) << "\n";
  } else {
    const std::string cache =
        a.library_cache.empty() ? default_library_cache_dir() : a.library_cache;
    std::cout << best_schedule_source(redis, a.suite, a.app, cache);
  }
  return 0;
}

// Cancels the suite: its state first (so the coordinator queues nothing more), then each
// app that is not final; searchers watching those apps stop their jobs.
int run_cancel(const FarmCommands::Args &a) {
  RedisClient redis(parse_redis_url(a.redis));
  const FarmSuiteReport report = read_suite_report(redis, a.suite);
  redis.command({"HSET", farm::suite_state_key(report.suite.id), "schema",
                 std::to_string(farm::kLayoutVersion), "phase", "cancelled"});
  int cancelled = 0;
  for (const farm::AppRecord &app : report.suite.apps) {
    cancelled += farm::cancel_app(redis, report.suite.id, app.name) ? 1 : 0;
  }
  std::cout << "cancelled suite '" << report.suite.name << "' (" << report.suite.id << "): "
            << cancelled << " of " << report.suite.apps.size() << " apps were still running\n";
  return 0;
}

}  // namespace

FarmCommands::FarmCommands(CLI::App &cli) : args_(std::make_unique<Args>()) {
  Args &a = *args_;
  a.up.suite_path = "apps/demo.yaml";
  up_ = cli.add_subcommand(
      "up", "run a suite on an embedded farm on this machine: Redis, a measurer, a coordinator "
            "and a searcher; Ctrl-C stops it, running it again resumes");
  up_->add_option("suite", a.up.suite_path, "suite YAML file")->capture_default_str();
  up_->add_option("--data-dir", a.up.data_dir,
                  "the farm's Redis data, logs and caches (default: " + default_farm_data_dir() +
                      ")");
  up_->add_option("--out", a.up.out_dir, "where the best schedules and report.json go")
      ->capture_default_str();
  up_->add_option("--searchers", a.up.searchers,
                  "searcher daemons to start, on the CPUs the measurer does not use")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_join_option(up_, a.join_policy);

  coordinator_ = cli.add_subcommand(
      "coordinator", "run the farm's coordinator: queue submitted suites, finish apps and suites");
  add_redis_option(coordinator_, a.redis);
  coordinator_->add_option("--name", a.coordinator.name,
                           "lease holder name (default: host-pid-random)");
  coordinator_->add_option("--lease-ms", a.lease_ms,
                           "a standby takes over this long after the active one dies (default "
                           "10000)")
      ->check(CLI::PositiveNumber);
  coordinator_->add_option("--tick-ms", a.tick_ms,
                           "how often suites are looked at (default 500; at most half the lease)")
      ->check(CLI::PositiveNumber);
  add_metrics_option(coordinator_, a.metrics_port);

  searcher_ = cli.add_subcommand(
      "searcher", "run a farm searcher: take jobs from Redis, search, measure on the measurers");
  add_redis_option(searcher_, a.redis);
  searcher_->add_option("--measurer", a.searcher.measurers,
                        "a measurer daemon's endpoint, e.g. tcp://127.0.0.1:5555 (repeatable; "
                        "default: the measurers registered in Redis, one host class per app)");
  searcher_->add_option("--name", a.searcher.name,
                        "consumer name in the job queue (default: host-pid-random)");
  searcher_->add_option("--algorithm", a.searcher.algorithm,
                        "search algorithm (default: protuner tune's default)");
  searcher_->add_option("--cores", a.searcher.cores,
                        "CPUs the measurers time on (default: this host's)")
      ->check(CLI::NonNegativeNumber);
  searcher_->add_option("--seed", a.searcher.base_seed,
                        "added to each job's seed to seed its searches")
      ->capture_default_str();
  searcher_->add_option("--reclaim-after-ms", a.reclaim_after_ms,
                        "take over a job whose holder has not heartbeaten for this long "
                        "(default 15000; every searcher of a farm should agree)")
      ->check(CLI::PositiveNumber);
  searcher_->add_option("--heartbeat-ms", a.heartbeat_ms,
                        "how often a running job is heartbeaten (default 3000; well within "
                        "--reclaim-after-ms)")
      ->check(CLI::PositiveNumber);
  searcher_->add_option("--library-cache", a.searcher.library_cache_dir,
                        "where fetched generator libraries are kept");
  add_join_option(searcher_, a.join_policy);
  add_metrics_option(searcher_, a.metrics_port);

  status_ = cli.add_subcommand("status", "show a suite's progress in the farm");
  add_redis_option(status_, a.redis);
  status_->add_option("suite", a.suite, "suite id (default: the latest submitted)");
  status_->add_flag("--json", a.json, "print one JSON object");
  status_->add_option("--watch", a.watch_seconds,
                      "print again every this many seconds until the suite is done")
      ->check(CLI::PositiveNumber);

  report_ = cli.add_subcommand(
      "report", "a suite's best schedules and their speedups over Halide's default, the "
                "generator's own schedule and Adams2019");
  add_redis_option(report_, a.redis);
  report_->add_option("suite", a.suite, "suite id (default: the latest submitted)");
  report_->add_flag("--json", a.json, "print one JSON object");

  schedule_ = cli.add_subcommand("schedule", "print an app's best schedule as C++ source");
  add_redis_option(schedule_, a.redis);
  schedule_->add_option("suite", a.suite, "suite id")->required();
  schedule_->add_option("app", a.app, "app name")->required();
  schedule_->add_option("--format", a.format, "cpp (apply_schedule_<app>) or json")
      ->check(CLI::IsMember({"cpp", "json"}))
      ->capture_default_str();
  schedule_->add_option("--library-cache", a.library_cache,
                        "where the app's library is fetched to (for cpp)");

  cancel_ = cli.add_subcommand("cancel", "stop a suite: nothing more is queued, running jobs end");
  add_redis_option(cancel_, a.redis);
  cancel_->add_option("suite", a.suite, "suite id")->required();
}

FarmCommands::~FarmCommands() = default;

bool FarmCommands::parsed() const {
  for (const CLI::App *cmd :
       {up_, coordinator_, searcher_, status_, report_, schedule_, cancel_}) {
    if (cmd->parsed()) return true;
  }
  return false;
}

int FarmCommands::run() const {
  if (up_->parsed()) {
    install_stop_handler(on_farm_stop_signal);
    args_->up.join = farm::parse_join_policy(args_->join_policy, "--join");
    return run_local_farm(args_->up, g_up_stop);
  }
  if (coordinator_->parsed()) return run_coordinator(*args_);
  if (searcher_->parsed()) return run_searcher(*args_);
  if (status_->parsed()) return run_status(*args_, true);
  if (report_->parsed()) return run_status(*args_, false);
  if (schedule_->parsed()) return run_schedule(*args_);
  return run_cancel(*args_);
}

}  // namespace protuner
