// A schedule that any pipeline gets right away and that compiles about as fast as a
// schedule can: every Func computed at root, each stage's outermost variable split into
// parallel tasks (a whole-input reduction into parallel bands) and its innermost one
// vectorized. Tuning measures it first, so an app has a measured result whatever the
// search's candidates do (on resnet50 and local_laplacian every candidate of a short
// budget's search can overrun the compile limit).
#pragma once

#include <memory>

#include "common/schedule/schedule_state.h"
#include "searcher/space/search_space.h"

namespace protuner {

// Legal for every pipeline (ScheduleState::check_decision), though not necessarily in the
// space's pruned set. Tasks per stage: options.cores times kFallbackTasksPerCore, where the
// outermost variable has that many points.
ScheduleState fallback_schedule(std::shared_ptr<const PipelineGraph> graph,
                                const SearchSpaceOptions &options);

constexpr int kFallbackTasksPerCore = 4;
// The most lanes a fallback reduction in lanes takes: one vector of bytes on AVX-512, as
// image_stats' expert reduces its planes.
constexpr int kFallbackMaxReductionLanes = 64;

// Native vector lanes of f's widest value type on the target `options` describes.
int64_t native_lanes(const FuncNode &f, const SearchSpaceOptions &options);

// The fallback's decision for one Func: at root, every stage fallback_stage_tiling.
FuncDecision fallback_decision(const FuncNode &f, const SearchSpaceOptions &options);

// The fallback's tiling of one stage computed at root: the outermost variable split into
// tasks run in parallel, the innermost vectorized where it is that long. A stage with no
// pure variable whose reduction may run in parallel bands (StageNode::rfactorable) and has
// at least options.min_parallel_points points runs in bands; an update whose innermost
// variable is narrower than a vector runs its reduction in lanes where it may
// (lane_reduction_refusal), as many as kFallbackMaxReductionLanes allows.
StageTiling fallback_stage_tiling(const FuncNode &f, const StageNode &stage,
                                  const SearchSpaceOptions &options);

}  // namespace protuner
