// The farm as an operator runs it, every part a real process on loopback: redis-server,
// protuner-measurerd, `protuner coordinator` and `protuner searcher`, with a suite of the
// test blur app put in by `protuner submit` and read out by `protuner status --json`.
//   - A suite runs to the end: baselines measured, the best schedule in Redis is the
//     fastest candidate measured, every search job counted, the suite done; the
//     coordinator's and searcher's /metrics agree with Redis.
//   - The active coordinator and a searcher mid-search are killed with SIGKILL: the standby
//     coordinator takes the lease, a second searcher reclaims the job, and the suite still
//     finishes, with nothing counted twice.
//   - redis-server (AOF, appendfsync always) is killed with SIGKILL mid-search and started
//     again: every result Redis had acknowledged is there after the restart, the daemons
//     reconnect, and the suite finishes.
//   - The measurer is killed with SIGKILL mid-measurement and started again on its port:
//     the request in flight is measured again, and the suite finishes.
//   - Three apps on two searchers and two measurers: every app finishes, both measurers
//     measure, and each app's wall time stays within its budget + 10%.
//   - A searcher that finds the queue empty joins the running app with a new seed, and the
//     app finishes once every seed's job is done.
//   - Measurers registered in Redis and a searcher given none: it finds them there, a
//     measurer that joins mid-run is used within seconds, one killed is dropped when its
//     record expires, the app keeps one host class, and a clean stop unregisters.
//   - A real Prometheus scrapes the coordinator, searcher and measurer: every query of every
//     dashboard in dashboards/ answers with data once a suite has run.
// Every finished app is checked for that budget bound.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <regex>
#include <thread>

#include "common/child_process.h"
#include "common/farm/app_state.h"
#include "common/farm/job_progress.h"
#include "common/farm/measurer_registry.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/support/loopback.h"
#include "tests/support/run_command.h"

namespace protuner {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using json = nlohmann::json;

// The app's budget: long enough for a few candidates of the blur app on a loaded 2-core
// machine, short enough for the test.
constexpr double kBudgetMinutes = 0.25;
// For a test that changes the measurers mid-run (one killed and back, one joining): enough
// budget left after the change for the search to measure on the new one, on a machine also
// running other tests.
constexpr double kLongBudgetMinutes = 0.5;
// For the join test: one searcher measures the three baselines (about 27 s under CI's load,
// queued behind the other searcher's candidates on one measurer) and must still find more
// than the join cutoff (JoinSettings::min_remaining_fraction) of the budget left.
constexpr double kJoinBudgetMinutes = 1.0;

testing::RedisServerOptions durable_redis() {
  testing::RedisServerOptions options;
  options.aof = true;
  return options;
}

class FarmProcessTest : public ::testing::Test {
 protected:
  inline static const std::vector<std::string> kRegistered{"registered"};

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("protuner_farm_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    redis_url_ = "redis://127.0.0.1:" + std::to_string(redis_server_.port());
    measurer_port_ = testing::free_loopback_port();
    measurer_metrics_port_ = testing::free_loopback_port();
    measurer_ = start_measurer(measurer_port_, measurer_metrics_port_, "measurerd");
  }

  // A measurer on 127.0.0.1:port with /metrics on metrics_port; the same name and ports
  // start it again after a kill. With `registered`, it registers in Redis as `name`.
  std::shared_ptr<ChildProcess> start_measurer(int port, int metrics_port,
                                               const std::string &name,
                                               bool registered = false) {
    std::vector<std::string> argv{PROTUNER_MEASURERD, "--bind", endpoint(port), "--metrics-port",
                                  std::to_string(metrics_port), "--cache-dir",
                                  (dir_ / (name + "-cache")).string(), "--heartbeat-ms", "300",
                                  "--log-level", "info"};
    if (registered) argv.insert(argv.end(), {"--redis", redis_url_, "--name", name});
    return start(std::move(argv), name);
  }

  static std::string endpoint(int port) { return "tcp://127.0.0.1:" + std::to_string(port); }

