// What the farm knows of each app of a suite while it runs and after: its phase, budget
// clock, counters and best schedule (the app record), every candidate measured for it, its
// baselines, and which of its jobs have finished. Searchers write as they go, the
// coordinator moves apps to their final phase, status and report read; every write that
// depends on what is already there is one Lua script, so two searchers (or a job delivered
// twice) never count a candidate twice or lose a best.
//
// Keys (redis_schema.h lists them with the rest), for suite S and app A:
//   protuner:v1:app:S:A         hash    the app record (fields below)
//   protuner:v1:results:S:A     hash    candidate key -> MeasuredCandidate JSON
//   protuner:v1:baselines:S:A   hash    baseline name -> MeasuredCandidate JSON
//   protuner:v1:jobs-done:S:A   hash    job seed -> JobSummary JSON
//   protuner:v1:best-history:S:A  zset  each new best_ms (the member, as text), scored by
//                                       the server time (unix ms) it was recorded
//
// App record fields: schema, phase (waiting, running, done, failed, cancelled), budget_ms,
// jobs_total (search jobs, the suite's seeds and those free searchers added: app_join.h),
// jobs_done, joined (the search jobs free searchers added), started_ms, deadline_ms, finished_ms (Redis server
// time, unix ms, so hosts with skewed clocks agree), measurements, failures,
// failed:<status> (one counter per failure status), best_ms, best_key, error, and
// host_class (measurer_registry.h: the class of measurers all the app's jobs measure on,
// set once by the first job of a searcher that finds its measurers in the registry).
//
// An app's budget starts when its first search job starts (start_app) and ends
// budget_ms later; the coordinator finishes the app then, or once every search job is done
// (finish_app_if_due). After that the best is frozen: later results are kept (training
// data) but change neither the counters nor the best.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/farm/job_record.h"

