// Timing a compiled pipeline: warm-up runs, then samples, each long enough to time
// reliably, until the minimum is confirmed; the minimum is the runtime (noise only ever
// adds time). This is the in-process core of a measurement; isolation in a child process,
// output checking and the ZeroMQ service build on it.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

namespace protuner {

struct TimingSettings {
  // Untimed runs first: page faults, thread pool start-up. One more run after them is timed
  // to size the samples, so the first run's start-up cost does not shorten every sample.
  int warmup_runs = 1;
  int samples = 10;      // timed samples at least (the GNN cost-model paper uses 10)
  int max_samples = 40;  // ...and at most, while the minimum is not yet confirmed
  double min_sample_seconds = 0.05;  // each sample repeats the run until it lasts this long
  // The minimum is confirmed when `confirming_samples` samples (itself included) lie within
  // `confirm_within` (relative) of it: one lucky or one disturbed sample does not set the
  // runtime, and a measurement repeated in another process lands within about that much.
  int confirming_samples = 3;
  double confirm_within = 0.01;
  // When above 0: once `samples` samples are in and the fastest of them took longer than
  // this, stop unconfirmed. A search sets it from the fastest candidate it has measured:
  // a candidate already slower than that will not win, and the samples that would only
  // say by how much cost a slow one a good part of a short budget on a noisy host
  // (TuneSettings::candidate_stop_above_best).
  double stop_above_ms = 0;
  // ...and sooner, once `early_stop_samples` samples are in, when their fastest took longer
  // than `early_stop_factor` times the line: 2x the best at the search's 1.2 line. Even on
  // a noisy host the fastest of a candidate's first 3 samples stays well under 2x the
  // fastest of all 40, so a candidate stopped this early would not have beaten the best;
  // the samples it skips cost seconds per candidate on apps whose candidates are mostly
  // several times slower than the best (conv_layer).
  int early_stop_samples = 3;
  double early_stop_factor = 5.0 / 3;

  // At least `n` samples, and max_samples raised to match when it was below.
  void set_samples(int n) {
    samples = n;
    max_samples = std::max(max_samples, n);
  }
};

struct TimingResult {
  std::vector<double> samples_ms;  // per-run time of each sample
  double min_ms = 0;
  double median_ms = 0;
  double relative_spread = 0;  // (median - min) / min: how noisy the samples were
  int runs_per_sample = 1;
  bool confirmed = false;  // the minimum met the confirmation rule within max_samples
  bool stopped_above = false;  // stopped at a TimingSettings::stop_above_ms line, unconfirmed
};

// Times `run` (one execution of the pipeline) under `settings`. Throws ConfigError when the
// settings are out of range.
TimingResult time_runs(const std::function<void()> &run, const TimingSettings &settings);

// Whether the `confirming_samples` smallest of `samples_ms` lie within `confirm_within` of
// the smallest (false for fewer samples than that).
bool minimum_confirmed(const std::vector<double> &samples_ms, const TimingSettings &settings);

}  // namespace protuner
