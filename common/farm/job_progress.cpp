// The progress records of an app's search jobs in Redis (job_progress.h).
#include "common/farm/job_progress.h"

#include <nlohmann/json.hpp>

#include <climits>

#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"

namespace protuner::farm {

std::string progress_key(const std::string &suite, const std::string &app) {
  return key("progress:" + suite + ":" + app);
}

std::string job_progress_to_json(const JobProgress &p) {
  return nlohmann::json{{"schema", kLayoutVersion},
                        {"seed", p.seed},
                        {"searcher", p.searcher},
                        {"rollouts", p.rollouts},
                        {"decisions", p.decisions},
                        {"measurements", p.measurements},
                        {"best_ms", p.best_ms ? nlohmann::json(*p.best_ms) : nlohmann::json()},
                        {"elapsed_s", p.elapsed_s}}
      .dump();
}

JobProgress job_progress_from_json(const std::string &text, const std::string &where) {
  const nlohmann::json object = parse_record(text, where, "job progress",
                                             {"schema", "seed", "searcher", "rollouts", "decisions",
                                              "measurements", "best_ms", "elapsed_s"});
  const RecordFields f(object, where, "job progress");
  JobProgress p;
  p.seed = f.integer("seed", 0, INT64_MAX);
  p.searcher = f.string("searcher");
  p.rollouts = f.integer("rollouts", 0, INT64_MAX);
  p.decisions = f.integer("decisions", 0, INT64_MAX);
  p.measurements = f.integer("measurements", 0, INT64_MAX);
  p.best_ms = f.optional_number("best_ms");
  const std::optional<double> elapsed = f.optional_number("elapsed_s");
  if (!elapsed || *elapsed < 0) {
    throw RecordFormatError(where + ": job progress field 'elapsed_s' must be a number >= 0");
  }
  p.elapsed_s = *elapsed;
  return p;
}

void record_job_progress(RedisClient &redis, const std::string &suite, const std::string &app,
                         const JobProgress &p) {
  redis.command(
      {"HSET", progress_key(suite, app), std::to_string(p.seed), job_progress_to_json(p)});
}

std::vector<JobProgress> read_job_progress(RedisClient &redis, const std::string &suite,
                                           const std::string &app) {
  const std::string where = progress_key(suite, app);
  const RedisReply reply = redis.command({"HGETALL", where});
  std::vector<JobProgress> out;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out.push_back(job_progress_from_json(reply.elements[i + 1].str,
                                         where + " field " + reply.elements[i].str));
  }
  return out;
}

}  // namespace protuner::farm