namespace protuner {

class RedisClient;

namespace farm {

std::string app_key(const std::string &suite, const std::string &app);
std::string results_key(const std::string &suite, const std::string &app);
std::string baselines_key(const std::string &suite, const std::string &app);
std::string jobs_done_key(const std::string &suite, const std::string &app);
std::string best_history_key(const std::string &suite, const std::string &app);

enum class AppPhase { kWaiting, kRunning, kDone, kFailed, kCancelled };

// "waiting", "running", "done", "failed", "cancelled".
const char *app_phase_name(AppPhase phase);
// Throws RecordFormatError (record_json.h) naming `where` for an unknown name.
AppPhase parse_app_phase(const std::string &name, const std::string &where);
// done, failed and cancelled: nothing changes the app's result any more.
bool is_final(AppPhase phase);

struct AppState {
  AppPhase phase = AppPhase::kWaiting;
  int64_t budget_ms = 0;
  int64_t jobs_total = 0, jobs_done = 0;
  int64_t jobs_joined = 0;  // of jobs_total, the ones free searchers added (app_join.h)
  std::optional<int64_t> started_ms, deadline_ms, finished_ms;
  int64_t measurements = 0, failures = 0;
  std::map<std::string, int64_t> failures_by_status;
  std::optional<double> best_ms;
  std::string best_key;  // the results field of the best candidate
  std::string error;     // why the app failed, or ""
};

// One measurement as the farm keeps it. `key` is the field it is stored under: the
// candidate's schedule hash (candidate_key) or a baseline's name.
struct MeasuredCandidate {
  std::string key;
  std::string schedule_json;  // protuner schedules; "" for baselines
  std::string status;         // a MeasureStatus name (measurer/measurement.h)
  std::optional<double> min_ms, median_ms;  // when status is "ok"
  std::string error;          // the error's first line, when not ok
  std::string searcher;       // who measured it
  int64_t seed = 0;           // the job's seed
  // The full MeasureResult JSON (measure_json.h), for training data and reports.
  std::string result_json;
};

// The hash a candidate is stored under: the SHA-256 of its schedule JSON, so a schedule
// measured by two searchers, or twice by one job delivered twice, is one entry.
std::string candidate_key(const std::string &schedule_json);

std::string candidate_to_json(const MeasuredCandidate &c);
MeasuredCandidate candidate_from_json(const std::string &text, const std::string &where);

// What one finished job contributed, stored once per (app, seed).
struct JobSummary {
  int64_t seed = 0;
  std::string searcher;
  std::optional<double> best_ms;
  int64_t measurements = 0;
  std::vector<std::string> errors;
};

std::string job_summary_to_json(const JobSummary &s);
JobSummary job_summary_from_json(const std::string &text, const std::string &where);

// Queues an app: creates its record (phase waiting, the search jobs among `jobs` as
// jobs_total) and adds every job to the job queue, all in one script, unless the record
// exists or the suite is cancelled; true when it did. So a coordinator restarted halfway through a suite queues
// each app's jobs exactly once.
bool queue_app(RedisClient &redis, const std::string &suite, const std::string &app,
               int64_t budget_ms, const std::vector<Job> &jobs);

// Records why the app failed, unless a reason is recorded (the first one stands).
void note_app_error(RedisClient &redis, const std::string &suite, const std::string &app,
                    const std::string &error);

// Sets the app's host_class to `candidate` unless one is set (HSETNX: the first job's
// choice stands for all of them); returns the class the app has after the call, "" when
// none is set and `candidate` is empty.
std::string pin_host_class(RedisClient &redis, const std::string &suite, const std::string &app,
                           const std::string &candidate);

// Every submitted suite's id, oldest first (the suites index, redis_schema.h).
std::vector<std::string> suite_ids(RedisClient &redis);

// The phase field of the suite's state hash (redis_schema.h); nullopt while the
// coordinator has not queued the suite.
std::optional<std::string> suite_phase(RedisClient &redis, const std::string &suite);

// A search job starting: the first one starts the app's budget clock. Returns the record
// after the call and the server's time then, so the caller can place the deadline on its
// own clock. Throws ConfigError when the app has no record.
struct AppStart {
  AppState state;
  int64_t now_ms = 0;
};
AppStart start_app(RedisClient &redis, const std::string &suite, const std::string &app);

// Stores a candidate under its key unless one is stored; when new and the app is running,
// counts it and, when it is the fastest, makes it the best and adds it to the best
// history. Returns whether it was new.
bool record_candidate(RedisClient &redis, const std::string &suite, const std::string &app,
                      const MeasuredCandidate &candidate);

// Stores a baseline result under its name unless one is stored; true when it was new.
bool record_baseline(RedisClient &redis, const std::string &suite, const std::string &app,
                     const MeasuredCandidate &baseline);
bool has_baseline(RedisClient &redis, const std::string &suite, const std::string &app,
                  const std::string &name);

// Records a finished search job once (by seed) and counts it; true when it was new.
bool record_job_done(RedisClient &redis, const std::string &suite, const std::string &app,
                     const JobSummary &summary);

// Moves a running or waiting app to its final phase when it is due: every search job done,
// or its deadline passed (done when something measured ok, else failed with the reason
// note_app_error recorded, or one naming the counts). Returns the new phase, or nothing when the app is not due or
// already final.
std::optional<AppPhase> finish_app_if_due(RedisClient &redis, const std::string &suite,
                                          const std::string &app);
// Cancels an app that is not final; true when it did.
bool cancel_app(RedisClient &redis, const std::string &suite, const std::string &app);

// The app record; nullopt when there is none. Throws SchemaError, RecordFormatError for a
// record this build cannot read.
std::optional<AppState> read_app(RedisClient &redis, const std::string &suite,
                                 const std::string &app);
std::optional<MeasuredCandidate> read_candidate(RedisClient &redis, const std::string &suite,
                                                const std::string &app, const std::string &key);
std::vector<MeasuredCandidate> read_candidates(RedisClient &redis, const std::string &suite,
                                               const std::string &app);
std::map<std::string, MeasuredCandidate> read_baselines(RedisClient &redis,
                                                        const std::string &suite,
                                                        const std::string &app);

}  // namespace farm
}  // namespace protuner
