// Which app a free searcher joins. A searcher that finds the job queue empty would idle;
// instead, once every app of a suite has started, it adds one more search job (a new seed)
// to a running app of that suite and takes it. Adaptively, the app chosen is the one whose
// best runtime improved most per minute over the last `window_fraction` of its budget
// (from its best history in Redis, app_state.h), the apps still improving getting the
// machine time; round-robin, the one with the fewest unfinished jobs. Never past an app's
// deadline: an app is joined only while `min_remaining_fraction` of its budget is left,
// and the joined job searches until the app's own deadline like every other.
//
// The join itself is one Lua script: it checks, on the server's clock, that the app is
// running, that no app of its suite is still waiting, and that enough budget is left; then
// it takes the app's next seed (jobs_total), counts the job in jobs_total and joined, and
// adds it to the job queue, so two searchers joining at once get two seeds and the
// coordinator waits for both jobs before it finishes the app early.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/farm/suite_record.h"

namespace protuner {

class RedisClient;

namespace farm {

enum class JoinPolicy {
  kAdaptive,    // the app improving fastest; ties: round-robin
  kRoundRobin,  // the app with the fewest unfinished search jobs
  kOff,         // never join: a searcher with an empty queue waits
};

// "adaptive", "round-robin", "off".
const char *join_policy_name(JoinPolicy policy);
// Throws ConfigError naming `where` and the choices for an unknown name.
JoinPolicy parse_join_policy(const std::string &name, const std::string &where);

struct JoinSettings {
  JoinPolicy policy = JoinPolicy::kAdaptive;
  // The improvement is measured over the last this fraction of the app's budget (3 minutes
  // of the default 15): long enough to span several measurements, short enough that an
  // app which stopped improving soon stops attracting searchers.
  double window_fraction = 0.2;
  // An app is joined only while this fraction of its budget is left: a new job spends its
  // first seconds preparing the app and measuring the seed schedules.
  double min_remaining_fraction = 0.15;
};

// One point of an app's best history: the server time a new best was recorded, and it.
struct BestPoint {
  int64_t at_ms = 0;
  double best_ms = 0;
};

// ln(best at the window's start / best now) per minute of window: how fast the app's best
// runtime fell over the last `window_ms` (a halving per minute is ln 2). The best at the
// window's start is the last one recorded at or before now - window_ms, or the first one
// when the app's first ok measurement came later. 0 with no history. `history` is in
// time order.
double improvement_per_minute(const std::vector<BestPoint> &history, int64_t now_ms,
                              int64_t window_ms);

// A running app a searcher could join.
struct JoinCandidate {
  std::string suite, app;
  double improvement_per_minute = 0;
  int64_t unfinished_jobs = 0;  // jobs_total - jobs_done: queued or running
};

// The index of the app `policy` joins among `candidates` (in suite order), nullopt when
// there are none or the policy is off. Adaptive: the highest improvement per minute;
// round-robin: the fewest unfinished jobs; remaining ties go to the earliest candidate.
std::optional<size_t> choose_app(const std::vector<JoinCandidate> &candidates,
                                 JoinPolicy policy);

// The app's best history, oldest first.
std::vector<BestPoint> read_best_history(RedisClient &redis, const std::string &suite,
                                         const std::string &app);

// Adds a search job of `app` of `suite` to the job queue with the app's next seed, unless
// the app is not running, an app of the suite is still waiting, or less than
// `min_remaining_ms` is left before its deadline (all on the server's clock). Returns the
// seed, or nullopt when it refused.
std::optional<int> join_app(RedisClient &redis, const SuiteRecord &suite, const AppRecord &app,
                            int64_t min_remaining_ms);

struct Joined {
  JoinCandidate app;
  int seed = 0;
};

// What a free searcher does: for every suite being tuned, oldest first, whose apps have all
// started, chooses among its running apps with enough budget left by `settings`, and joins
// the chosen one. Returns what it joined, nullopt when nothing is to be joined (or another
// searcher's join took the last of the app's time first).
std::optional<Joined> join_an_app(RedisClient &redis, const JoinSettings &settings);

}  // namespace farm
}  // namespace protuner
