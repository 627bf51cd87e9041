// The app records, results, baselines and finished jobs in Redis (app_state.h). Each
// read-modify-write is one Lua script (atomic on the server); times come from the server's
// clock (TIME), so searchers and the coordinator on different hosts agree on deadlines.
#include "common/farm/app_state.h"

#include <nlohmann/json.hpp>

#include "common/farm/library_store.h"
#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/farm/server_time.h"
#include "common/redis_client.h"

namespace protuner::farm {
namespace {

using json = nlohmann::json;

// KEYS: app, jobs stream, suite state. ARGV: schema, budget_ms, jobs_total, job JSON...
constexpr const char *kQueueApp = R"(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('HGET', KEYS[3], 'phase') == 'cancelled' then return 0 end
redis.call('HSET', KEYS[1], 'schema', ARGV[1], 'phase', 'waiting', 'budget_ms', ARGV[2],
           'jobs_total', ARGV[3], 'jobs_done', 0, 'measurements', 0, 'failures', 0)
for i = 4, #ARGV do
  redis.call('XADD', KEYS[2], '*', 'schema', ARGV[1], 'job', ARGV[i])
end
return 1
)";

// KEYS: app. Returns the server time; a waiting app starts running with its deadline.
constexpr const char *kStartApp = R"(
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('NOAPP ' .. KEYS[1] .. ' does not exist')
end
if redis.call('HGET', KEYS[1], 'phase') == 'waiting' then
  local budget = tonumber(redis.call('HGET', KEYS[1], 'budget_ms'))
  redis.call('HSET', KEYS[1], 'phase', 'running', 'started_ms', string.format('%.0f', now),
             'deadline_ms', string.format('%.0f', now + budget))
end
return string.format('%.0f', now)
)";

// KEYS: results, app, best history. ARGV: key, candidate JSON, status, min_ms ("" unless
// ok).
constexpr const char *kRecordCandidate = R"(
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
if redis.call('HGET', KEYS[2], 'phase') ~= 'running' then return 1 end
redis.call('HINCRBY', KEYS[2], 'measurements', 1)
if ARGV[3] ~= 'ok' then
  redis.call('HINCRBY', KEYS[2], 'failures', 1)
  redis.call('HINCRBY', KEYS[2], 'failed:' .. ARGV[3], 1)
  return 1
end
local best = redis.call('HGET', KEYS[2], 'best_ms')
if (not best) or tonumber(ARGV[4]) < tonumber(best) then
  redis.call('HSET', KEYS[2], 'best_ms', ARGV[4], 'best_key', ARGV[1])
  redis.call('ZADD', KEYS[3], now, ARGV[4])
end
return 1
)";

// KEYS: jobs-done, app. ARGV: seed, summary JSON.
constexpr const char *kRecordJobDone = R"(
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'jobs_done', 1)
return 1
)";

// KEYS: app. Returns the final phase it set, or false.
constexpr const char *kFinishIfDue = R"(
local phase = redis.call('HGET', KEYS[1], 'phase')
if phase ~= 'running' and phase ~= 'waiting' then return false end
local done = tonumber(redis.call('HGET', KEYS[1], 'jobs_done') or '0')
local total = tonumber(redis.call('HGET', KEYS[1], 'jobs_total') or '0')
local deadline = redis.call('HGET', KEYS[1], 'deadline_ms')
if done < total and ((not deadline) or now < tonumber(deadline)) then return false end
local final = 'done'
if not redis.call('HGET', KEYS[1], 'best_ms') then
  final = 'failed'
  local measured = redis.call('HGET', KEYS[1], 'measurements') or '0'
  local failed = redis.call('HGET', KEYS[1], 'failures') or '0'
  redis.call('HSETNX', KEYS[1], 'error', 'no schedule measured ok (' .. measured ..
             ' measured, ' .. failed .. ' failed)')
end
redis.call('HSET', KEYS[1], 'phase', final, 'finished_ms', string.format('%.0f', now))
return final
)";

// KEYS: app.
constexpr const char *kCancelApp = R"(
local phase = redis.call('HGET', KEYS[1], 'phase')
if phase ~= 'running' and phase ~= 'waiting' then return 0 end
redis.call('HSET', KEYS[1], 'phase', 'cancelled', 'finished_ms', string.format('%.0f', now))
return 1
)";

