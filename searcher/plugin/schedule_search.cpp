// The interim random and greedy searches (see schedule_search.h).
#include "searcher/plugin/schedule_search.h"

#include <random>
#include <stdexcept>
#include <string>

#include "common/errors.h"
#include "searcher/search_space.h"

namespace protuner {
namespace {

// Extends `state` to a complete schedule, each Func decided by the cheapest of a sample of
// its choices. Returns false at a state without children.
bool greedy_rollout(ScheduleState &state, const SearchSpace &space, const ScheduleCost &cost,
                    int samples, std::mt19937_64 &rng) {
  while (!state.complete()) {
    std::optional<ScheduleState> best;
    double best_cost = 0;
    for (int i = 0; i < samples; ++i) {
      std::optional<FuncDecision> d = space.random_decision(state, rng);
      if (!d) return false;
      ScheduleState child = state.with_decision(std::move(*d));
      const double c = cost(child);
      if (!best || c < best_cost) {
        best = std::move(child);
        best_cost = c;
      }
    }
    state = std::move(*best);
  }
  return true;
}

}  // namespace

ScheduleSearchResult search_schedule(std::shared_ptr<const PipelineGraph> graph,
                                     const SearchSpace &space, const ScheduleCost &cost,
                                     const ScheduleSearchOptions &options) {
  if (!options.deadline && !options.max_iterations) {
    throw std::invalid_argument("search_schedule: needs a deadline or an iteration limit");
  }
  const int samples = std::max(1, options.greedy_samples_per_func);
  std::mt19937_64 rng(options.seed);
  std::optional<ScheduleSearchResult> result;
  int64_t iterations = 0, dead_ends = 0, dead_ends_in_a_row = 0;
  auto out_of_budget = [&] {
    if (options.max_iterations && iterations >= *options.max_iterations) return true;
    return options.deadline && std::chrono::steady_clock::now() >= *options.deadline;
  };
  while (!result || !out_of_budget()) {
    ScheduleState state(graph);
    const bool complete = options.algorithm == PluginAlgorithm::kGreedy
                              ? greedy_rollout(state, space, cost, samples, rng)
                              : space.random_rollout(state, rng);
    if (!complete) {
      ++dead_ends;
      if (++dead_ends_in_a_row >= options.max_dead_ends) {
        if (result) break;
        throw Error("the " + to_string(options.algorithm) + " search found no complete " +
                    "schedule: " + std::to_string(dead_ends) +
                    " attempts in a row reached a Func with every choice pruned");
      }
      continue;
    }
    dead_ends_in_a_row = 0;
    ++iterations;
    const double c = cost(state);
    if (!result || c < result->best_cost) result = ScheduleSearchResult{std::move(state), c, 0, 0};
  }
  result->iterations = iterations;
  result->dead_ends = dead_ends;
  return std::move(*result);
}

}  // namespace protuner
