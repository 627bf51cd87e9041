// Whether a pipeline is unscheduled, as Halide's autoscheduler contract promises: a
// generator built with auto_schedule=true applies no directive of its own, so the schedule
// an autoscheduler applies is the only one. A directive left over (a generator that
// schedules unconditionally, or a hand schedule not guarded by `if (!auto_schedule)`)
// would combine with ours into a schedule nobody chose, and Halide refuses many such
// combinations ("computed at an invalid location", "can only unroll a constant extent").
// Everything that applies a schedule to a user's pipeline checks this first, so the user
// learns which Func to fix instead of seeing every candidate fail.
#pragma once

#include <optional>
#include <string>

namespace Halide {
class Pipeline;
}

namespace protuner {

// The first scheduling directive found on a Func of `pipeline` ("Func 'blur_x': compute_at
// output.y"), or nullopt when it is unscheduled. Estimates and Func::bound are not
// directives (they describe the algorithm's regions), nor are .in() wrappers. Locks the
// Funcs' loop levels, as Halide's lowering does; scheduling them afterwards is fine.
std::optional<std::string> first_scheduling_directive(const Halide::Pipeline &pipeline);

// Throws ConfigError naming the Func and its directive when `pipeline` carries one.
void require_unscheduled(const Halide::Pipeline &pipeline);

}  // namespace protuner