std::string app_suffix(const std::string &suite, const std::string &app) {
  return suite + ":" + app;
}

// Each thread keeps its own script objects: a RedisScript caches its SHA1 and is not to be
// shared between threads (redis_client.h).
RedisScript &script(const char *name) {
  thread_local std::map<std::string, RedisScript> scripts;
  const auto it = scripts.find(name);
  if (it != scripts.end()) return it->second;
  static const std::map<std::string, std::string> sources{
      {"queue app", kQueueApp},
      {"start app", std::string(kServerNowLua) + kStartApp},
      {"record candidate", std::string(kServerNowLua) + kRecordCandidate},
      {"record job done", kRecordJobDone},
      {"finish app if due", std::string(kServerNowLua) + kFinishIfDue},
      {"cancel app", std::string(kServerNowLua) + kCancelApp},
  };
  return scripts.emplace(name, RedisScript(std::string("app state: ") + name, sources.at(name)))
      .first->second;
}

int64_t to_int(const std::string &text, const std::string &where, const std::string &field) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception &) {
  }
  throw RecordFormatError(where + ": field \"" + field + "\" is '" + text + "', not an integer");
}

double to_double(const std::string &text, const std::string &where, const std::string &field) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception &) {
  }
  throw RecordFormatError(where + ": field \"" + field + "\" is '" + text + "', not a number");
}

json optional_number_json(const std::optional<double> &v) { return v ? json(*v) : json(nullptr); }

std::string number_text(double v) {
  json j = v;
  return j.dump();
}

}  // namespace

std::string app_key(const std::string &suite, const std::string &app) {
  return key("app:" + app_suffix(suite, app));
}
std::string results_key(const std::string &suite, const std::string &app) {
  return key("results:" + app_suffix(suite, app));
}
std::string baselines_key(const std::string &suite, const std::string &app) {
  return key("baselines:" + app_suffix(suite, app));
}
std::string jobs_done_key(const std::string &suite, const std::string &app) {
  return key("jobs-done:" + app_suffix(suite, app));
}
std::string best_history_key(const std::string &suite, const std::string &app) {
  return key("best-history:" + app_suffix(suite, app));
}

const char *app_phase_name(AppPhase phase) {
  switch (phase) {
    case AppPhase::kWaiting: return "waiting";
    case AppPhase::kRunning: return "running";
    case AppPhase::kDone: return "done";
    case AppPhase::kFailed: return "failed";
    case AppPhase::kCancelled: return "cancelled";
  }
  return "unknown";
}

AppPhase parse_app_phase(const std::string &name, const std::string &where) {
  for (AppPhase p : {AppPhase::kWaiting, AppPhase::kRunning, AppPhase::kDone, AppPhase::kFailed,
                     AppPhase::kCancelled}) {
    if (name == app_phase_name(p)) return p;
  }
  throw RecordFormatError(where + ": phase '" + name +
                          "' is not waiting, running, done, failed or cancelled");
}

bool is_final(AppPhase phase) {
  return phase == AppPhase::kDone || phase == AppPhase::kFailed || phase == AppPhase::kCancelled;
}

std::string candidate_key(const std::string &schedule_json) {
  return sha256_of_bytes(schedule_json);
}

std::string candidate_to_json(const MeasuredCandidate &c) {
  return json{{"schema", kLayoutVersion},
              {"key", c.key},
              {"schedule_json", c.schedule_json},
              {"status", c.status},
              {"min_ms", optional_number_json(c.min_ms)},
              {"median_ms", optional_number_json(c.median_ms)},
              {"error", c.error},
              {"searcher", c.searcher},
              {"seed", c.seed},
              {"result", c.result_json}}
      .dump();
}

MeasuredCandidate candidate_from_json(const std::string &text, const std::string &where) {
  const json object =
      parse_record(text, where, "candidate",
                   {"schema", "key", "schedule_json", "status", "min_ms", "median_ms", "error",
                    "searcher", "seed", "result"});
  const RecordFields f(object, where, "candidate");
  MeasuredCandidate c;
  c.key = f.nonempty_string("key");
  c.schedule_json = f.string("schedule_json");
  c.status = f.nonempty_string("status");
  c.min_ms = f.optional_number("min_ms");
  c.median_ms = f.optional_number("median_ms");
  c.error = f.string("error");
  c.searcher = f.string("searcher");
  c.seed = f.integer("seed", 0, INT64_MAX);
  c.result_json = f.string("result");
  return c;
}

