// Reading a suite's results from Redis, and printing them (farm_report.h).
#include "coordinator/farm_report.h"

#include <Halide.h>

#include <cmath>
#include <ostream>

#include "common/app.h"
#include "common/errors.h"
#include "common/farm/library_store.h"
#include "common/farm/measurer_registry.h"
#include "common/farm/redis_schema.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/redis_client.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "coordinator/text_table.h"
#include "coordinator/tune.h"

namespace protuner {
namespace {

using json = nlohmann::json;

json number_or_null(const std::optional<double> &v) { return v ? json(*v) : json(nullptr); }
json integer_or_null(const std::optional<int64_t> &v) { return v ? json(*v) : json(nullptr); }

std::string ms_text(const std::optional<double> &ms) {
  return ms ? format_fixed(*ms, 3) : std::string("-");
}

const farm::AppRecord &find_app(const farm::SuiteRecord &suite, const std::string &app) {
  std::string names;
  for (const farm::AppRecord &a : suite.apps) {
    if (a.name == app) return a;
    names += (names.empty() ? "" : ", ") + a.name;
  }
  throw ConfigError("suite '" + suite.id + "' has no app '" + app + "' (it has: " + names + ")");
}

farm::MeasuredCandidate best_of(RedisClient &redis, const std::string &id, const std::string &app) {
  const auto state = farm::read_app(redis, id, app);
  const std::string why = !state ? "it has not started"
                          : state->error.empty() ? std::string("nothing measured ok yet")
                                                 : state->error;
  if (state && state->best_ms && !state->best_key.empty()) {
    if (auto best = farm::read_candidate(redis, id, app, state->best_key)) return *best;
  }
  throw ConfigError(id + "/" + app + " has no schedule measured ok: " + why);
}

}  // namespace

farm::SuiteRecord read_suite(RedisClient &redis, const std::string &id) {
  std::optional<farm::SuiteRecord> suite = farm::find_suite(redis, id);
  if (!suite) throw ConfigError("no suite '" + id + "' in " + redis.endpoint());
  return *suite;
}

std::string read_suite_phase(RedisClient &redis, const std::string &id) {
  return farm::suite_phase(redis, id).value_or("submitted");
}

std::string latest_suite_id(RedisClient &redis) {
  const RedisReply ids = redis.command({"ZRANGE", farm::suites_index(), "-1", "-1"});
  if (ids.elements.empty()) {
    throw ConfigError("no suite has been submitted to " + redis.endpoint());
  }
  return ids.elements[0].str;
}

FarmSuiteReport read_suite_report(RedisClient &redis, const std::string &given_id) {
  farm::check_layout(redis);
  const std::string id = given_id.empty() ? latest_suite_id(redis) : given_id;
  FarmSuiteReport r;
  r.suite = read_suite(redis, id);
  r.phase = read_suite_phase(redis, id);
  farm::JobQueue queue(redis);
  r.queue = queue.depths();
  r.measurers_registered = static_cast<int>(farm::live_measurers(redis).size());
  std::map<std::string, std::pair<double, int>> log_sums;  // baseline -> (sum of logs, n)
  for (const farm::AppRecord &app : r.suite.apps) {
    FarmAppReport a;
    a.app = app;
    a.state = farm::read_app(redis, id, app.name);
    a.baselines = farm::read_baselines(redis, id, app.name);
    a.jobs = farm::read_job_progress(redis, id, app.name);
    for (const farm::JobProgress &p : a.jobs) {
      a.rollouts += p.rollouts;
      a.decisions += p.decisions;
    }
    if (a.state && a.state->best_ms && !a.state->best_key.empty()) {
      a.best = farm::read_candidate(redis, id, app.name, a.state->best_key);
    }
    for (const auto &[name, b] : a.baselines) {
      if (!a.best || !a.best->min_ms || b.status != "ok" || !b.min_ms) continue;
      const double speedup = *b.min_ms / *a.best->min_ms;
      a.speedups[name] = speedup;
      log_sums[name].first += std::log(speedup);
      ++log_sums[name].second;
    }
    r.apps.push_back(std::move(a));
  }
  for (const auto &[name, sum] : log_sums) {
    r.geomean_speedups[name] = std::exp(sum.first / sum.second);
  }
  return r;
}

json suite_report_json(const FarmSuiteReport &r) {
  json apps = json::array();
  for (const FarmAppReport &a : r.apps) {
    json baselines = json::object();
    for (const auto &[name, b] : a.baselines) {
      baselines[name] = {{"status", b.status}, {"min_ms", number_or_null(b.min_ms)},
                         {"error", b.error}};
    }
    json app{{"name", a.app.name},
             {"generator", a.app.generator},
             {"library_sha256", a.app.library_sha256},
             {"budget_ms", a.app.budget_ms},
             {"seeds", a.app.seeds},
             {"phase", a.state ? farm::app_phase_name(a.state->phase) : "submitted"},
             {"baselines", baselines},
             {"speedups", a.speedups}};
    if (a.state) {
      const farm::AppState &s = *a.state;
      app["jobs_done"] = s.jobs_done;
      app["jobs_total"] = s.jobs_total;
      app["jobs_joined"] = s.jobs_joined;
      app["measurements"] = s.measurements;
      app["failures"] = s.failures;
      app["failures_by_status"] = s.failures_by_status;
      app["started_ms"] = integer_or_null(s.started_ms);
      app["deadline_ms"] = integer_or_null(s.deadline_ms);
      app["finished_ms"] = integer_or_null(s.finished_ms);
      app["best_ms"] = number_or_null(s.best_ms);
      app["best_key"] = s.best_key;
      app["error"] = s.error;
    }
    app["rollouts"] = a.rollouts;
    app["decisions"] = a.decisions;
    json jobs = json::array();
    for (const farm::JobProgress &p : a.jobs) {
      jobs.push_back({{"seed", p.seed},
                      {"searcher", p.searcher},
                      {"rollouts", p.rollouts},
                      {"decisions", p.decisions},
                      {"measurements", p.measurements},
                      {"best_ms", number_or_null(p.best_ms)},
                      {"elapsed_s", p.elapsed_s}});
    }
    app["jobs"] = std::move(jobs);
    apps.push_back(std::move(app));
  }
  return {{"suite", r.suite.id},
          {"name", r.suite.name},
          {"phase", r.phase},
          {"queue", {{"waiting", r.queue.waiting}, {"running", r.queue.running},
                     {"dead", r.queue.dead}}},
          {"measurers_registered", r.measurers_registered},
          {"apps", apps},
          {"geomean_speedups", r.geomean_speedups}};
}

void print_suite_report(const FarmSuiteReport &r, std::ostream &out) {
  std::vector<std::string> header{"app",      "phase",  "jobs",   "rollouts",
                                  "measured", "failed", "best ms"};
  for (const std::string &b : kFarmBaselines) header.push_back(b + " ms");
  for (const std::string &b : kFarmBaselines) header.push_back("vs " + b);
  header.push_back("note");
  TextTable table(header);
  for (const FarmAppReport &a : r.apps) {
    std::vector<std::string> row{a.app.name};
    if (!a.state) {
      row.insert(row.end(), {"submitted", "-", "-", "-", "-", "-"});
    } else {
      const farm::AppState &s = *a.state;
      row.insert(row.end(), {farm::app_phase_name(s.phase),
                             std::to_string(s.jobs_done) + "/" + std::to_string(s.jobs_total),
                             std::to_string(a.rollouts), std::to_string(s.measurements),
                             std::to_string(s.failures), ms_text(s.best_ms)});
    }
    for (const std::string &b : kFarmBaselines) {
      const auto it = a.baselines.find(b);
      row.push_back(it == a.baselines.end() ? "-"
                    : it->second.min_ms     ? format_fixed(*it->second.min_ms, 3)
                                            : it->second.status);
    }
    for (const std::string &b : kFarmBaselines) {
      const auto it = a.speedups.find(b);
      row.push_back(it == a.speedups.end() ? "-" : format_fixed(it->second, 2) + "x");
    }
    row.push_back(a.state ? a.state->error : "");
    table.add_row(row);
  }
  std::vector<std::string> geomean{"geomean", "", "", "", "", "", ""};
  for (size_t i = 0; i < kFarmBaselines.size(); ++i) geomean.push_back("");
  for (const std::string &b : kFarmBaselines) {
    const auto it = r.geomean_speedups.find(b);
    geomean.push_back(it == r.geomean_speedups.end() ? "-" : format_fixed(it->second, 2) + "x");
  }
  geomean.push_back("");
  table.add_row(geomean);
  out << "suite '" << r.suite.name << "' (" << r.suite.id << "): " << r.phase << "; queue: "
      << r.queue.waiting << " waiting, " << r.queue.running << " running, " << r.queue.dead
      << " dead-lettered; " << r.measurers_registered << " measurers registered\n\n";
  table.print(out);
}

std::string best_schedule_json(RedisClient &redis, const std::string &id, const std::string &app) {
  find_app(read_suite(redis, id), app);
  return best_of(redis, id, app).schedule_json;
}

std::string best_schedule_source(RedisClient &redis, const std::string &id, const std::string &app,
                                 const std::string &library_cache_dir) {
  const farm::AppRecord record = find_app(read_suite(redis, id), app);
  const farm::MeasuredCandidate best = best_of(redis, id, app);
  AppSpec spec;
  spec.name = record.name;
  spec.library = farm::fetch_library(redis, record.library_sha256, library_cache_dir);
  spec.generator = record.generator;
  spec.params = record.params;
  AppInstance instance = AppInstance::create(spec, host_target());
  Halide::Pipeline pipeline = instance.pipeline();
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(pipeline));
  const ScheduleState state = schedule_from_json(best.schedule_json, graph);
  std::string source = "// " + id + "/" + app + ": measured " +
                       format_fixed(best.min_ms.value_or(0), 3) + " ms by the farm\n";
  return source + schedule_source(state, identifier_for(app));
}

}  // namespace protuner
