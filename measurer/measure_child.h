// What runs inside `protuner-measure-child`: one measurement from request text to result,
// in this process. Loading, scheduling, compiling and running a candidate may crash, hang
// or exhaust memory; this code does not guard against that (the parent process does, see
// isolated_measurer.h), it turns every error it *can* catch into a result status.
//
// Links the searcher (to apply serialized schedules); the searcher does not pull libtorch.
#pragma once

#include <functional>
#include <string>

#include "measurer/measurement.h"

namespace protuner {

// Tunables of a measurement in the child, with their defaults in one place.
struct ChildMeasureOptions {
  std::string cache_dir;         // where reference outputs live (reference_output.h)
  uint64_t input_seed = 1;       // seed of the standard inputs (bind_random_inputs)
  // The C++ compiler driver that links a candidate compiled ahead of time into a shared
  // object (compiled_candidate.h); empty: the one protuner was built with.
  std::string linker;
};

// Measures the request in `request_text` (measure_json.h). `enter_phase` is called with
// child_protocol::kPhase* as each phase starts. Never throws: a malformed request, a
// missing generator or a schedule for another pipeline is bad_request; a Halide error
// while scheduling or compiling is compile_error; a Halide runtime error is runtime_crash
// (out_of_memory when Halide ran out of memory); a different output is wrong_output.
// `cpus` and `from_cache` are left for the parent to fill in.
MeasureResult measure_in_this_process(const std::string &request_text,
                                      const ChildMeasureOptions &options,
                                      const std::function<void(const char *)> &enter_phase);

}  // namespace protuner