std::string job_summary_to_json(const JobSummary &s) {
  return json{{"schema", kLayoutVersion},
              {"seed", s.seed},
              {"searcher", s.searcher},
              {"best_ms", optional_number_json(s.best_ms)},
              {"measurements", s.measurements},
              {"errors", s.errors}}
      .dump();
}

JobSummary job_summary_from_json(const std::string &text, const std::string &where) {
  const json object = parse_record(text, where, "job summary",
                                   {"schema", "seed", "searcher", "best_ms", "measurements",
                                    "errors"});
  const RecordFields f(object, where, "job summary");
  JobSummary s;
  s.seed = f.integer("seed", 0, INT64_MAX);
  s.searcher = f.string("searcher");
  s.best_ms = f.optional_number("best_ms");
  s.measurements = f.integer("measurements", 0, INT64_MAX);
  s.errors = f.strings("errors");
  return s;
}

bool queue_app(RedisClient &redis, const std::string &suite, const std::string &app,
               int64_t budget_ms, const std::vector<Job> &jobs) {
  int64_t searches = 0;
  std::vector<std::string> args{std::to_string(kLayoutVersion), std::to_string(budget_ms), ""};
  for (const Job &job : jobs) {
    searches += job.kind == JobKind::kSearch ? 1 : 0;
    args.push_back(job_to_json(job));
  }
  args[2] = std::to_string(searches);
  return redis
             .eval(script("queue app"), {app_key(suite, app), jobs_stream(), suite_state_key(suite)},
                   args)
             .integer == 1;
}

void note_app_error(RedisClient &redis, const std::string &suite, const std::string &app,
                    const std::string &error) {
  redis.command({"HSETNX", app_key(suite, app), "error", error});
}

std::string pin_host_class(RedisClient &redis, const std::string &suite, const std::string &app,
                           const std::string &candidate) {
  const std::string key = app_key(suite, app);
  if (!candidate.empty()) redis.command({"HSETNX", key, "host_class", candidate});
  const RedisReply chosen = redis.command({"HGET", key, "host_class"});
  return chosen.is_nil() ? std::string() : chosen.str;
}

std::vector<std::string> suite_ids(RedisClient &redis) {
  std::vector<std::string> ids;
  for (const RedisReply &id : redis.command({"ZRANGE", suites_index(), "0", "-1"}).elements) {
    ids.push_back(id.str);
  }
  return ids;
}

std::optional<std::string> suite_phase(RedisClient &redis, const std::string &suite) {
  const RedisReply phase = redis.command({"HGET", suite_state_key(suite), "phase"});
  if (phase.is_nil()) return std::nullopt;
  return phase.str;
}

AppStart start_app(RedisClient &redis, const std::string &suite, const std::string &app) {
  AppStart out;
  try {
    out.now_ms = to_int(redis.eval(script("start app"), {app_key(suite, app)}, {}).str,
                        app_key(suite, app), "TIME");
  } catch (const ReplyError &e) {
    if (e.code() == "NOAPP") throw ConfigError(std::string("farm: ") + e.what());
    throw;
  }
  std::optional<AppState> state = read_app(redis, suite, app);
  if (!state) throw ConfigError("farm: " + app_key(suite, app) + " vanished while starting");
  out.state = *state;
  return out;
}

bool record_candidate(RedisClient &redis, const std::string &suite, const std::string &app,
                      const MeasuredCandidate &candidate) {
  const std::string min = candidate.status == "ok" && candidate.min_ms
                              ? number_text(*candidate.min_ms)
                              : std::string();
  return redis
             .eval(script("record candidate"),
                   {results_key(suite, app), app_key(suite, app), best_history_key(suite, app)},
                   {candidate.key, candidate_to_json(candidate), candidate.status, min})
             .integer == 1;
}

bool record_baseline(RedisClient &redis, const std::string &suite, const std::string &app,
                     const MeasuredCandidate &baseline) {
  return redis
             .command({"HSETNX", baselines_key(suite, app), baseline.key,
                       candidate_to_json(baseline)})
             .integer == 1;
}

