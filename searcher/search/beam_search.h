// Beam search over our MDP, the baseline ProTuner compares against (Adams et al. 2019 as
// run in 003_* section 5: beam 32, 5 passes), and greedy search as its beam-1, one-pass
// case: BeamSearch({.beam_size = 1, .passes = 1}, "greedy").
//
// A beam step decides one whole Func for every state of the beam. Our MDP takes a decision
// in several Steps (schedule.h) and a Func can have millions of decisions, so a state's
// children are a bounded sample of whole decisions, drawn hierarchically (002_* 3.1): every
// placement the space offers gets its share of the samples, and each sample walks that
// placement's tiling steps uniformly at random (SearchSpace::random_child). All children
// of the whole beam are scored in ONE batched CostModel::predict call; the best
// `beam_size` survive. With look-ahead (BeamSearchOptions::lookahead_samples) a second
// batch scores sampled decisions of the next Func, and children are ranked by them.
//
// Passes (002_* 4.5 in spirit): every state a pass scores is evidence about its decision
// prefix: the cheapest prediction at its depth, and, for the complete schedules of a pass's
// last step (the final beam and those it dropped), the cheapest complete cost reached
// through each prefix. In later passes a child whose prefix is "known bad" has its
// predicted cost multiplied by a penalty, so the beam spends its places elsewhere: known
// bad when every complete schedule through it cost more than (1 + margin) times the best
// one, or, never completed, when its best prediction was that much worse than the best
// state of its depth (a poorly scored representative condemns its bucket, as in 002_*).
// Complete costs decide where both exist: partial costs mislead (003_* section 3), and a
// prefix that looks cheap but only completes badly is exactly what passes should avoid.
// Prefixes are compared coarse to fine as the passes go on: pass 2 by placements only,
// pass 3 by loop structure (which loops exist, which are parallel, vectorized, unrolled),
// later passes by the whole decision with its tile sizes, as the paper's structural hash
// deepens per pass. The record holds a few map entries per scored state (tens of MB for
// a 100-Func pipeline at the defaults).
//
// Thread safety: one run() at a time per object (run() records last_stats()). Single
// threaded; ctx.threads is not used. Scoring is one batched call per beam step already
// (two with look-ahead); sampling children takes about as long as scoring them, so
// sampling each beam state on its own thread would nearly halve a step: not done yet.
#pragma once

#include <cstdint>
#include <string>

#include "searcher/search/search.h"

namespace protuner {

// Decisions sampled per child by the look-ahead beam ("beam_lookahead"); see
// BeamSearchOptions::lookahead_samples. With 8 its best measures faster than the plain
// beam's on iir_blur, max_filter and nl_means (`build/bin/search_probe APP --algorithms
// beam,beam_lookahead` writes both; `protuner measure --schedule` times them), at nine
// times the plain beam's states; 32 samples of the next Func per child, over 128 children
// per state, come closer yet to iir_blur's cheapest but take many times as long.
inline constexpr int kDefaultLookaheadSamples = 8;

struct BeamSearchOptions {
  // States kept after each beam step. 32 is the configuration of 002_* and 003_*.
  int beam_size = 32;
  // Passes over the whole pipeline; SearchBudget::iterations overrides it. Later passes use
  // what earlier ones learned (known-bad prefixes) and fresh samples.
  int passes = 5;
  // Whole decisions sampled per beam state and Func, shared equally among the placements
  // the space offers (002_* 3.1). 32 usually sees every placement of a Func several times
  // (the interim greedy's choice). Each placement gets ceil(samples_per_state / placements)
  // samples (at least min_samples_per_placement), so children per state are at most
  // max(samples_per_state + placements - 1, placements * min_samples_per_placement), fewer
  // after dropping duplicates (an inlined Func has one decision however often it is drawn).
  int samples_per_state = 32;
  // Every placement gets at least this many samples, however many placements there are, so
  // a Func with many candidate compute_at loops still tries each of them.
  int min_samples_per_placement = 1;
  // Factor on the predicted cost of a known-bad child in later passes. 10 mirrors Adams et
  // al.'s "huge penalty" (+10) for structures a previous pass found unpromising: such a
  // state stays in the running but loses to any state within 10x of it.
  double known_bad_penalty = 10;
  // How much worse than the best (complete schedule, or state of the same depth) a
  // prefix's evidence must be to make it known bad (see above). 0.2 is the 20% within
  // which Adams et al. keep a previous pass's schedules as promising.
  double known_bad_margin = 0.2;
  // Look-ahead (0: off, the baseline beam of 003_*). With k > 0 a child is ranked by the
  // cheapest of k decisions sampled for the Func after it (hierarchically, as children
  // are), not by its own cost: a decision that pays off only through the next one (a
  // producer computed inside the consumer's tiles, which pays only when the tile spans
  // the producer's whole scan) is priced with that next decision, where a partial state
  // prices only the Funcs decided so far. iir_blur: the expert's structure is the model's
  // cheapest schedule, cheaper than the plain beam's best (`build/bin/search_probe
  // iir_blur` prints both), yet the plain beam never keeps the consumer tiling it needs.
  // Each step scores up to (1 + k) times
  // as many states.
  int lookahead_samples = 0;
  // A sample that walks into a state without children (the space's look-ahead makes this
  // rare) is dropped; a beam step where every sample was dropped is redrawn up to this many
  // times before the search gives up with Error (no complete schedule in the space).
  int max_dead_ends = 1000;
};

// What the last run() did, for logs and tests.
struct BeamSearchStats {
  int passes_completed = 0;              // passes whose beam reached complete schedules
  int64_t beam_steps = 0;                // batched cost-model calls
  int64_t children = 0;                  // distinct children scored
  int64_t dead_ends = 0;                 // samples dropped at a state without children
  int64_t penalized = 0;                 // children ranked with the known-bad penalty
  int64_t lookahead_states = 0;          // next-Func states scored to rank children
  bool finished_after_deadline = false;  // a beam completed greedily after the deadline
  double sampling_seconds = 0;           // drawing children
  double cost_model_seconds = 0;         // in CostModel::predict
};

// The look-ahead beam ("beam_lookahead"): the default beam, with kDefaultLookaheadSamples.
BeamSearchOptions lookahead_beam_options();
// Greedy ("greedy"): a beam of one, one pass; each step takes the child the model predicts
// cheapest.
BeamSearchOptions greedy_options();

class BeamSearch : public Search {
 public:
  // Throws std::invalid_argument for options out of range (sizes below 1, a penalty below
  // 1, a negative margin).
  explicit BeamSearch(BeamSearchOptions options = {}, std::string name = "beam");

  // SearchBudget::iterations is the number of passes. With a deadline, the search stops
  // between beam steps; if no complete schedule exists yet it finishes the best state of
  // the beam greedily with beam 1 and one sample per placement, so a result is always
  // complete (and the deadline is overrun by that much). SearchResult::rollouts counts the
  // complete schedules scored (every child of a pass's last step). ctx.measurer is not
  // used: beam search ranks by the cost model only, as in 003_*. SearchProgress::best_cost
  // is the best complete schedule's cost, or the best partial state's until one exists.
  SearchResult run(const SearchContext &ctx, const SearchBudget &budget) override;
  std::string name() const override { return name_; }

  const BeamSearchOptions &options() const { return options_; }
  const BeamSearchStats &last_stats() const { return stats_; }

 private:
  BeamSearchOptions options_;
  std::string name_;
  BeamSearchStats stats_;
};

}  // namespace protuner
