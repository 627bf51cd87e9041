// The cost model's own best schedule, as one more seed for a measuring search: beam search
// (beam_search.h) by the cost model alone, within a short deadline. `protuner tune` and the
// Halide plugin measure it after the structural seeds (seed_schedules.h) and before the
// search, so the search starts from it when it runs fastest.
//
// Why: mcts_cost+real follows the fastest measured schedule and changes one Func at a
// time, and it measures a whole schedule of its own only once, after its trees searched
// one decision for a second (16 trees on 2 cores). Where no seed has the right structure
// that whole schedule decides the result, and it varies from run to run: max_filter ran
// 28.7 ms in one 3-minute tune and 43.1 ms in the next, while the model ranked the faster
// one's structure cheaper. Beam search finds the model's best structure in about a second
// on most of the suite (max_filter: 1.7 s, measured 35.2 ms beside the slower tune's
// 54.5; bgu 34.1 against 40.6).
#pragma once

#include <chrono>
#include <optional>

#include "searcher/search/search.h"

namespace protuner {

// The share of the time left after the structural seeds that the model seed's beam search
// may take: 3 minutes give it about 7 s, 15 minutes about 40 s (past the deadline beam
// search completes its beam greedily). 0 turns the model seed off.
inline constexpr double kDefaultModelSeedShare = 0.05;

// Beam search's best complete schedule for ctx's pipeline by ctx's cost model alone (the
// measurer and start points are not used), found in `share` of the time from now to
// `deadline`; nullopt when share is not positive or the deadline has passed.
std::optional<SearchResult> model_seed(const SearchContext &ctx,
                                       std::chrono::steady_clock::time_point deadline,
                                       double share);

}  // namespace protuner
