// The live progress of an app's search jobs: per job (by seed), how far its searches have
// come (rollouts, root decisions), what it has measured and its best so far. A searcher
// writes its job's record at every job heartbeat and once more when the job ends, so
// `protuner status` shows a job's search moving between measurements and what a finished
// or killed job did; the record of a job run again (reclaimed) is the latest holder's.
//
// Key (redis_schema.h lists it with the rest), for suite S and app A:
//   protuner:v1:progress:S:A    hash    job seed -> JobProgress JSON (schema, seed,
//                                       searcher, rollouts, decisions, measurements,
//                                       best_ms, elapsed_s)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace protuner {

class RedisClient;

namespace farm {

std::string progress_key(const std::string &suite, const std::string &app);

struct JobProgress {
  int64_t seed = 0;
  std::string searcher;
  int64_t rollouts = 0;           // complete schedules the job's searches reached
  int64_t decisions = 0;          // root decisions they took
  int64_t measurements = 0;       // candidates the job measured (or found in the farm's caches)
  std::optional<double> best_ms;  // the job's fastest measured schedule
  double elapsed_s = 0;           // since the app's budget started
};

std::string job_progress_to_json(const JobProgress &p);
// Throws RecordFormatError or SchemaError (record_json.h) naming `where`.
JobProgress job_progress_from_json(const std::string &text, const std::string &where);

// Replaces the record of job `p.seed` of the app.
void record_job_progress(RedisClient &redis, const std::string &suite, const std::string &app,
                         const JobProgress &p);
// Every job's record, by seed.
std::vector<JobProgress> read_job_progress(RedisClient &redis, const std::string &suite,
                                           const std::string &app);

}  // namespace farm
}  // namespace protuner
