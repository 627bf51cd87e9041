// A candidate compiled ahead of time, as the user's build compiles the generator (a static
// library with Halide's runtime, here linked into a shared object), and run in a fresh
// process by protuner-measure-runner (measure_runner_main.cpp says why a fresh process).
// The measure child compiles, plans the arguments (run_plan.h), and asks the runner to run
// the candidate once (its outputs come back for the output check) and then to time it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <Halide.h>

#include "common/pipeline_io.h"
#include "measurer/measurement.h"

namespace protuner {

// How running the candidate in the runner ended when it did not succeed.
struct RunnerFailure {
  MeasureStatus status;
  std::string error;
};

class CompiledCandidate {
 public:
  // Compiles `pipeline` for `target` into `dir` (created; the caller removes it) and links
  // it into a shared object with `linker` (a C++ compiler driver). Throws Halide::Error
  // when Halide refuses to compile it and IoError when linking fails.
  CompiledCandidate(Halide::Pipeline &pipeline, const Halide::Target &target, std::string dir,
                    const std::string &linker);

  // Writes the run plan: `inputs` (bind_random_inputs) and `outputs` in the compiled
  // function's argument order.
  void plan(const std::vector<BoundInput> &inputs, const Halide::Realization &outputs);

  // Runs the candidate once in the runner and copies its outputs into `outputs` (the
  // buffers the plan was made from). `app_library` resolves extern functions.
  std::optional<RunnerFailure> run_once(const std::string &app_library,
                                        Halide::Realization &outputs) const;

  // Times the candidate in a fresh runner under `settings`.
  std::optional<RunnerFailure> time(const std::string &app_library, const TimingSettings &settings,
                                    TimingResult &timing) const;

 private:
  // Runs protuner-measure-runner with `extra` arguments; its exit status and the text it
  // printed on stdout and stderr.
  struct RunnerEnd {
    int wait_status = 0;
    std::string out, err;
  };
  RunnerEnd run_runner(const std::string &app_library, const std::vector<std::string> &extra) const;
  std::optional<RunnerFailure> failure_of(const RunnerEnd &end) const;

  std::string dir_, shared_object_;
  std::vector<Halide::Argument> arguments_;
};

}  // namespace protuner
