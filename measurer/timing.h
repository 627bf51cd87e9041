// Timing a compiled pipeline: warm-up runs, then several samples, each long enough to time
// reliably; the minimum is the runtime (noise only ever adds time). This is the in-process
// core of a measurement; isolation in a child process, output checking and the ZeroMQ
// service build on it.
#pragma once

#include <functional>
#include <vector>

namespace protuner {

struct TimingSettings {
  int warmup_runs = 1;               // untimed runs first: page faults, thread pool start-up
  int samples = 10;                  // timed samples (the GNN cost-model paper uses 10)
  double min_sample_seconds = 0.05;  // each sample repeats the run until it lasts this long
};

struct TimingResult {
  std::vector<double> samples_ms;  // per-run time of each sample
  double min_ms = 0;
  double median_ms = 0;
  double relative_spread = 0;  // (median - min) / min: how noisy the samples were
  int runs_per_sample = 1;
};

// Times `run` (one execution of the pipeline) under `settings`. Throws ConfigError when the
// settings are out of range.
TimingResult time_runs(const std::function<void()> &run, const TimingSettings &settings);

}  // namespace protuner
