// Turning a complete state into a real Halide schedule: on the Funcs of a Pipeline, and as
// C++ source a user pastes into their generator.
#pragma once

#include <string>

#include "common/schedule/schedule_state.h"

namespace Halide {
class Pipeline;
}

namespace protuner {

// Applies the complete `state` to the Funcs of `pipeline`, which must be an unscheduled
// instance of the algorithm the state's graph was built from (both checked: ConfigError
// names the first Func that differs or already carries a directive).
void apply_schedule(const ScheduleState &state, Halide::Pipeline &pipeline);

// The same schedule as C++ source: a function
//   inline void apply_schedule_<name>(Halide::Pipeline pipeline, const Halide::Target &target)
// that finds every Func of the pipeline by its position in protuner's Func order (the
// source carries common/pipeline/func_order.h) and schedules it. `name` must be a C++ identifier
// (ConfigError otherwise).
std::string schedule_source(const ScheduleState &state, const std::string &name);

}  // namespace protuner
