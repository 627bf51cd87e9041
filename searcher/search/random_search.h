// Random search, the simplest baseline of 003_* (Figure 7): complete schedules drawn
// uniformly step by step (SearchSpace::random_rollout), scored by the cost model in
// batches. Given a measurer, it measures the best-predicted few of each batch and keeps the
// fastest measured schedule, so the cost model only filters what real time is spent on;
// without one it keeps the schedule with the best predicted cost.
//
// Thread safety: one run() at a time per object. Single threaded (ctx.threads is not
// used): drawing and scoring a schedule takes well under a millisecond (bilateral_grid
// with the analytic model: `build/bin/rollout_benchmark`, `build/bin/learned_model_bench`),
// negligible next to the measurements it selects.
#pragma once

#include <string>

#include "searcher/search/search.h"

namespace protuner {

struct RandomSearchOptions {
  // Schedules sampled and scored per CostModel::predict call (and per progress report).
  int batch_size = 32;
  // With a measurer: the best-predicted this many of every batch are measured (one
  // CandidateMeasurer::measure call per batch). A measurement costs seconds (compile, check
  // against the reference, time) while drawing and scoring a batch costs milliseconds, so
  // measurements are the budget and the cost model is the filter in front of them. The
  // analytic model orders about 80% of pairs of random schedules correctly
  // (`build/bin/analytic_model_bench`): its top 2 of 32 are likely among the batch's
  // fastest, and a single mispredicted schedule at the top cannot take a batch's whole
  // measuring time.
  int measured_per_batch = 2;
  // Rollouts may end at a state without children; after this many in a row the search
  // stops, or throws Error if it has no complete schedule at all.
  int max_dead_ends = 1000;
};

class RandomSearch : public Search {
 public:
  // Throws std::invalid_argument for options below 1.
  explicit RandomSearch(RandomSearchOptions options = {}, std::string name = "random");

  // SearchBudget::iterations is the number of complete schedules sampled. The deadline is
  // checked between samples (never before one schedule exists) and before measuring a
  // batch: a measuring batch that started in time may end after it, and no batch is
  // measured after it. With a measurer the result is the fastest measured schedule
  // (best_measured_seconds set, trace of measured improvements); if every measurement
  // failed or none was made, the best predicted one (and its trace).
  SearchResult run(const SearchContext &ctx, const SearchBudget &budget) override;
  std::string name() const override { return name_; }
  // It measures when ctx.measurer is given, and works without one.
  bool needs_measurer() const override { return false; }

  const RandomSearchOptions &options() const { return options_; }

 private:
  RandomSearchOptions options_;
  std::string name_;
};

}  // namespace protuner
