// The protocol between the isolated measurer (isolated_measurer.h) and its helper process
// `protuner-measure-child`, in one place so the two sides cannot drift apart.
//
//   protuner-measure-child --cache-dir DIR
//     stdin:  the request JSON (measure_json.h)
//     fd 3:   status lines, in order: "phase load", "phase reference", "phase compile",
//             "phase run" as each phase starts (a differing output adds "phase reference",
//             "phase strict_check" and "phase run" again), then "result <result JSON>"
//     stdout and stderr: free text (Halide's and the generator's chatter), captured by the
//             parent; the tail goes into the error text of a failure
//
// The parent applies a wall-clock limit per phase (phase_timeout_seconds) and kills the
// child's process group when one runs out. A child that dies without a result is judged by
// the phase it was in and how it died.
#pragma once

#include <string>

#include "measurer/measurement.h"

namespace protuner::child_protocol {

constexpr int kStatusFd = 3;
constexpr const char *kExecutableName = "protuner-measure-child";
constexpr const char *kPhasePrefix = "phase ";
constexpr const char *kResultPrefix = "result ";

// Phases, in the order the child enters them. "reference" runs only when the output is
// checked and the reference is not on disk yet.
constexpr const char *kPhaseLoad = "load";            // read request, build, schedule
constexpr const char *kPhaseReference = "reference";  // compile and run the root schedule
constexpr const char *kPhaseCompile = "compile";      // compile the candidate ahead of time
constexpr const char *kPhaseRun = "run";              // run, check the output, time
// Only for a candidate whose output differs: compile and run it with strict_float
// (after its own "reference" phase when that reference is not on disk), then "run" again.
constexpr const char *kPhaseStrictCheck = "strict_check";

// Exit code of a child whose operator new failed (its new_handler exits with it): the
// candidate ran out of memory under the address-space limit.
constexpr int kExitOutOfMemory = 86;

// The wall-clock limit of a phase. Loading counts as compilation; the reference and the
// strict_float check are each a compile and a run of their own.
inline double phase_timeout_seconds(const std::string &phase, const MeasureSettings &s) {
  if (phase == kPhaseRun) return s.run_timeout_seconds;
  if (phase == kPhaseReference || phase == kPhaseStrictCheck) {
    return s.compile_timeout_seconds + s.run_timeout_seconds;
  }
  return s.compile_timeout_seconds;
}

}  // namespace protuner::child_protocol
