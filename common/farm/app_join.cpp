// A free searcher's choice of app and its join script (app_join.h).
#include "common/farm/app_join.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "common/farm/app_state.h"
#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/farm/server_time.h"
#include "common/redis_client.h"

namespace protuner::farm {
namespace {

// KEYS: the app, the jobs stream, then every app of its suite. ARGV: schema, the job as
// JSON (its seed is replaced), min_remaining_ms. Returns the seed, or -1 when it refuses.
constexpr const char *kJoinAppBody = R"(
if redis.call('HGET', KEYS[1], 'phase') ~= 'running' then return -1 end
for i = 3, #KEYS do
  local phase = redis.call('HGET', KEYS[i], 'phase')
  if (not phase) or phase == 'waiting' then return -1 end
end
local deadline = tonumber(redis.call('HGET', KEYS[1], 'deadline_ms'))
if (not deadline) or now + tonumber(ARGV[3]) > deadline then return -1 end
local seed = tonumber(redis.call('HGET', KEYS[1], 'jobs_total'))
local job = cjson.decode(ARGV[2])
job['seed'] = seed
redis.call('HINCRBY', KEYS[1], 'jobs_total', 1)
redis.call('HINCRBY', KEYS[1], 'joined', 1)
redis.call('XADD', KEYS[2], '*', 'schema', ARGV[1], 'job', cjson.encode(job))
return seed
)";

// `fraction` of an app's budget, in ms.
int64_t part_of_budget(double fraction, const AppRecord &app) {
  return static_cast<int64_t>(fraction * static_cast<double>(app.budget_ms));
}

}  // namespace

const char *join_policy_name(JoinPolicy policy) {
  switch (policy) {
    case JoinPolicy::kAdaptive: return "adaptive";
    case JoinPolicy::kRoundRobin: return "round-robin";
    case JoinPolicy::kOff: return "off";
  }
  return "unknown";
}

JoinPolicy parse_join_policy(const std::string &name, const std::string &where) {
  for (JoinPolicy p : {JoinPolicy::kAdaptive, JoinPolicy::kRoundRobin, JoinPolicy::kOff}) {
    if (name == join_policy_name(p)) return p;
  }
  throw ConfigError(where + ": '" + name + "' is not a join policy (adaptive, round-robin, off)");
}

double improvement_per_minute(const std::vector<BestPoint> &history, int64_t now_ms,
                              int64_t window_ms) {
  if (history.empty() || window_ms <= 0) return 0;
  const BestPoint *then = &history.front();
  for (const BestPoint &p : history) {
    if (p.at_ms > now_ms - window_ms) break;
    then = &p;
  }
  const double now_best = history.back().best_ms;
  if (!(then->best_ms > 0) || !(now_best > 0)) return 0;
  return std::log(then->best_ms / now_best) / (static_cast<double>(window_ms) / 60000.0);
}

std::optional<size_t> choose_app(const std::vector<JoinCandidate> &candidates,
                                 JoinPolicy policy) {
  if (policy == JoinPolicy::kOff || candidates.empty()) return std::nullopt;
  size_t chosen = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    const JoinCandidate &c = candidates[i], &best = candidates[chosen];
    if (policy == JoinPolicy::kAdaptive &&
        c.improvement_per_minute != best.improvement_per_minute) {
      if (c.improvement_per_minute > best.improvement_per_minute) chosen = i;
      continue;
    }
    if (c.unfinished_jobs < best.unfinished_jobs) chosen = i;
  }
  return chosen;
}

std::vector<BestPoint> read_best_history(RedisClient &redis, const std::string &suite,
                                         const std::string &app) {
  const std::string where = best_history_key(suite, app);
  const RedisReply reply = redis.command({"ZRANGE", where, "0", "-1", "WITHSCORES"});
  std::vector<BestPoint> out;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    BestPoint p;
    try {
      p.best_ms = std::stod(reply.elements[i].str);
      p.at_ms = std::llround(std::stod(reply.elements[i + 1].str));
    } catch (const std::exception &) {
      throw RecordFormatError(where + ": entry '" + reply.elements[i].str + "' scored '" +
                              reply.elements[i + 1].str + "' is not a runtime and a time");
    }
    out.push_back(p);
  }
  // Redis orders equal scores by member text; bests recorded in the same millisecond are in
  // the order they fell, as every best is below the one before.
  std::sort(out.begin(), out.end(), [](const BestPoint &a, const BestPoint &b) {
    return a.at_ms != b.at_ms ? a.at_ms < b.at_ms : a.best_ms > b.best_ms;
  });
  return out;
}

std::optional<int> join_app(RedisClient &redis, const SuiteRecord &suite, const AppRecord &app,
                            int64_t min_remaining_ms) {
  std::vector<std::string> keys{app_key(suite.id, app.name), jobs_stream()};
  for (const AppRecord &a : suite.apps) keys.push_back(app_key(suite.id, a.name));
  thread_local RedisScript script("app join", std::string(kServerNowLua) + kJoinAppBody);
  const RedisReply reply =
      redis.eval(script, keys,
                 {std::to_string(kLayoutVersion),
                  job_to_json(job_of(suite.id, app, JobKind::kSearch)),
                  std::to_string(min_remaining_ms)});
  if (reply.integer < 0) return std::nullopt;
  return static_cast<int>(reply.integer);
}

std::optional<Joined> join_an_app(RedisClient &redis, const JoinSettings &settings) {
  if (settings.policy == JoinPolicy::kOff) return std::nullopt;
  const int64_t now_ms = server_now_ms(redis);
  for (const std::string &id : suite_ids(redis)) {
    if (suite_phase(redis, id) != "queued") continue;
    const std::optional<SuiteRecord> suite = find_suite(redis, id);
    if (!suite) continue;
    std::vector<JoinCandidate> candidates;
    std::vector<const AppRecord *> records;
    bool all_started = true;
    for (const AppRecord &app : suite->apps) {
      const std::optional<AppState> state = read_app(redis, id, app.name);
      if (!state || state->phase == AppPhase::kWaiting) {
        all_started = false;
        break;
      }
      if (state->phase != AppPhase::kRunning || !state->deadline_ms) continue;
      if (*state->deadline_ms - now_ms < part_of_budget(settings.min_remaining_fraction, app)) {
        continue;
      }
      JoinCandidate c;
      c.suite = id;
      c.app = app.name;
      c.unfinished_jobs = state->jobs_total - state->jobs_done;
      c.improvement_per_minute = improvement_per_minute(
          read_best_history(redis, id, app.name), now_ms,
          part_of_budget(settings.window_fraction, app));
      candidates.push_back(c);
      records.push_back(&app);
    }
    if (!all_started) continue;
    const std::optional<size_t> chosen = choose_app(candidates, settings.policy);
    if (!chosen) continue;
    const AppRecord &app = *records[*chosen];
    if (const std::optional<int> seed =
            join_app(redis, *suite, app, part_of_budget(settings.min_remaining_fraction, app))) {
      return Joined{candidates[*chosen], *seed};
    }
    return std::nullopt;  // raced with another join or the app's end: look again next time
  }
  return std::nullopt;
}

}  // namespace protuner::farm