  // The sum of a metric family's samples on a daemon's /metrics, only those whose labels
  // contain `labels` when given (e.g. `outcome="done"`); -1 when it does not answer.
  static double metric(int metrics_port, const std::string &family,
                       const std::string &labels = "") {
    std::string text;
    try {
      text = testing::http_get(metrics_port, "/metrics");
    } catch (const std::exception &) {
      return -1;
    }
    const std::regex line("^" + family + "(\\{[^}]*\\})? ([0-9.eE+-]+)$");
    double sum = 0;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      std::smatch m;
      if (std::regex_match(l, m, line) && m[1].str().find(labels) != std::string::npos) {
        sum += std::stod(m[2]);
      }
    }
    return sum;
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const auto &[name, process] : logs_) {
        std::cerr << "---- " << name << " ----\n" << process->log() << "\n";
      }
    }
    logs_.clear();
    fs::remove_all(dir_);
  }

  std::string measurer_endpoint() const { return endpoint(measurer_port_); }

  std::shared_ptr<ChildProcess> start(std::vector<std::string> argv,
                                               const std::string &name) {
    ChildProcessOptions options;
    options.log_path = (dir_ / (name + ".log")).string();
    auto p = std::make_shared<ChildProcess>(std::move(argv), options);
    logs_.emplace_back(name, p);
    return p;
  }

  // A coordinator, with /metrics on `metrics_port` when one is given.
  std::shared_ptr<ChildProcess> coordinator(const std::string &name, int metrics_port = -1) {
    std::vector<std::string> argv{PROTUNER_CLI, "coordinator", "--redis", redis_url_, "--name",
                                  name, "--lease-ms", "1500", "--tick-ms", "200"};
    if (metrics_port >= 0) {
      argv.insert(argv.end(), {"--metrics-port", std::to_string(metrics_port)});
    }
    return start(std::move(argv), name);
  }

  // A searcher on the fixture's measurer, or on `measurers` when given (kRegistered: the
  // measurers registered in Redis), with /metrics on `metrics_port` when one is given.
  std::shared_ptr<ChildProcess> searcher(const std::string &name,
                                         std::vector<std::string> measurers = {},
                                         int metrics_port = -1) {
    if (measurers.empty()) measurers.push_back(measurer_endpoint());
    if (measurers == kRegistered) measurers.clear();
    std::vector<std::string> argv{PROTUNER_CLI, "--log-level", "debug", "searcher", "--redis",
                                  redis_url_,   "--name",      name,    "--cores",  "1",
                                  "--reclaim-after-ms", "3000", "--heartbeat-ms", "500",
                                  "--library-cache", (dir_ / ("libs-" + name)).string()};
    for (const std::string &m : measurers) argv.insert(argv.end(), {"--measurer", m});
    if (metrics_port >= 0) {
      argv.insert(argv.end(), {"--metrics-port", std::to_string(metrics_port)});
    }
    return start(std::move(argv), name);
  }

  // Submits a suite of the test blur app under each of `apps`, each with `seeds` searches
  // and `budget_minutes`; returns its id.
  std::string submit(int seeds, const std::vector<std::string> &apps = {"blur"},
                     double budget_minutes = kBudgetMinutes) {
    const std::string suite = (dir_ / "suite.yaml").string();
    std::ofstream out(suite);
    out << "suite: farm test\napps:\n";
    for (const std::string &app : apps) {
      out << "  - {name: " << app << ", library: " << PROTUNER_TEST_GENERATOR_LIBRARY
          << ", generator: test_blur, budget_minutes: " << budget_minutes
          << ", seeds: " << seeds << "}\n";
    }
    out.close();
    const auto r = testing::run_command(std::string(PROTUNER_CLI) + " submit " + suite +
                                        " --redis " + redis_url_ + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return json::parse(r.output.substr(r.output.find('{'))).at("id").get<std::string>();
  }

  // `protuner <command> <args> --redis URL`.
  testing::CommandResult cli(const std::string &command, const std::string &args) {
    return testing::run_command(std::string(PROTUNER_CLI) + " " + command + " " + args +
                                " --redis " + redis_url_);
  }

  json status(const std::string &suite) {
    const auto r = cli("status", suite + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return json::parse(r.output.substr(r.output.find('{')));
  }

  // Polls status until `done` says so; returns the last status.
  json wait_for(const std::string &suite, const std::function<bool(const json &)> &done,
                std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    json s = status(suite);
    while (!done(s) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(300ms);
      s = status(suite);
    }
    return s;
  }

  // What every finished suite must show, whoever ran it.
  void expect_finished_app(const std::string &suite, int seeds, const std::string &name = "blur",
                           double budget_minutes = kBudgetMinutes) {
    SCOPED_TRACE(name);
    RedisClient redis("127.0.0.1", redis_server_.port());
    const auto app = farm::read_app(redis, suite, name);
    ASSERT_TRUE(app);
    EXPECT_EQ(app->phase, farm::AppPhase::kDone) << app->error;
    // The suite's seeds and those free searchers added, each recorded done once.
    EXPECT_EQ(app->jobs_total, seeds + app->jobs_joined);
    EXPECT_EQ(app->jobs_done, app->jobs_total);
    EXPECT_EQ(redis.command({"HLEN", farm::jobs_done_key(suite, name)}).integer,
              app->jobs_total);
    ASSERT_TRUE(app->best_ms);
    // The hard budget: from the first search job's start to the final result.
    ASSERT_TRUE(app->started_ms && app->finished_ms);
    EXPECT_EQ(app->budget_ms, std::llround(budget_minutes * 60000));
    EXPECT_LE(*app->finished_ms - *app->started_ms, app->budget_ms * 11 / 10);
    // The best is the fastest ok candidate measured while the app ran, and it is stored.
    const auto candidates = farm::read_candidates(redis, suite, name);
    double fastest = 1e300;
    int ok = 0;
    for (const auto &c : candidates) {
      EXPECT_EQ(c.key, farm::candidate_key(c.schedule_json));
      if (c.status == "ok") {
        ++ok;
        fastest = std::min(fastest, *c.min_ms);
      }
    }
    EXPECT_GT(ok, 0);
    EXPECT_LE(app->measurements, static_cast<int64_t>(candidates.size()));
    EXPECT_GE(*app->best_ms, fastest);
    const auto best = farm::read_candidate(redis, suite, name, app->best_key);
    ASSERT_TRUE(best);
    EXPECT_EQ(best->min_ms, app->best_ms);
    EXPECT_NE(json::parse(best->schedule_json).dump(), "null");
    // The baselines were measured once each.
    const auto baselines = farm::read_baselines(redis, suite, name);
    for (const char *baseline : {"default", "own", "Adams2019"}) {
      ASSERT_EQ(baselines.count(baseline), 1u) << baseline;
      EXPECT_EQ(baselines.at(baseline).status, "ok")
          << baseline << ": " << baselines.at(baseline).error;
    }
    // Nothing is left in the queue.
    const json s = status(suite);
    EXPECT_EQ(s.at("phase"), "done");
    EXPECT_EQ(s.at("queue").at("waiting"), 0);
    EXPECT_EQ(s.at("queue").at("running"), 0);
    EXPECT_EQ(s.at("queue").at("dead"), 0);
  }

  // Durable as the farm's Redis is: a kill -9 loses nothing it acknowledged.
  testing::RedisServer redis_server_{durable_redis()};
  fs::path dir_;
  std::string redis_url_;
  int measurer_port_ = 0, measurer_metrics_port_ = 0;
  std::shared_ptr<ChildProcess> measurer_;
  std::vector<std::pair<std::string, std::shared_ptr<ChildProcess>>> logs_;
};

bool suite_done(const json &s) { return s.at("phase") == "done"; }

int measurements(const json &s) {
  return s.at("apps").empty() ? 0 : s.at("apps")[0].value("measurements", 0);
}

TEST_F(FarmProcessTest, ASuiteRunsToTheEndAndTheDaemonsStopCleanly) {
  const std::string suite = submit(1);
  const int coord_metrics = testing::free_loopback_port();
  const int search_metrics = testing::free_loopback_port();
  auto coord = coordinator("coordinator-a", coord_metrics);
  auto search = searcher("searcher-a", {}, search_metrics);
  const json s = wait_for(suite, suite_done, 180s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  expect_finished_app(suite, 1);

  // The daemons' metrics say what Redis says.
  RedisClient redis("127.0.0.1", redis_server_.port());
  const auto app = farm::read_app(redis, suite, "blur");
  EXPECT_EQ(metric(coord_metrics, "protuner_coordinator_lease_held"), 1);
  EXPECT_EQ(metric(coord_metrics, "protuner_coordinator_takeovers_total"), 1);
  EXPECT_EQ(metric(coord_metrics, "protuner_coordinator_suites_queued_total"), 1);
  EXPECT_EQ(metric(coord_metrics, "protuner_coordinator_suites_finished_total"), 1);
  EXPECT_EQ(metric(coord_metrics, "protuner_coordinator_apps_finished_total", "phase=\"done\""), 1);
  EXPECT_EQ(metric(coord_metrics, "protuner_farm_jobs"), 0);  // nothing waiting, running, dead
  EXPECT_EQ(metric(search_metrics, "protuner_searcher_jobs_total", "outcome=\"done\""), 2);
  EXPECT_EQ(metric(search_metrics, "protuner_searcher_jobs_total",
                   "kind=\"baselines\",outcome=\"done\""), 1);
  EXPECT_EQ(metric(search_metrics, "protuner_searcher_busy"), 0);
  // One searcher wrote every stored candidate, each at least once.
  EXPECT_GE(metric(search_metrics, "protuner_searcher_measurements_total"),
            static_cast<double>(farm::read_candidates(redis, suite, "blur").size()));
  EXPECT_GE(metric(search_metrics, "protuner_searcher_measurements_total", "status=\"ok\""),
            1);
  // The search job's progress as it ended (this short budget goes mostly to the seeds;
  // AFreeSearcherJoinsTheRunningAppWithANewSeed checks the searches' rollouts).
  const auto jobs = farm::read_job_progress(redis, suite, "blur");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].searcher, "searcher-a");
  const auto summary = farm::job_summary_from_json(
      redis.command({"HGET", farm::jobs_done_key(suite, "blur"), "0"}).str, "jobs-done");
  EXPECT_EQ(jobs[0].measurements, summary.measurements);
  EXPECT_EQ(jobs[0].best_ms, summary.best_ms);

  // The report agrees with Redis: the best, the baselines and the speedups over them.
  const auto baselines = farm::read_baselines(redis, suite, "blur");
  const auto report_run = cli("report", suite + " --json");
  ASSERT_EQ(report_run.exit_code, 0) << report_run.output;
  const json report = json::parse(report_run.output.substr(report_run.output.find('{')));
  const json &row = report.at("apps").at(0);
  EXPECT_EQ(row.at("best_ms").get<double>(), *app->best_ms);
  for (const char *name : {"default", "own", "Adams2019"}) {
    EXPECT_DOUBLE_EQ(row.at("speedups").at(name).get<double>(),
                     *baselines.at(name).min_ms / *app->best_ms)
        << name;
  }
  EXPECT_DOUBLE_EQ(report.at("geomean_speedups").at("Adams2019").get<double>(),
                   row.at("speedups").at("Adams2019").get<double>());
  EXPECT_EQ(row.at("rollouts").get<int64_t>(), jobs[0].rollouts);
  EXPECT_EQ(row.at("decisions").get<int64_t>(), jobs[0].decisions);
  EXPECT_EQ(row.at("jobs").at(0).at("searcher"), "searcher-a");
  // The best schedule, as stored and as C++ source to paste into the generator.
  const auto schedule_json = cli("schedule", suite + " blur --format json");
  ASSERT_EQ(schedule_json.exit_code, 0) << schedule_json.output;
  EXPECT_EQ(json::parse(schedule_json.output),
            json::parse(farm::read_candidate(redis, suite, "blur", app->best_key)->schedule_json));
  const auto source = cli("schedule", suite + " blur --library-cache " + (dir_ / "libs").string());
  ASSERT_EQ(source.exit_code, 0) << source.output;
  EXPECT_NE(source.output.find("inline void apply_schedule_blur(::Halide::Pipeline"),
            std::string::npos)
      << source.output;
  const auto unknown = cli("schedule", suite + " nope");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("has no app 'nope' (it has: blur)"), std::string::npos)
      << unknown.output;
  // Every ok candidate is training data: exported, then read by the model evaluation,
  // which rebuilds the pipeline from the library the export fetched.
  size_t ok = 0;
  for (const auto &c : farm::read_candidates(redis, suite, "blur")) {
    ok += c.status == "ok" && !c.schedule_json.empty() ? 1 : 0;
  }
  const std::string dataset = (dir_ / "farm.jsonl").string();
  const auto exported = cli("dataset export", "--suite " + suite + " --out " + dataset);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("appended " + std::to_string(ok) + " from 1 apps of 1 suites"),
            std::string::npos)
      << exported.output;
  const auto evaluated = testing::run_command(
      std::string(PROTUNER_CLI) + " evaluate --model analytic --json --data " + dataset);
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  const json evaluation = json::parse(evaluated.output.substr(evaluated.output.find('{')));
  EXPECT_EQ(evaluation.at("overall").at("samples"), ok) << evaluated.output;
  // SIGTERM: both exit 0, and the lease is released at once, not left to lapse.
  search->signal(SIGTERM);
  coord->signal(SIGTERM);
  const auto search_exit = search->wait(15s), coord_exit = coord->wait(15s);
  ASSERT_TRUE(search_exit && coord_exit);
  EXPECT_TRUE(WIFEXITED(*search_exit) && WEXITSTATUS(*search_exit) == 0);
  EXPECT_TRUE(WIFEXITED(*coord_exit) && WEXITSTATUS(*coord_exit) == 0);
  EXPECT_FALSE(redis.get(farm::coordinator_lease_key()));
}