bool has_baseline(RedisClient &redis, const std::string &suite, const std::string &app,
                  const std::string &name) {
  return redis.command({"HEXISTS", baselines_key(suite, app), name}).integer == 1;
}

bool record_job_done(RedisClient &redis, const std::string &suite, const std::string &app,
                     const JobSummary &summary) {
  return redis
             .eval(script("record job done"), {jobs_done_key(suite, app), app_key(suite, app)},
                   {std::to_string(summary.seed), job_summary_to_json(summary)})
             .integer == 1;
}

std::optional<AppPhase> finish_app_if_due(RedisClient &redis, const std::string &suite,
                                          const std::string &app) {
  const RedisReply reply = redis.eval(script("finish app if due"), {app_key(suite, app)}, {});
  if (reply.kind != RedisReply::Kind::kString) return std::nullopt;
  return parse_app_phase(reply.str, app_key(suite, app));
}

bool cancel_app(RedisClient &redis, const std::string &suite, const std::string &app) {
  return redis.eval(script("cancel app"), {app_key(suite, app)}, {}).integer == 1;
}

std::optional<AppState> read_app(RedisClient &redis, const std::string &suite,
                                 const std::string &app) {
  const std::string where = app_key(suite, app);
  const RedisReply reply = redis.command({"HGETALL", where});
  if (reply.elements.empty()) return std::nullopt;
  std::map<std::string, std::string> fields;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    fields[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  const auto get = [&](const std::string &name) -> std::optional<std::string> {
    const auto it = fields.find(name);
    if (it == fields.end()) return std::nullopt;
    return it->second;
  };
  check_record_schema(get("schema").value_or(""), where);
  AppState s;
  s.phase = parse_app_phase(get("phase").value_or(""), where);
  const auto integer = [&](const char *name) -> std::optional<int64_t> {
    const auto v = get(name);
    if (!v) return std::nullopt;
    return to_int(*v, where, name);
  };
  s.budget_ms = integer("budget_ms").value_or(0);
  s.jobs_total = integer("jobs_total").value_or(0);
  s.jobs_done = integer("jobs_done").value_or(0);
  s.jobs_joined = integer("joined").value_or(0);
  s.started_ms = integer("started_ms");
  s.deadline_ms = integer("deadline_ms");
  s.finished_ms = integer("finished_ms");
  s.measurements = integer("measurements").value_or(0);
  s.failures = integer("failures").value_or(0);
  if (const auto best = get("best_ms")) s.best_ms = to_double(*best, where, "best_ms");
  s.best_key = get("best_key").value_or("");
  s.error = get("error").value_or("");
  const std::string failed = "failed:";
  for (const auto &[name, value] : fields) {
    if (name.rfind(failed, 0) == 0) {
      s.failures_by_status[name.substr(failed.size())] = to_int(value, where, name);
    }
  }
  return s;
}

std::optional<MeasuredCandidate> read_candidate(RedisClient &redis, const std::string &suite,
                                                const std::string &app, const std::string &key) {
  const RedisReply reply = redis.command({"HGET", results_key(suite, app), key});
  if (reply.is_nil()) return std::nullopt;
  return candidate_from_json(reply.str, results_key(suite, app) + " " + key);
}

std::vector<MeasuredCandidate> read_candidates(RedisClient &redis, const std::string &suite,
                                               const std::string &app) {
  std::vector<MeasuredCandidate> out;
  const RedisReply reply = redis.command({"HGETALL", results_key(suite, app)});
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out.push_back(candidate_from_json(reply.elements[i + 1].str,
                                      results_key(suite, app) + " " + reply.elements[i].str));
  }
  return out;
}

std::map<std::string, MeasuredCandidate> read_baselines(RedisClient &redis,
                                                        const std::string &suite,
                                                        const std::string &app) {
  std::map<std::string, MeasuredCandidate> out;
  const RedisReply reply = redis.command({"HGETALL", baselines_key(suite, app)});
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out[reply.elements[i].str] = candidate_from_json(
        reply.elements[i + 1].str, baselines_key(suite, app) + " " + reply.elements[i].str);
  }
  return out;
}

}  // namespace protuner::farm
