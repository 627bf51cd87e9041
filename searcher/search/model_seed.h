// The cost model's own best schedules, as more seeds for a measuring search: beam search
// (beam_search.h) by the cost model alone within a short deadline, plain and with
// look-ahead. `protuner tune` and the Halide plugin measure them after the structural
// seeds (seed_schedules.h) and before the search, so the search starts from one of them
// when it runs fastest.
//
// Why: mcts_cost+real follows the fastest measured schedule and changes one Func at a
// time, and it measures a whole schedule of its own only once, after its trees searched
// one decision for a second (16 trees on 2 cores). Where no seed has the right structure
// that whole schedule decides the result, and it varies from run to run (on max_filter
// one 3-minute tune can end much slower than the next, although the model ranks the
// faster one's structure cheaper). Beam search finds the model's best structure in about
// a second or two on most of the suite, and on max_filter and bgu it measures faster than
// the slower tunes' results.
//
// Why two: the plain beam prices a partial state by its decided Funcs only, so it drops a
// decision that pays off through the next one (on iir_blur, max_filter and nl_means the
// look-ahead beam's best measures clearly faster than the plain beam's). The look-ahead
// beam scores nine times as many states, and where its first pass does not fit the
// deadline it finishes greedily and badly (on resnet50 it predicts its best several times
// slower than the plain beam's), and the model is no judge between two close schedules
// (on camera_pipe the look-ahead's best, predicted cheaper, measures slower); so the
// plain beam's best is always a seed, the look-ahead's too when the model ranks it
// cheaper. `build/bin/search_probe APP --algorithms beam,beam_lookahead` prints both
// predictions and writes both schedules for `protuner measure --schedule`.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "searcher/search/search.h"

namespace protuner {

// The share of the time left, when each beam search starts, that it may take: after the
// structural seeds of a 3-minute budget that is about 7 s each, of 15 minutes about 40 s
// (past its deadline beam search completes its beam greedily). 0 turns the model seeds
// off.
inline constexpr double kDefaultModelSeedShare = 0.05;

// One model seed: which search found it, and its result (best schedule, predicted cost).
struct ModelSeed {
  std::string search;  // "beam" or "beam_lookahead"
  SearchResult result;
};

// The model seeds for ctx's pipeline by ctx's cost model alone (the measurer and start
// points are not used): the plain beam's best, found in `share` of the time from now to
// `deadline`, then the look-ahead beam's, found in `share` of the time left after it,
// when the model ranks it cheaper than the plain one's. Empty when share is not positive
// or the deadline has passed.
std::vector<ModelSeed> model_seeds(const SearchContext &ctx,
                                   std::chrono::steady_clock::time_point deadline, double share);

}  // namespace protuner