TEST_F(FarmProcessTest, ACancelledSuiteStopsItsRunningJobAndTheSearcherServesOn) {
  auto coord = coordinator("coordinator-a");
  auto search = searcher("searcher-a");
  const std::string suite = submit(1);
  json s = wait_for(
      suite, [](const json &st) { return st.at("apps")[0].value("phase", "") == "running"; },
      120s);
  ASSERT_EQ(s.at("apps")[0].value("phase", ""), "running") << s.dump(2);
  const auto cancel = cli("cancel", suite);
  ASSERT_EQ(cancel.exit_code, 0) << cancel.output;
  EXPECT_NE(cancel.output.find("1 of 1 apps were still running"), std::string::npos)
      << cancel.output;
  // The searcher sees it within a heartbeat and lets the job go.
  s = wait_for(suite, [](const json &st) { return st.at("queue").at("running") == 0; }, 20s);
  EXPECT_EQ(s.at("queue").at("running"), 0) << s.dump(2);
  EXPECT_EQ(s.at("phase"), "cancelled");
  EXPECT_EQ(s.at("apps")[0].at("phase"), "cancelled");
  // It is still serving: the next suite runs to the end.
  const std::string next = submit(1);
  const json done = wait_for(next, suite_done, 180s);
  ASSERT_TRUE(suite_done(done)) << done.dump(2);
  EXPECT_TRUE(search->running());
  EXPECT_EQ(cli("cancel", "no-such-suite").exit_code, 2);
}

