// The serialized form of a schedule: compact JSON another process applies to its own
// instance of the same pipeline. It names the pipeline's Funcs in graph order (with
// dimensions, stages and types) so a schedule applied to a different pipeline is refused
// instead of applied wrongly, and every decision is re-checked when it is read.
//
//   {"format": "protuner-schedule", "version": 1,
//    "pipeline": [{"name": "blur_y", "dims": 2, "stages": 1, "types": ["float32"]}, ...],
//    "decisions": [{"placement": "root", "stages": [{"tile": [64, 32], "inner": [16, 1],
//                                                   "parallel_loops": 1}]},
//                  (an update stage may add "reduction_outside": true,
//                   "unroll_reduction": true and "reduction_lanes": L; absent is false, 0)
//                  {"placement": "at", "compute_at": {"func": 0, "stage": 0, "loop": 0},
//                   "store_at": "root" | {...}, "stages": [...]},
//                  {"placement": "inline"}, ...]}
#pragma once

#include <memory>
#include <string>

#include "common/errors.h"
#include "common/schedule/schedule_state.h"

namespace protuner {

constexpr int kScheduleFormatVersion = 1;

// The state (complete or partial) as JSON text.
std::string schedule_to_json(const ScheduleState &state);

// A well-formed schedule of the right pipeline with a decision the state refuses: made by
// an older build, before a rule that now excludes it (schedule_state.h), or by hand.
class IllegalScheduleError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Rebuilds a state on `graph` from JSON text. Throws ConfigError naming what is wrong and
// where: malformed JSON, another format or version, a schedule for a different pipeline,
// or (IllegalScheduleError) an illegal decision.
ScheduleState schedule_from_json(const std::string &text,
                                 std::shared_ptr<const PipelineGraph> graph);

}  // namespace protuner
