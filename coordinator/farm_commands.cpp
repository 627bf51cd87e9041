// The farm's subcommands (farm_commands.h): options, signal handling and the status table.
#include "coordinator/farm_commands.h"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <iostream>

#include "common/errors.h"
#include "common/farm/app_state.h"
#include "common/farm/job_queue.h"
#include "common/farm/redis_schema.h"
#include "common/farm/suite_record.h"
#include "common/redis_client.h"
#include "common/redis_options.h"
#include "coordinator/coordinator_daemon.h"
#include "coordinator/text_table.h"
#include "searcher/daemon/searcher_daemon.h"

namespace protuner {

struct FarmCommands::Args {
  std::string redis = "redis://127.0.0.1:6379";
  // coordinator
  CoordinatorOptions coordinator;
  int64_t lease_ms = 0, tick_ms = 0;
  // searcher
  SearcherDaemonOptions searcher;
  int64_t reclaim_after_ms = 0, heartbeat_ms = 0;
  // status
  std::string suite;
  bool json = false;
};

namespace {

// The daemon a signal stops; each stop() is one lock-free atomic store.
std::atomic<CoordinatorDaemon *> g_coordinator{nullptr};
std::atomic<SearcherDaemon *> g_searcher{nullptr};

extern "C" void on_farm_stop_signal(int) {
  if (CoordinatorDaemon *c = g_coordinator.load()) c->stop();
  if (SearcherDaemon *s = g_searcher.load()) s->stop();
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_farm_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void add_redis_option(CLI::App *cmd, std::string &url) {
  cmd->add_option("--redis", url,
                  "redis://[user[:password]@]host[:port][/db]; the password may also come from "
                  "$PROTUNER_REDIS_PASSWORD")
      ->capture_default_str();
}

int run_coordinator(FarmCommands::Args &a) {
  if (a.lease_ms > 0) a.coordinator.lease = std::chrono::milliseconds(a.lease_ms);
  if (a.tick_ms > 0) a.coordinator.tick = std::chrono::milliseconds(a.tick_ms);
  CoordinatorDaemon daemon(parse_redis_url(a.redis), a.coordinator);
  g_coordinator.store(&daemon);
  install_stop_handlers();
  daemon.run();
  g_coordinator.store(nullptr);
  return 0;
}

int run_searcher(FarmCommands::Args &a) {
  if (a.reclaim_after_ms > 0) {
    a.searcher.queue.reclaim_after = std::chrono::milliseconds(a.reclaim_after_ms);
  }
  if (a.heartbeat_ms > 0) a.searcher.heartbeat_interval = std::chrono::milliseconds(a.heartbeat_ms);
  SearcherDaemon daemon(parse_redis_url(a.redis), a.searcher);
  g_searcher.store(&daemon);
  install_stop_handlers();
  daemon.run();
  g_searcher.store(nullptr);
  return 0;
}

std::string latest_suite(RedisClient &redis) {
  const RedisReply ids = redis.command({"ZRANGE", farm::suites_index(), "-1", "-1"});
  if (ids.elements.empty()) throw ConfigError("status: no suite has been submitted to " + redis.endpoint());
  return ids.elements[0].str;
}

std::string ms_text(const std::optional<double> &ms) {
  return ms ? format_fixed(*ms, 3) : std::string("-");
}

// A baseline's time, or its status when it did not measure ok.
std::string baseline_text(const std::map<std::string, farm::MeasuredCandidate> &baselines,
                          const std::string &name) {
  const auto it = baselines.find(name);
  if (it == baselines.end()) return "-";
  return it->second.min_ms ? format_fixed(*it->second.min_ms, 3) : it->second.status;
}

nlohmann::json number_or_null(const std::optional<double> &v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

int run_status(const FarmCommands::Args &a) {
  RedisClient redis(parse_redis_url(a.redis));
  farm::check_layout(redis);
  const std::string id = a.suite.empty() ? latest_suite(redis) : a.suite;
  const RedisReply text = redis.command({"GET", farm::suite_key(id)});
  if (text.is_nil()) throw ConfigError("status: no suite '" + id + "' in " + redis.endpoint());
  const farm::SuiteRecord suite = farm::suite_from_json(text.str, farm::suite_key(id));
  const RedisReply phase_reply = redis.command({"HGET", farm::suite_state_key(id), "phase"});
  const std::string phase = phase_reply.is_nil() ? "submitted" : phase_reply.str;
  farm::JobQueue queue(redis);
  const farm::QueueDepths depths = queue.depths();

  nlohmann::json out{{"suite", id}, {"name", suite.name}, {"phase", phase},
                     {"queue", {{"waiting", depths.waiting}, {"running", depths.running},
                                {"dead", depths.dead}}},
                     {"apps", nlohmann::json::array()}};
  TextTable table({"app", "phase", "jobs", "measured", "failed", "best ms", "default ms",
                   "own ms", "Adams2019 ms", "note"});
  for (const farm::AppRecord &app : suite.apps) {
    const auto state = farm::read_app(redis, id, app.name);
    const auto baselines = farm::read_baselines(redis, id, app.name);
    nlohmann::json baseline_json = nlohmann::json::object();
    for (const auto &[name, b] : baselines) {
      baseline_json[name] = {{"status", b.status}, {"min_ms", number_or_null(b.min_ms)}};
    }
    if (!state) {
      out["apps"].push_back({{"name", app.name}, {"phase", "submitted"}});
      table.add_row({app.name, "submitted", "-", "-", "-", "-", "-", "-", "-", ""});
      continue;
    }
    out["apps"].push_back({{"name", app.name},
                           {"phase", farm::app_phase_name(state->phase)},
                           {"jobs_done", state->jobs_done},
                           {"jobs_total", state->jobs_total},
                           {"measurements", state->measurements},
                           {"failures", state->failures},
                           {"failures_by_status", state->failures_by_status},
                           {"best_ms", number_or_null(state->best_ms)},
                           {"best_key", state->best_key},
                           {"budget_ms", state->budget_ms},
                           {"deadline_ms", state->deadline_ms ? nlohmann::json(*state->deadline_ms)
                                                              : nlohmann::json(nullptr)},
                           {"error", state->error},
                           {"baselines", baseline_json}});
    table.add_row({app.name, farm::app_phase_name(state->phase),
                   std::to_string(state->jobs_done) + "/" + std::to_string(state->jobs_total),
                   std::to_string(state->measurements), std::to_string(state->failures),
                   ms_text(state->best_ms), baseline_text(baselines, "default"),
                   baseline_text(baselines, "own"), baseline_text(baselines, "Adams2019"),
                   state->error});
  }
  if (a.json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "suite '" << suite.name << "' (" << id << "): " << phase << "; queue: "
            << depths.waiting << " waiting, " << depths.running << " running, " << depths.dead
            << " dead-lettered\n\n";
  table.print(std::cout);
  return 0;
}

}  // namespace

FarmCommands::FarmCommands(CLI::App &cli) : args_(std::make_unique<Args>()) {
  Args &a = *args_;
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

  searcher_ = cli.add_subcommand(
      "searcher", "run a farm searcher: take jobs from Redis, search, measure on the measurers");
  add_redis_option(searcher_, a.redis);
  searcher_->add_option("--measurer", a.searcher.measurers,
                        "a measurer daemon's endpoint, e.g. tcp://127.0.0.1:5555 (repeatable)")
      ->required();
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

  status_ = cli.add_subcommand("status", "show a suite's progress in the farm");
  add_redis_option(status_, a.redis);
  status_->add_option("suite", a.suite, "suite id (default: the latest submitted)");
  status_->add_flag("--json", a.json, "print one JSON object");
}

FarmCommands::~FarmCommands() = default;

bool FarmCommands::parsed() const {
  return coordinator_->parsed() || searcher_->parsed() || status_->parsed();
}

int FarmCommands::run() const {
  if (coordinator_->parsed()) return run_coordinator(*args_);
  if (searcher_->parsed()) return run_searcher(*args_);
  return run_status(*args_);
}

}  // namespace protuner
