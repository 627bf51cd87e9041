// The one interface every search algorithm sits behind: a pipeline, its schedule space, a
// cost model (one per thread) and, optionally, real measurement in; the best complete
// schedule found within a budget out. MCTS (mcts.h), beam search, greedy and random search
// all implement it, so `protuner tune`, the Halide plugin and the comparison bench choose an
// algorithm by name (search_registry.h) and never depend on one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/cost/cost_model.h"

namespace protuner {

class SearchSpace;

// Seconds from `a` to `b` on the steady clock (negative when `b` comes first): how budgets
// and deadlines are reckoned.
inline double seconds_between(std::chrono::steady_clock::time_point a,
                              std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Makes a fresh cost model for the search's pipeline. Cost models are not thread-safe (they
// memoize features), so a search that runs threads calls this once per thread.
using CostModelFactory = std::function<std::unique_ptr<CostModel>()>;

// Real measurement of complete schedules (the "real" of mcts_cost+real, random search).
// Implementations measure serially (one candidate at a time on isolated cores) and never
// throw for a bad candidate.
class CandidateMeasurer {
 public:
  virtual ~CandidateMeasurer() = default;
  // Measured runtime in seconds per state, in batch order; nullopt where the candidate
  // failed (compile error, crash, wrong output, timeout). Every state is complete.
  virtual std::vector<std::optional<double>> measure(
      const std::vector<const ScheduleState *> &batch) = 0;
  // Candidates measured so far (cache hits excluded).
  virtual int64_t measurements() const = 0;
};

// When a search must stop. At least one limit must be set; a search always returns a
// complete schedule, even when the deadline passed before it started (it then completes
// one greedily or at random, as fast as it can).
struct SearchBudget {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Deterministic mode (tests): an iteration count whose meaning each algorithm documents
  // (MCTS: iterations per tree per root decision; beam: passes; random: schedules sampled).
  // With a seed and no deadline, a run is deterministic.
  std::optional<int64_t> iterations;
  // When set, the search stops as at its deadline once this turns true: a farm job that
  // was cancelled or handed to another searcher. It must outlive the run.
  const std::atomic<bool> *stop = nullptr;

  // The deadline has passed, or `stop` is set.
  bool expired() const {
    return (stop && stop->load()) ||
           (deadline && std::chrono::steady_clock::now() >= *deadline);
  }
};

// A point of the search trace: the best schedule so far, when it was found.
struct TracePoint {
  double seconds = 0;                   // since the search started
  double cost = 0;                      // cost model's prediction of the best, seconds
  std::optional<double> measured_seconds;  // its measured runtime, when measured
};

// Called from the search's own thread (never concurrently) after each root decision,
// pass or batch: cheap, for progress bars and logs.
struct SearchProgress {
  double elapsed_seconds = 0;
  int decided_steps = 0;   // MCTS: root decisions taken so far; others: 0
  double best_cost = 0;
  std::optional<double> best_measured_seconds;
  int64_t evaluations = 0;   // states scored by the cost model
  int64_t measurements = 0;  // candidates measured
  int64_t rollouts = 0;      // complete schedules reached so far (as SearchResult::rollouts)
};

struct SearchContext {
  std::shared_ptr<const PipelineGraph> graph;
  const SearchSpace *space = nullptr;  // must outlive the search
  CostModelFactory cost_model;
  CandidateMeasurer *measurer = nullptr;  // null: the search uses the cost model only
  uint64_t seed = 0;
  // Threads the search may run (MCTS trees, beam scoring); 0: hardware concurrency.
  int threads = 0;
  std::function<void(const SearchProgress &)> on_progress;  // may be empty
  // Complete schedules known to be good before the search (the fastest measured seed or
  // earlier run of `protuner tune`). MCTS puts each into every tree as a first rollout
  // (MctsTree::add_known), so its root decisions follow the best of them until a tree
  // finds better, and it searches their neighbourhood; the other searches ignore them.
  std::vector<ScheduleState> start_points;
};

struct SearchResult {
  explicit SearchResult(ScheduleState best_schedule) : best(std::move(best_schedule)) {}

  ScheduleState best;
  double best_cost = 0;                         // cost model's prediction, seconds
  std::optional<double> best_measured_seconds;  // set when the search measured it
  int64_t evaluations = 0;   // states scored by the cost model
  int64_t rollouts = 0;      // complete schedules reached (MCTS simulations, samples)
  int64_t measurements = 0;  // candidates measured
  std::vector<TracePoint> trace;  // best over time, one point per improvement
};

// Throws std::invalid_argument, naming `search`, for a context or budget no search can run
// with: no graph, space or cost model, an empty pipeline, no limit, an iteration count below
// 1, no measurer when `needs_measurer`, or a start point that is not a complete schedule
// of ctx.graph.
void check_search_inputs(const std::string &search, const SearchContext &ctx,
                         const SearchBudget &budget, bool needs_measurer);

class Search {
 public:
  virtual ~Search() = default;
  // Runs on a fresh state of ctx.graph. Throws std::invalid_argument for a context or budget
  // that cannot work (no cost model, no limit, measurer required but null), Error when no
  // complete schedule exists in the space.
  virtual SearchResult run(const SearchContext &ctx, const SearchBudget &budget) = 0;
  virtual std::string name() const = 0;
  // Whether run() needs ctx.measurer (mcts_cost+real_*). Random search measures its best
  // schedules when handed one, but does not ask for one.
  virtual bool needs_measurer() const { return false; }
  // Whether run() searches from ctx.start_points (MCTS), so that another run from the best
  // so far, with another seed, may find something better; the others ignore them.
  virtual bool uses_start_points() const { return false; }
};

}  // namespace protuner
