// One-Func variants of a measured schedule: the candidates MCTS's cost+real mode measures
// (mcts.h). A variant changes the decision of one Func and keeps every other Func's, so its
// measurement judges that one decision in the context of the fastest schedule known. The
// analytic model ranks schedules that differ in many Funcs badly (on harris the schedules
// the trees propose after leaving the best seed run several times slower than it), and it
// ranks placements worse than tilings: on harris the variants it ranks cheapest compute at
// root a Func that the incumbent computes inside the output's tiles, and run slower.
// Hence tiling neighbours of the incumbent's own decision, and a measuring order that
// visits placements in turn.
#pragma once

#include <optional>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/space/search_space.h"

namespace protuner {

// `incumbent` (complete) with Func f = start.num_decided() decided by `decision` instead.
// `start` must be `incumbent` with exactly Funcs [0, f) decided. A later Func whose
// incumbent decision is no longer legal after the change (it was computed inside a loop
// that is gone) is decided as in `fallback` when given and legal; nullopt when the variant
// cannot be completed, or `decision` is not legal.
std::optional<ScheduleState> incumbent_variant(const ScheduleState &start,
                                               const ScheduleState &incumbent,
                                               const FuncDecision &decision,
                                               const ScheduleState *fallback = nullptr);

// Decisions one step from `d` for the next Func of `start` (not mid-decision), with the same
// placement: one stage's tile for one variable doubled (up to the variable's extent per
// realization) or halved (down to its inner tile), one stage's parallel loops one more or
// one fewer, an update's reduction loops moved to the other side of its middle loops
// (where that changes the loop nest), its innermost reduction loop unrolled or not, or its
// reduction in vector lanes or not. Only legal ones, each once; an unrolled one or one in
// lanes, which change a block's code, only where `space` (when given) offers it. Empty for
// an inlined decision.
std::vector<FuncDecision> tiling_neighbours(const ScheduleState &start, const FuncDecision &d,
                                            const SearchSpace *space = nullptr);

// Where a decision puts its Func: the decision without its tilings.
FuncDecision placement_of(const FuncDecision &d);

// The order in which to measure candidate decisions of one Func, given the model's cost of
// each (as a variant): the cheapest of each placement in turn, the incumbent's placement
// first and then the others by their cheapest; then the second cheapest of each, and so on.
std::vector<size_t> measuring_order(const std::vector<FuncDecision> &decisions,
                                    const std::vector<double> &costs,
                                    const FuncDecision &incumbent_decision);

}  // namespace protuner
