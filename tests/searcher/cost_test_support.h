// Building states by hand for featurizer and cost-model tests: the same placement for
// every stage, with a serial scalar tiling or a parallel vectorized one.
#pragma once

#include <algorithm>

#include "common/schedule/schedule_state.h"

namespace protuner::testing {

// Whole-extent tiles, no inner tiles, no parallel loop: one serial scalar loop per variable.
inline StageTiling serial_tiling(const StageNode &stage) {
  StageTiling t;
  t.tile.assign(stage.num_pure, int64_t{1} << 40);
  t.inner.assign(stage.num_pure, 1);
  return t;
}

// The innermost variable vectorized by `lanes` (when it is that long), the outermost split
// into `tasks` parallel tiles.
inline StageTiling parallel_vector_tiling(const StageNode &stage, const Region &func_region,
                                          int lanes = 16, int tasks = 8) {
  StageTiling t = serial_tiling(stage);
  const Region loops = stage.loop_region(func_region);
  if (stage.num_pure == 0) return t;
  if (loops[0].extent() >= lanes) t.inner[0] = lanes;
  const int outer = stage.num_pure - 1;
  const int64_t extent = loops[outer].extent();
  if (extent >= 2 * tasks && (outer > 0 || t.inner[0] == 1)) {
    t.tile[outer] = (extent + tasks - 1) / tasks;
    t.parallel_loops = 1;
  }
  return t;
}

inline FuncDecision root_decision(const ScheduleState &s, bool parallel_vector) {
  const FuncNode &node = s.graph().funcs[s.num_decided()];
  FuncDecision d;
  d.placement = Placement::kRoot;
  for (const StageNode &stage : node.stages) {
    d.stages.push_back(parallel_vector ? parallel_vector_tiling(stage, node.root_region)
                                       : serial_tiling(stage));
  }
  return d;
}

inline FuncDecision inline_decision() {
  FuncDecision d;
  d.placement = Placement::kInline;
  return d;
}

}  // namespace protuner::testing
