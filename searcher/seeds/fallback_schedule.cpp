#include "searcher/seeds/fallback_schedule.h"

#include <algorithm>

#include "common/pipeline/region.h"
#include "common/schedule/loop_nest.h"

namespace protuner {

int64_t native_lanes(const FuncNode &f, const SearchSpaceOptions &options) {
  int bits = 8;
  for (const std::string &type : f.value_types) bits = std::max(bits, value_type_bits(type));
  return std::max(1, options.vector_bits / bits);
}

StageTiling fallback_stage_tiling(const FuncNode &f, const StageNode &stage,
                                  const SearchSpaceOptions &o) {
  const Region loops = stage.loop_region(f.root_region);
  const int n = stage.num_pure;
  StageTiling t;
  for (int v = 0; v < n; ++v) {
    t.tile.push_back(std::max<int64_t>(1, loops[v].extent()));
    t.inner.push_back(1);
  }
  if (n == 0) {
    // A reduction with nothing else to parallelize, big enough for tasks, runs in bands.
    if (stage.rfactorable && region_points(stage.rvar_region) >= o.min_parallel_points) {
      t.parallel_loops = 1;
    }
    return t;
  }
  const int64_t lanes = native_lanes(f, o);
  if (t.tile[0] >= lanes) t.inner[0] = lanes;
  if (t.inner[0] == 1 && stage.index > 0) {
    // Variable 0 is narrower than a vector: an associative reduction vectorizes in lanes
    // instead, up to kFallbackMaxReductionLanes of them (image_stats' planes).
    for (int multiple : kLaneReductionMultiples) {
      StageTiling in_lanes = t;
      in_lanes.reduction_lanes = static_cast<int>(multiple * lanes);
      if (in_lanes.reduction_lanes <= kFallbackMaxReductionLanes &&
          !lane_reduction_refusal(stage, in_lanes)) {
        t.reduction_lanes = in_lanes.reduction_lanes;
      }
    }
  }
  const int top = n - 1;
  const int64_t tasks = std::min<int64_t>(t.tile[top], int64_t{o.cores} * kFallbackTasksPerCore);
  if (tasks > 1) {
    int64_t tile = ceil_div(t.tile[top], tasks);
    tile = ceil_div(tile, t.inner[top]) * t.inner[top];  // whole vectors when top is x
    if (tile < t.tile[top]) {
      t.tile[top] = tile;
      t.parallel_loops = 1;
    }
  }
  return t;
}

FuncDecision fallback_decision(const FuncNode &f, const SearchSpaceOptions &options) {
  FuncDecision d;
  d.placement = Placement::kRoot;
  for (const StageNode &stage : f.stages) d.stages.push_back(fallback_stage_tiling(f, stage, options));
  return d;
}

ScheduleState fallback_schedule(std::shared_ptr<const PipelineGraph> graph,
                                const SearchSpaceOptions &options) {
  ScheduleState state(graph);
  for (const FuncNode &f : graph->funcs) state.decide(fallback_decision(f, options));
  return state;
}

}  // namespace protuner
