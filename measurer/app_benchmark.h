// Compiles an app's pipeline in this process and times it on random inputs at the
// estimated sizes. Used for the baselines every report shows (Halide's default schedule,
// the app's expert schedule) until isolated measurement in a child process exists.
#pragma once

#include <map>
#include <string>

#include "common/app.h"
#include "measurer/timing.h"

namespace protuner {

struct AppBenchmarkResult {
  double compile_seconds = 0;
  TimingResult timing;
};

// Builds the app with `extra_params` (e.g. {"expert","true"}) for the host target, JIT-
// compiles it, binds random inputs (fixed seed) and times a full-size realization.
// Throws AppLoadError/ConfigError for a bad app, Halide::Error if compiling fails.
AppBenchmarkResult benchmark_app(const AppSpec &spec,
                                 const std::map<std::string, std::string> &extra_params,
                                 const TimingSettings &settings);

}  // namespace protuner
