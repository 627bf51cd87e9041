// What the plugin hands Halide as AutoSchedulerResults::schedule_source. Halide 14 writes
// the `.schedule.h` file itself (-e schedule) and pastes that text as the *body* of
//
//   inline void apply_schedule_<generator>(::Halide::Pipeline pipeline,
//                                          ::Halide::Target target) {
//       using ::Halide::Func; ... using ::Halide::Var;
//       <schedule_source>
//   }
//
// Our schedule source (apply_schedule.h) needs namespace-scope code before its function:
// the Func order (func_order.h), which finds each Func by position. A function body cannot
// hold that, so the body declares our function, calls it and closes Halide's function; our
// source follows at namespace scope, and an empty function takes Halide's closing brace.
// The file then compiles wherever it is included after Halide.h, and a generator uses it
// exactly like any Halide autoscheduler's output:
//   #include "harris.schedule.h"
//   void schedule() { if (!auto_schedule) apply_schedule_harris(get_pipeline(), get_target()); }
#pragma once

#include <string>

#include "common/schedule/schedule_state.h"

namespace protuner {

// The body text for the complete `state`. Its own function is named after a hash of the
// serialized schedule (apply_schedule_protuner_<16 hex digits>), so two schedule files in
// one program never define one inline function two ways.
std::string halide_schedule_body(const ScheduleState &state);

}  // namespace protuner