TEST_F(FarmProcessTest, KilledCoordinatorAndSearcherAreReplacedAndTheSuiteFinishes) {
  RedisClient redis("127.0.0.1", redis_server_.port());
  auto coord_a = coordinator("coordinator-a");
  // Only one coordinator holds the lease; start the standby once it does.
  for (int i = 0; i < 100 && !redis.get(farm::coordinator_lease_key()); ++i) {
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(redis.get(farm::coordinator_lease_key()), "coordinator-a");
  auto coord_b = coordinator("coordinator-b");
  const std::string suite = submit(1);
  auto search_a = searcher("searcher-a");
  // Kill searcher-a once its search has started and measured something.
  json s = wait_for(
      suite,
      [](const json &st) {
        return !st.at("apps").empty() && st.at("apps")[0].value("measurements", 0) > 0;
      },
      120s);
  ASSERT_GT(s.at("apps")[0].value("measurements", 0), 0) << s.dump(2);
  search_a->kill();
  coord_a->kill();
  auto search_b = searcher("searcher-b");
  s = wait_for(suite, suite_done, 180s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  expect_finished_app(suite, 1);
  EXPECT_EQ(redis.get(farm::coordinator_lease_key()), "coordinator-b");
  // searcher-b reclaimed the job searcher-a held and recorded it done.
  const auto summary = redis.command({"HGET", farm::jobs_done_key(suite, "blur"), "0"});
  ASSERT_FALSE(summary.is_nil());
  EXPECT_EQ(json::parse(summary.str).at("searcher"), "searcher-b");
}

TEST_F(FarmProcessTest, RedisKilledMidSearchKeepsEveryAcknowledgedResult) {
  auto coord = coordinator("coordinator-a");
  auto search = searcher("searcher-a");
  const std::string suite = submit(1);
  json s = wait_for(suite, [](const json &st) { return measurements(st) >= 2; }, 120s);
  ASSERT_GE(measurements(s), 2) << s.dump(2);

  // What Redis has acknowledged, read just before it is killed.
  std::map<std::string, std::string> before;
  int64_t measured_before = 0;
  {
    RedisClient redis("127.0.0.1", redis_server_.port());
    for (const auto &c : farm::read_candidates(redis, suite, "blur")) {
      before[c.key] = farm::candidate_to_json(c);
    }
    measured_before = farm::read_app(redis, suite, "blur")->measurements;
  }
  ASSERT_FALSE(before.empty());
  redis_server_.kill();
  std::this_thread::sleep_for(2s);  // the daemons see it gone
  redis_server_.start();
  {
    RedisClient redis("127.0.0.1", redis_server_.port());
    std::map<std::string, std::string> after;
    for (const auto &c : farm::read_candidates(redis, suite, "blur")) {
      after[c.key] = farm::candidate_to_json(c);
    }
    for (const auto &[key, text] : before) {
      ASSERT_EQ(after.count(key), 1u) << "lost " << key;
      EXPECT_EQ(after.at(key), text);
    }
    EXPECT_GE(farm::read_app(redis, suite, "blur")->measurements, measured_before);
  }
  // The daemons reconnect and finish the suite.
  s = wait_for(suite, suite_done, 180s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  expect_finished_app(suite, 1);
  EXPECT_TRUE(coord->running());
  EXPECT_TRUE(search->running());
}

TEST_F(FarmProcessTest, MeasurerKilledMidMeasurementIsReplacedAndTheSuiteFinishes) {
  auto coord = coordinator("coordinator-a");
  auto search = searcher("searcher-a");
  const std::string suite = submit(1, {"blur"}, kLongBudgetMinutes);
  // Kill it while it measures a search candidate (the baselines come first).
  json s = wait_for(suite, [](const json &st) { return measurements(st) >= 1; }, 120s);
  ASSERT_GE(measurements(s), 1) << s.dump(2);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metric(measurer_metrics_port_, "protuner_measurer_busy") != 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(metric(measurer_metrics_port_, "protuner_measurer_busy"), 1);
  measurer_->kill();
  const int measured_at_kill = measurements(status(suite));
  std::this_thread::sleep_for(1s);
  measurer_ = start_measurer(measurer_port_, measurer_metrics_port_, "measurerd-again");
  s = wait_for(suite, suite_done, 180s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  expect_finished_app(suite, 1, "blur", kLongBudgetMinutes);
  // The search went on against the new measurer: it answered requests, and more were
  // counted after the kill. None is blamed on the measurer.
  EXPECT_GT(metric(measurer_metrics_port_, "protuner_measurer_requests_total"), 0);
  EXPECT_GT(measurements(s), measured_at_kill) << s.dump(2);
  RedisClient redis("127.0.0.1", redis_server_.port());
  for (const auto &c : farm::read_candidates(redis, suite, "blur")) {
    EXPECT_NE(c.status, "measurer_error") << c.error;
  }
  EXPECT_TRUE(search->running());
}

TEST_F(FarmProcessTest, ThreeAppsOnTwoSearchersAndTwoMeasurersAllFinishInBudget) {
  const int second_port = testing::free_loopback_port();
  const int second_metrics = testing::free_loopback_port();
  auto second = start_measurer(second_port, second_metrics, "measurerd-b");
  const std::vector<std::string> measurers{measurer_endpoint(), endpoint(second_port)};
  auto coord = coordinator("coordinator-a");
  auto search_a = searcher("searcher-a", measurers);
  auto search_b = searcher("searcher-b", measurers);
  const std::vector<std::string> apps{"blur_a", "blur_b", "blur_c"};
  // Three apps share two measurers that also measure each app's baselines: the long budget
  // leaves every app's search time for a measurement after the baselines.
  const std::string suite = submit(1, apps, kLongBudgetMinutes);
  const json s = wait_for(suite, suite_done, 300s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  for (const std::string &app : apps) expect_finished_app(suite, 1, app, kLongBudgetMinutes);
  // Both searchers ran jobs, and both measurers measured.
  RedisClient redis("127.0.0.1", redis_server_.port());
  std::set<std::string> searchers;
  for (const std::string &app : apps) {
    for (const auto &c : farm::read_candidates(redis, suite, app)) searchers.insert(c.searcher);
  }
  EXPECT_EQ(searchers, (std::set<std::string>{"searcher-a", "searcher-b"}));
  EXPECT_GT(metric(measurer_metrics_port_, "protuner_measurer_requests_total"), 0);
  EXPECT_GT(metric(second_metrics, "protuner_measurer_requests_total"), 0);
}

TEST_F(FarmProcessTest, AFreeSearcherJoinsTheRunningAppWithANewSeed) {
  auto coord = coordinator("coordinator-a");
  const int metrics_a = testing::free_loopback_port(), metrics_b = testing::free_loopback_port();
  auto search_a = searcher("searcher-a", {}, metrics_a);
  auto search_b = searcher("searcher-b", {}, metrics_b);
  // One app, one seed: once one searcher has measured the baselines, the queue is empty and
  // it joins the app's search, which has most of its (long) budget left.
  const std::string suite = submit(1, {"blur"}, kJoinBudgetMinutes);
  const json s = wait_for(suite, suite_done, 180s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  expect_finished_app(suite, 1, "blur", kJoinBudgetMinutes);
  RedisClient redis("127.0.0.1", redis_server_.port());
  const auto app = farm::read_app(redis, suite, "blur");
  EXPECT_GE(app->jobs_joined, 1);
  EXPECT_EQ(metric(metrics_a, "protuner_searcher_joins_total") +
                metric(metrics_b, "protuner_searcher_joins_total"),
            app->jobs_joined);
  // Both searchers searched: the joined seeds ran beside seed 0, not after it.
  std::set<std::string> searchers;
  for (const RedisReply &summary :
       redis.command({"HVALS", farm::jobs_done_key(suite, "blur")}).elements) {
    searchers.insert(json::parse(summary.str).at("searcher").get<std::string>());
  }
  EXPECT_EQ(searchers, (std::set<std::string>{"searcher-a", "searcher-b"}));
  // Every search job that ran left its progress in Redis; the searchers' metrics counted
  // its rollouts and decisions as they were reported (never more than the final records;
  // SearchUntil.ReportsItsSearchesRolloutsAndDecisionsAsTheyGo checks that a search
  // reports them), and the report sums them per app.
  const auto jobs = farm::read_job_progress(redis, suite, "blur");
  EXPECT_EQ(static_cast<int64_t>(jobs.size()),
            redis.command({"HLEN", farm::jobs_done_key(suite, "blur")}).integer);
  int64_t rollouts = 0, decisions = 0;
  for (const farm::JobProgress &p : jobs) {
    rollouts += p.rollouts;
    decisions += p.decisions;
  }
  EXPECT_LE(metric(metrics_a, "protuner_searcher_rollouts_total") +
                metric(metrics_b, "protuner_searcher_rollouts_total"),
            static_cast<double>(rollouts));
  EXPECT_LE(metric(metrics_a, "protuner_searcher_decisions_total") +
                metric(metrics_b, "protuner_searcher_decisions_total"),
            static_cast<double>(decisions));
  const auto status = cli("status", suite + " --json");
  ASSERT_EQ(status.exit_code, 0) << status.output;
  const json row = json::parse(status.output.substr(status.output.find('{'))).at("apps").at(0);
  EXPECT_EQ(row.at("rollouts").get<int64_t>(), rollouts);
  EXPECT_EQ(row.at("decisions").get<int64_t>(), decisions);
  EXPECT_EQ(row.at("jobs").size(), jobs.size());
}

TEST_F(FarmProcessTest, RegisteredMeasurersAreFoundAJoinerIsUsedAndADeadOneDropped) {
  const int a_port = testing::free_loopback_port(), a_metrics = testing::free_loopback_port();
  const int b_port = testing::free_loopback_port(), b_metrics = testing::free_loopback_port();
  auto a = start_measurer(a_port, a_metrics, "measurer-a", true);
  auto coord = coordinator("coordinator-a");
  const int search_metrics = testing::free_loopback_port();
  auto search = searcher("searcher-a", kRegistered, search_metrics);
  // The long budget leaves the search time to use a joiner after slow baselines under load.
  const std::string suite = submit(1, {"blur"}, kLongBudgetMinutes);
  const auto searching = [](const json &st) {
    return measurements(st) >= 1 && st.at("apps")[0].value("phase", "") == "running";
  };
  json s = wait_for(suite, searching, 120s);
  ASSERT_TRUE(searching(s)) << s.dump(2);
  const double a_before = metric(a_metrics, "protuner_measurer_requests_total");
  EXPECT_GT(a_before, 0);

  // A measurer that joins mid-run is used within seconds.
  auto b = start_measurer(b_port, b_metrics, "measurer-b", true);
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metric(b_metrics, "protuner_measurer_requests_total") <= 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(metric(b_metrics, "protuner_measurer_requests_total"), 0);

  // One that dies is dropped: its record expires within 3 heartbeats.
  a->kill();
  RedisClient redis("127.0.0.1", redis_server_.port());
  const auto names = [&] {
    std::set<std::string> out;
    for (const auto &m : farm::live_measurers(redis)) out.insert(m.name);
    return out;
  };
  deadline = std::chrono::steady_clock::now() + 5s;
  while (names().count("measurer-a") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(names(), (std::set<std::string>{"measurer-b"}));
  EXPECT_EQ(status(suite).at("measurers_registered"), 1);

  s = wait_for(suite, suite_done, 180s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  expect_finished_app(suite, 1, "blur", kLongBudgetMinutes);
  // The app measured on one host class, the one both measurers of this host register.
  const auto host_class = redis.command({"HGET", farm::app_key(suite, "blur"), "host_class"});
  ASSERT_FALSE(host_class.is_nil());
  EXPECT_EQ(host_class.str, farm::live_measurers(redis).at(0).host_class);
  // The same app submitted again: its candidates come from the farm-wide cache, measured
  // for the first suite, not from the measurers.
  const double hits_before = metric(search_metrics, "protuner_searcher_cache_hits_total");
  const std::string again = submit(1);
  ASSERT_TRUE(suite_done(wait_for(again, suite_done, 180s)));
  EXPECT_GT(metric(search_metrics, "protuner_searcher_cache_hits_total"), hits_before);
  EXPECT_GT(farm::read_app(redis, again, "blur")->measurements, 0);
  int candidates_from_cache = 0;
  for (const auto &c : farm::read_candidates(redis, again, "blur")) {
    candidates_from_cache += nlohmann::json::parse(c.result_json).value("from_cache", false);
  }
  EXPECT_GT(candidates_from_cache, 0);
  // Its baselines too: the first suite's answers, not measured again.
  const auto first_baselines = farm::read_baselines(redis, suite, "blur");
  for (const auto &[name, b] : farm::read_baselines(redis, again, "blur")) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(nlohmann::json::parse(b.result_json).value("from_cache", false));
    ASSERT_TRUE(first_baselines.count(name));
    EXPECT_EQ(b.min_ms, first_baselines.at(name).min_ms);
  }
  // A measurer stopped cleanly unregisters at once.
  b->signal(SIGTERM);
  ASSERT_TRUE(b->wait(30s));
  EXPECT_TRUE(names().empty());
}

// `protuner up`: the embedded farm, stopped with Ctrl-C (SIGINT) mid-suite and run again:
// it resumes the same suite and finishes it, with the schedules and report written.
TEST_F(FarmProcessTest, UpStopsCleanlyOnSigintAndResumesTheSuite) {
  const std::string suite = (dir_ / "up.yaml").string();
  std::ofstream(suite) << "suite: up test\n"
                       << "apps:\n"
                       << "  - {name: blur, library: " << PROTUNER_TEST_GENERATOR_LIBRARY
                       << ", generator: test_blur, budget_minutes: " << kBudgetMinutes << "}\n";
  const std::string data = (dir_ / "farm").string(), out = (dir_ / "out").string();
  auto up = start({PROTUNER_CLI, "up", suite, "--data-dir", data, "--out", out}, "up");
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (up->log().find(" running ") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_NE(up->log().find(" running "), std::string::npos) << up->log();
  up->signal(SIGINT);
  const auto status = up->wait(60s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 130) << *status;
  EXPECT_NE(up->log().find("run the same command again to resume"), std::string::npos);
  // Every daemon it started has exited: the searcher gave its job back on the way.
  std::ifstream searcher_in(data + "/logs/searcher.log");
  const std::string searcher_text((std::istreambuf_iterator<char>(searcher_in)),
                                  std::istreambuf_iterator<char>());
  EXPECT_NE(searcher_text.find("the searcher was stopped"), std::string::npos) << searcher_text;
  EXPECT_NE(searcher_text.find("stopped after"), std::string::npos) << searcher_text;

  const auto again = testing::run_command(std::string(PROTUNER_CLI) + " up " + suite +
                                          " --data-dir " + data + " --out " + out);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("resuming suite 'up test'"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("geomean"), std::string::npos) << again.output;
  std::ifstream source(out + "/blur/schedule.h");
  const std::string text((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("inline void apply_schedule_blur(::Halide::Pipeline"), std::string::npos)
      << again.output;
  std::ifstream report_in(out + "/report.json");
  const json report = json::parse(report_in);
  EXPECT_EQ(report.at("phase"), "done");
  EXPECT_EQ(report.at("apps").at(0).at("phase"), "done");
  EXPECT_TRUE(report.at("apps").at(0).at("speedups").contains("Adams2019")) << report.dump(2);
}

}  // namespace
}  // namespace protuner

namespace protuner {
namespace {

// A Prometheus on 127.0.0.1:`port` scraping `targets` (loopback metrics ports) every second.
class PrometheusTest : public FarmProcessTest {
 protected:
  std::shared_ptr<ChildProcess> prometheus(int port, const std::vector<int> &targets) {
    const fs::path config = dir_ / "prometheus.yml";
    std::ofstream out(config);
    out << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
           "scrape_configs:\n  - job_name: protuner\n    static_configs:\n"
           "      - targets: [";
    for (size_t i = 0; i < targets.size(); ++i) {
      out << (i ? ", " : "") << "'127.0.0.1:" << targets[i] << "'";
    }
    out << "]\n";
    out.close();
    return start({PROTUNER_PROMETHEUS, "--config.file=" + config.string(),
                  "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                  "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                 "prometheus");
  }

  // The result vector of an instant query; throws when Prometheus does not answer `success`.
  static json query(int port, const std::string &expr) {
    std::string encoded;
    for (unsigned char c : expr) {
      if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
        encoded += static_cast<char>(c);
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", c);
        encoded += hex;
      }
    }
    const std::string response = testing::http_get(port, "/api/v1/query?query=" + encoded);
    const size_t body = response.find("\r\n\r\n");
    if (body == std::string::npos) throw std::runtime_error("no HTTP body: " + response);
    const json reply = json::parse(response.substr(body + 4));
    if (reply.value("status", "") != "success") throw std::runtime_error(reply.dump());
    return reply.at("data").at("result");
  }
};

// Every target of every panel, with each template variable replaced by its "all" value.
struct DashboardQuery {
  std::string where;  // file: panel title
  std::string expr;
};

std::vector<DashboardQuery> dashboard_queries() {
  std::vector<DashboardQuery> out;
  for (const auto &entry : fs::directory_iterator(fs::path(PROTUNER_SOURCE_DIR) / "dashboards")) {
    if (entry.path().extension() != ".json") continue;
    const std::string file = entry.path().filename().string();
    std::ifstream in(entry.path());
    const json dashboard = json::parse(in);
    EXPECT_FALSE(dashboard.value("uid", "").empty()) << file << ": no uid";
    std::map<std::string, std::string> all_values;
    for (const json &var : dashboard.at("templating").at("list")) {
      if (var.value("type", "") == "query") {
        EXPECT_TRUE(var.value("includeAll", false)) << file << ": $" << var.at("name");
        all_values["$" + var.at("name").get<std::string>()] = var.value("allValue", ".*");
      }
    }
    std::set<int> ids;
    for (const json &panel : dashboard.at("panels")) {
      const std::string where = file + ": " + panel.at("title").get<std::string>();
      EXPECT_TRUE(ids.insert(panel.at("id").get<int>()).second) << where << ": id repeated";
      EXPECT_EQ(panel.at("datasource").at("uid"), "${datasource}") << where;
      EXPECT_FALSE(panel.at("targets").empty()) << where << ": no targets";
      for (const json &target : panel.at("targets")) {
        std::string expr = target.at("expr");
        for (const auto &[name, value] : all_values) {
          for (size_t at; (at = expr.find(name)) != std::string::npos;) {
            expr.replace(at, name.size(), value);
          }
        }
        EXPECT_EQ(expr.find('$'), std::string::npos) << where << ": unknown variable in " << expr;
        out.push_back({where, expr});
      }
    }
  }
  return out;
}

TEST_F(PrometheusTest, EveryDashboardQueryAnswersWithDataFromTheDaemons) {
  const std::vector<DashboardQuery> queries = dashboard_queries();
  ASSERT_FALSE(queries.empty());
  const int coord_metrics = testing::free_loopback_port();
  const int search_metrics = testing::free_loopback_port();
  const int prom_port = testing::free_loopback_port();
  auto prom = prometheus(prom_port, {measurer_metrics_port_, coord_metrics, search_metrics});
  auto coord = coordinator("coordinator-a", coord_metrics);
  auto search = searcher("searcher-a", {}, search_metrics);
  const std::string suite = submit(1);
  const json s = wait_for(suite, suite_done, 180s);
  ASSERT_TRUE(suite_done(s)) << s.dump(2);
  expect_finished_app(suite, 1);

  // The app's final series come from the coordinator's last tick; give Prometheus a few
  // scrapes to take them, then every query must have data.
  std::vector<std::string> empty;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  do {
    empty.clear();
    for (const DashboardQuery &q : queries) {
      try {
        if (query(prom_port, q.expr).empty()) empty.push_back(q.where + ": " + q.expr);
      } catch (const std::exception &e) {
        empty.push_back(q.where + ": " + q.expr + ": " + e.what());
      }
    }
    if (!empty.empty()) std::this_thread::sleep_for(1s);
  } while (!empty.empty() && std::chrono::steady_clock::now() < deadline);
  for (const std::string &e : empty) ADD_FAILURE() << "no data: " << e;

  // The dashboard's per-app numbers are Redis's final ones, once Prometheus has scraped the
  // coordinator after its last tick (a scrape from before it holds a running app's ratio).
  RedisClient redis("127.0.0.1", redis_server_.port());
  const auto app = farm::read_app(redis, suite, "blur");
  ASSERT_TRUE(app && app->best_ms && app->finished_ms && app->started_ms);
  const auto expect_scraped = [&](const std::string &metric, double want, double tolerance) {
    const std::string expr = metric + "{suite=\"" + suite + "\"}";
    json got;
    const auto until = std::chrono::steady_clock::now() + 30s;
    do {
      got = query(prom_port, expr);
      if (got.size() == 1 &&
          std::abs(std::stod(got[0].at("value")[1].get<std::string>()) - want) <= tolerance) {
        return;
      }
      std::this_thread::sleep_for(500ms);
    } while (std::chrono::steady_clock::now() < until);
    ADD_FAILURE() << expr << ": want " << want << ", Prometheus has " << got.dump();
  };
  expect_scraped("protuner_app_best_seconds", *app->best_ms / 1000.0, 1e-9);
  expect_scraped("protuner_app_budget_used_ratio",
                 static_cast<double>(*app->finished_ms - *app->started_ms) / app->budget_ms,
                 1e-6);
}

}  // namespace
}  // namespace protuner
