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

void check_settings(const TimingSettings &s) {
  if (s.samples < 1) throw ConfigError("timing: samples must be at least 1");
  if (s.max_samples < s.samples) {
    throw ConfigError("timing: max_samples must be at least samples (" +
                      std::to_string(s.samples) + ")");
  }
  if (s.warmup_runs < 0) throw ConfigError("timing: warmup_runs must be >= 0");
  if (!(s.min_sample_seconds >= 0)) throw ConfigError("timing: min_sample_seconds must be >= 0");
  if (s.confirming_samples < 1) throw ConfigError("timing: confirming_samples must be at least 1");
  if (!(s.confirm_within >= 0)) throw ConfigError("timing: confirm_within must be >= 0");
  if (!(s.stop_above_ms >= 0)) throw ConfigError("timing: stop_above_ms must be >= 0");
  if (s.early_stop_samples < 1) throw ConfigError("timing: early_stop_samples must be at least 1");
  if (!(s.early_stop_factor >= 1)) throw ConfigError("timing: early_stop_factor must be >= 1");
}

}  // namespace

bool minimum_confirmed(const std::vector<double> &samples_ms, const TimingSettings &settings) {
  const size_t k = static_cast<size_t>(settings.confirming_samples);
  if (samples_ms.size() < k) return false;
  std::vector<double> smallest(samples_ms);
  std::partial_sort(smallest.begin(), smallest.begin() + k, smallest.end());
  return smallest[k - 1] <= smallest[0] * (1.0 + settings.confirm_within);
}

TimingResult time_runs(const std::function<void()> &run, const TimingSettings &settings) {
  check_settings(settings);
  for (int i = 0; i < settings.warmup_runs; ++i) run();
  // Sized by a run after the warm-up: the very first run pays for page faults and the
  // thread pool, and sized by it a sample of a sub-millisecond pipeline would last a few
  // ms, not 50.
  auto start = std::chrono::steady_clock::now();
  run();
  const double one_run = std::max(seconds_since(start), 1e-9);

  TimingResult result;
  result.runs_per_sample =
      std::max(1, static_cast<int>(std::ceil(settings.min_sample_seconds / one_run)));
  while (static_cast<int>(result.samples_ms.size()) < settings.max_samples) {
    start = std::chrono::steady_clock::now();
    for (int r = 0; r < result.runs_per_sample; ++r) run();
    result.samples_ms.push_back(seconds_since(start) * 1000.0 / result.runs_per_sample);
    const int n = static_cast<int>(result.samples_ms.size());
    const double fastest = *std::min_element(result.samples_ms.begin(), result.samples_ms.end());
    if (settings.stop_above_ms > 0 && n >= settings.early_stop_samples &&
        fastest > settings.stop_above_ms * settings.early_stop_factor) {
      result.stopped_above = true;
      break;
    }
    if (n < settings.samples) continue;
    if (minimum_confirmed(result.samples_ms, settings)) {
      result.confirmed = true;
      break;
    }
    if (settings.stop_above_ms > 0 && fastest > settings.stop_above_ms) {
      result.stopped_above = true;
      break;
    }
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
