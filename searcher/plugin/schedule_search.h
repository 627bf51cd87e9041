// INTERIM: the searches the Halide plugin runs until ProTuner's MCTS lands. Both are
// anytime loops over complete schedules, ranked by a ScheduleCost, keeping the best:
//   random  samples complete schedules (SearchSpace::random_rollout);
//   greedy  builds a schedule Func by Func, each decided by the cheapest of a bounded random
//           sample of whole decisions for it (SearchSpace::random_decision): a Func's
//           decisions can run to millions, too many to enumerate and score.
// Each complete schedule is one iteration. The loop stops at the deadline or the iteration
// limit, but never before one complete schedule exists. Limits are checked between
// schedules, so a greedy pass over a very large pipeline can overrun the deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "searcher/plugin/plugin_settings.h"
#include "searcher/schedule_state.h"

namespace protuner {

class SearchSpace;

// Estimated cost of a (partial) state, lower is better. Must accept partial states: the
// greedy search ranks a state after each decision. InterimCost is one; the cost models
// will be others.
using ScheduleCost = std::function<double(const ScheduleState &)>;

struct ScheduleSearchOptions {
  PluginAlgorithm algorithm = PluginAlgorithm::kRandom;
  uint64_t seed = 0;
  // Stop starting new schedules after this point in time (nullopt: no time limit).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Stop after this many complete schedules (nullopt: no limit). With neither limit the
  // search would never stop, so at least one must be set.
  std::optional<int64_t> max_iterations;
  // greedy: choices sampled per Func. 32 keeps a pass over a 100-Func pipeline at a few
  // thousand bound computations while usually seeing every placement.
  int greedy_samples_per_func = 32;
  // Rollouts may reach a state without children (every choice pruned); after this many
  // such dead ends in a row without one complete schedule, the search gives up.
  int max_dead_ends = 1000;
};

struct ScheduleSearchResult {
  ScheduleState best;
  double best_cost = 0;
  int64_t iterations = 0;  // complete schedules scored
  int64_t dead_ends = 0;   // attempts that ended in a state without children
};

// Runs the search on a fresh state of `graph`. Deterministic for a given seed when only
// max_iterations stops it. Throws std::invalid_argument when neither limit is set, and
// Error when no complete schedule could be found (max_dead_ends dead ends in a row).
ScheduleSearchResult search_schedule(std::shared_ptr<const PipelineGraph> graph,
                                     const SearchSpace &space, const ScheduleCost &cost,
                                     const ScheduleSearchOptions &options);

}  // namespace protuner
