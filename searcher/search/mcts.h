// ProTuner's search (003_* section 4, Figure 6): an ensemble of MCTS trees (mcts_tree.h),
// by default 15 that simulate at random and 1 that simulates greedily, searching in
// parallel threads from the same root. After each root decision's budget (time, or
// iterations in deterministic mode) every tree proposes its best child with its best
// complete schedule; the next root is the proposal whose schedule the cost model predicts
// fastest or, in the cost+real mode, that measures fastest; every tree continues from it,
// keeping its subtree below it when it has one.
//
// In cost+real mode, once a schedule is measured (a start point, SearchContext::start_points,
// or a measured proposal), the root follows the fastest measured so far, the incumbent:
// the model's cheapest proposals measure several times slower than the best seed on
// harris, unsharp and camera_pipe. At the first step of a Func's decision that has a choice, the
// trees search for the whole decision's time; then variants of the incumbent that change
// only that Func (its tiling neighbours and the trees' alternatives, incumbent_variants.h)
// are scored by the model and the first few in measuring order are measured
// (measure_top_k); a faster one becomes the incumbent. So measurements judge one Func's
// decision at a time, in the context of the fastest schedule known, which the root then
// takes. Once per run, at the first such decision, the trees' cheapest complete schedule is
// measured whole too: a jump that one-Func variants cannot make.
//
// Root decisions are steps of our MDP (schedule.h), several per Func, where ProTuner's
// were whole Func decisions. The decision budget (e.g. 30 s) therefore applies per Func's
// decision, spread over its steps, and cost+real measures at the step that completes a
// Func's decision, so the number of decisions and of measurements matches the paper's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "searcher/search/search.h"
#include "searcher/search/ucb.h"

namespace protuner {

// Every tunable of the ensemble, with ProTuner's defaults.
struct MctsOptions {
  int trees = 16;        // trees in the ensemble
  int greedy_trees = 1;  // of which simulate greedily (003_* 4.1: 15 + 1 did best)
  UcbFormula formula = UcbFormula::kInverseAverage;
  double cp = 1.0;
  // Seconds per Func decision (Table 1: 30, 10, 1; plus 0.5). Shortened when a deadline
  // would not leave that much for every decision still to come.
  double decision_seconds = 30;
  // cost+real: choose the next root by measuring the proposals' complete schedules.
  bool measure = false;
  // cost+real: at most this many distinct proposals (or variants of the incumbent) are
  // measured per decision, cheapest predicted first (ProTuner forked 16 compiles at once;
  // our measurer is serial and has 2 cores, so measuring all 16 at every decision would
  // eat the whole budget).
  int measure_top_k = 4;
  // cost+real: measurement may take at most this share of the elapsed time; beyond it,
  // decisions fall back to the cost model (or the incumbent) until the search catches up.
  // Time budgets only: with an iteration budget every proposal is measured, so a seeded
  // run is repeatable.
  // A compile and run takes seconds, a search per Func one (mcts_cost+real_1s): a high
  // share lets measurement, which decides, take most of the time.
  double max_measure_time_share = 0.8;
  int greedy_samples = 8;               // see MctsTreeOptions
  // Before the first decision, the cost model's greedy descent (greedy_options(),
  // beam_search.h) is put into every tree as a known schedule, as a start point is, but not
  // measured: the ensemble's best is then never predicted slower than greedy's, whatever
  // the budget. A few iterations per tree do not find what greedy finds on test_blur
  // (MctsCostPlusReal.BeatsOrTiesGreedyWithTheSameCostModelOnASmallApp); the descent costs
  // 0.2 s on resnet50 (`build/bin/search_probe resnet50 --algorithms greedy --iterations 1`).
  bool know_greedy_descent = true;
  int64_t max_nodes_per_tree = 200000;  // see MctsTreeOptions
};

// The named configurations of 003_* Table 1, plus mcts_0.5s and mcts_cost+real_0.5s.
// Returns false for an unknown name.
bool mcts_options_for(const std::string &name, MctsOptions &out);
const std::vector<std::string> &mcts_configuration_names();

class MctsSearch : public Search {
 public:
  // Throws std::invalid_argument for options out of range.
  MctsSearch(MctsOptions options, std::string name);

  // SearchBudget::iterations is iterations per tree per root decision.
  SearchResult run(const SearchContext &ctx, const SearchBudget &budget) override;
  std::string name() const override { return name_; }
  bool needs_measurer() const override { return options_.measure; }
  bool uses_start_points() const override { return true; }
  const MctsOptions &options() const { return options_; }

 private:
  MctsOptions options_;
  std::string name_;
};

}  // namespace protuner
