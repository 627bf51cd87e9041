#include "measurer/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/errors.h"

namespace protuner {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TimingResult time_runs(const std::function<void()> &run, const TimingSettings &settings) {
  if (settings.samples < 1) throw ConfigError("timing: samples must be at least 1");
  if (settings.warmup_runs < 0) throw ConfigError("timing: warmup_runs must be >= 0");
  if (!(settings.min_sample_seconds >= 0)) {
    throw ConfigError("timing: min_sample_seconds must be >= 0");
  }
  // The first run is both warm-up and the estimate of how many runs make one sample.
  auto start = std::chrono::steady_clock::now();
  run();
  double one_run = std::max(seconds_since(start), 1e-9);
  for (int i = 1; i < settings.warmup_runs; ++i) run();

  TimingResult result;
  result.runs_per_sample =
      std::max(1, static_cast<int>(std::ceil(settings.min_sample_seconds / one_run)));
  for (int s = 0; s < settings.samples; ++s) {
    start = std::chrono::steady_clock::now();
    for (int r = 0; r < result.runs_per_sample; ++r) run();
    result.samples_ms.push_back(seconds_since(start) * 1000.0 / result.runs_per_sample);
  }
  std::vector<double> sorted = result.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  result.min_ms = sorted.front();
  const size_t n = sorted.size();
  result.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  result.relative_spread =
      result.min_ms > 0 ? (result.median_ms - result.min_ms) / result.min_ms : 0;
  return result;
}

}  // namespace protuner
