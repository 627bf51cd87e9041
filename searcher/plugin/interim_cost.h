// INTERIM: a hand-written cost estimate the plugin's searches rank schedules by until the
// cost-model issue lands. It is deliberately simple, so it is easy to reason about and
// obviously a placeholder: the work a schedule does (points computed, recompute included)
// divided by the parallelism and vector width it uses, plus a charge for intermediate
// buffers too big for the cache. It knows nothing about memory access patterns, loop
// overheads or instruction costs. The searches take any ScheduleCost (schedule_search.h),
// so the learned and analytic cost models replace it without touching them.
#pragma once

#include <cstdint>

#include "searcher/schedule_state.h"

namespace protuner {

struct SearchSpaceOptions;

// Tunables of the interim cost, defaults for the machine class we tune on.
struct InterimCostParams {
  int cores = 2;          // parallel tasks that run at once
  int vector_bits = 512;  // SIMD width; a vectorized loop runs vector_bits / type bits lanes
  // The cache a Func's buffer should fit in to stay cheap: one core's share of the last
  // level cache. Bigger buffers are written to and read back from memory.
  int64_t cache_bytes_per_core = 1 << 20;
  // What storing and re-reading one point of a buffer bigger than the cache costs, in
  // units of computing one point.
  double spill_cost_per_point = 1.0;

  // cores and vector width as the search space sees them, and the cache share of a last
  // level cache of `last_level_cache_bytes` (0: keep the default).
  static InterimCostParams from(const SearchSpaceOptions &space, uint64_t last_level_cache_bytes);
};

// The estimated cost of `state` (lower is better), in units of one point computed by one
// scalar core. Sums over the decided Funcs only, so it also ranks partial states, which
// the greedy search needs:
//   computed Func f, stage s:  points(f, s) / (parallel(f, s) * lanes(f, s))
//   inlined Func f:            per stage using it (through inlined consumers), the points
//                              of f one point of that stage needs (inline_footprint) times
//                              that stage's points / its speedup (inlined work runs in its
//                              user's loops)
//   computed Func f whose buffer exceeds cache_bytes_per_core:
//                              spill_cost_per_point * points stored over all allocations
//                              / parallel(f, 0)
// where points(f, s) counts every realization (recompute included); parallel(f, s) is
// `cores` inside a parallel loop, n / ceil(n / cores) for a stage's own parallel loop of n
// tasks, else 1; lanes(f, s) is the vectorized loop's extent capped at the native lanes
// of f's type, 1 without vectorization (the penalty).
class InterimCost {
 public:
  explicit InterimCost(InterimCostParams params = {}) : params_(params) {}
  double operator()(const ScheduleState &state) const;
  const InterimCostParams &params() const { return params_; }

 private:
  double speedup(const ScheduleState &state, int f, int stage) const;
  double parallel_speedup(const ScheduleState &state, int f, int stage) const;
  double inlined_cost(const ScheduleState &state, int f) const;

  InterimCostParams params_;
};

}  // namespace protuner
