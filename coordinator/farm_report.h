// A suite's results as the farm holds them, read from Redis for `protuner status`,
// `protuner report` and `protuner schedule`: per app its phase, counters, best measured
// schedule and baselines, and the speedup of the best over each baseline (baseline time /
// best time, both measured on the farm's measurers), with the geometric mean per baseline
// over the apps that have both, and how far each of its search jobs has come.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/farm/app_state.h"
#include "common/farm/job_progress.h"
#include "common/farm/job_queue.h"
#include "common/farm/suite_record.h"

namespace protuner {

class RedisClient;

// The baselines every app is measured against, in report order.
inline const std::vector<std::string> kFarmBaselines{"default", "own", "Adams2019"};

struct FarmAppReport {
  farm::AppRecord app;
  std::optional<farm::AppState> state;  // nothing before the coordinator queued the app
  std::optional<farm::MeasuredCandidate> best;
  std::map<std::string, farm::MeasuredCandidate> baselines;
  // baseline name -> its time / the best's time, for baselines measured ok.
  std::map<std::string, double> speedups;
  // Its search jobs' progress (job_progress.h), by seed, and their sums.
  std::vector<farm::JobProgress> jobs;
  int64_t rollouts = 0, decisions = 0;
};

struct FarmSuiteReport {
  farm::SuiteRecord suite;
  std::string phase;  // "submitted" (not yet queued), "queued", "done" or "cancelled"
  farm::QueueDepths queue;
  std::vector<FarmAppReport> apps;
  int measurers_registered = 0;  // live in the registry (measurer_registry.h)
  std::map<std::string, double> geomean_speedups;  // over apps with both times
};

// The record of suite `id`; throws ConfigError for an unknown suite.
farm::SuiteRecord read_suite(RedisClient &redis, const std::string &id);

// The phase of suite `id` as FarmSuiteReport::phase names it.
std::string read_suite_phase(RedisClient &redis, const std::string &id);

// The id of the latest suite submitted; throws ConfigError when there is none.
std::string latest_suite_id(RedisClient &redis);

// Reads suite `id` (empty: the latest). Throws ConfigError for an unknown suite, SchemaError
// or RecordFormatError for records this build cannot read, IoError when Redis fails.
FarmSuiteReport read_suite_report(RedisClient &redis, const std::string &id);

nlohmann::json suite_report_json(const FarmSuiteReport &report);
// The table `status` and `report` print.
void print_suite_report(const FarmSuiteReport &report, std::ostream &out);

// The best schedule of `app` in suite `id` as JSON, or as C++ source (apply_schedule.h:
// schedule_source) for which the app's library is fetched by hash into `library_cache_dir`
// and loaded to rebuild the schedule on its pipeline. Throws ConfigError when the app is
// unknown or has no schedule measured ok.
std::string best_schedule_json(RedisClient &redis, const std::string &id, const std::string &app);
std::string best_schedule_source(RedisClient &redis, const std::string &id, const std::string &app,
                                 const std::string &library_cache_dir);

}  // namespace protuner
