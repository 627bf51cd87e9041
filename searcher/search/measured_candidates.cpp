// Measuring search candidates through a MeasurementBackend (measured_candidates.h).
#include "searcher/search/measured_candidates.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "common/schedule/schedule_json.h"

namespace protuner {
namespace {

// The first line of an error: the rest (a child's stderr tail) goes to the debug log.
std::string first_line(const std::string &text) { return text.substr(0, text.find('\n')); }

// A candidate's runtime in seconds, nullopt when it failed.
std::optional<double> seconds_of(const MeasureResult &r) {
  if (!r.ok()) return std::nullopt;
  return r.timing.min_ms / 1000.0;
}

}  // namespace

MeasureSettings search_measure_settings() {
  MeasureSettings s;
  s.compile_timeout_seconds = 120;
  s.run_timeout_seconds = 60;
  return s;
}

MeasureSettings with_candidate_compile_limit(const MeasureSettings &measure,
                                             double budget_seconds, double share,
                                             double min_seconds) {
  MeasureSettings out = measure;
  out.compile_timeout_seconds = std::min(measure.compile_timeout_seconds,
                                         std::max(min_seconds, share * budget_seconds));
  return out;
}

BackendCandidateMeasurer::BackendCandidateMeasurer(MeasurementBackend &backend, AppSpec app,
                                                   std::string target, MeasureSettings settings)
    : backend_(backend),
      app_(std::move(app)),
      target_(std::move(target)),
      settings_(std::move(settings)) {}

std::vector<std::optional<double>> BackendCandidateMeasurer::measure(
    const std::vector<const ScheduleState *> &batch) {
  std::vector<std::optional<double>> out;
  out.reserve(batch.size());
  for (const ScheduleState *state : batch) out.push_back(measure_one(*state, settings_, false));
  return out;
}

std::optional<double> BackendCandidateMeasurer::measure_allowing_compile(
    const ScheduleState &state, double compile_timeout_seconds) {
  MeasureSettings settings = settings_;
  settings.compile_timeout_seconds = compile_timeout_seconds;
  return measure_one(state, settings, true);
}

std::optional<double> BackendCandidateMeasurer::measure_one(const ScheduleState &state,
                                                            const MeasureSettings &settings,
                                                            bool retry_failure) {
  const std::string json = schedule_to_json(state);
  std::optional<double> seconds;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = results_.find(json);
    if (it != results_.end() && (it->second.ok() || !retry_failure)) {
      return seconds_of(it->second);
    }
    seconds = seconds_of(request(json, settings));
  }
  if (seconds && observer_) observer_(state, *seconds);
  return seconds;
}

const MeasureResult &BackendCandidateMeasurer::request(const std::string &schedule_json,
                                                       const MeasureSettings &settings) {
  MeasureRequest request;
  request.app = app_;
  request.schedule = {ScheduleKind::kProtuner, schedule_json, "", ""};
  request.target = target_;
  request.settings = settings;
  if (stop_above_best_ > 0 && best_ms_) {
    request.settings.timing.stop_above_ms = *best_ms_ * stop_above_best_;
  }
  MeasureResult result = backend_.measure(request);
  if (result.status == MeasureStatus::kCancelled) {
    // The job's deadline passed first: not a measurement, and not the candidate's fault.
    cancelled_ = std::move(result);
    return cancelled_;
  }
  ++measurements_;
  if (result.ok()) {
    best_ms_ = std::min(best_ms_.value_or(result.timing.min_ms), result.timing.min_ms);
  }
  if (!result.ok()) {
    constexpr size_t kErrorsKept = 3;
    if (first_errors_.size() < kErrorsKept) {
      first_errors_.push_back(std::string(status_name(result.status)) + ": " +
                              first_line(result.error));
    }
    spdlog::warn("{}: a candidate failed to measure: {}: {}", app_.name, status_name(result.status),
                 first_line(result.error));
    spdlog::debug("{}: full error of the failed candidate: {}", app_.name, result.error);
  }
  MeasureResult &stored = results_[schedule_json];
  stored = std::move(result);
  return stored;
}

void BackendCandidateMeasurer::stop_line_reference(double ms) {
  if (!(ms > 0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  best_ms_ = std::min(best_ms_.value_or(ms), ms);
}

CandidateTally BackendCandidateMeasurer::tally() const {
  std::lock_guard<std::mutex> lock(mutex_);
  CandidateTally t;
  for (const auto &[json, result] : results_) ++(result.ok() ? t.ok : t.failed);
  t.first_errors = first_errors_;
  return t;
}

std::optional<std::string> measurement_failure(const CandidateTally &tally) {
  if (tally.ok > 0 && tally.failed <= tally.ok) return std::nullopt;
  std::string why = tally.ok == 0 && tally.failed == 0
                        ? std::string("no schedule was measured")
                        : std::to_string(tally.failed) + " of " +
                              std::to_string(tally.ok + tally.failed) +
                              " schedules failed to measure";
  for (size_t i = 0; i < tally.first_errors.size(); ++i) {
    why += (i == 0 ? "; first: " : "; then: ") + tally.first_errors[i];
  }
  return why;
}

int64_t BackendCandidateMeasurer::measurements() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return measurements_;
}

std::optional<MeasureResult> BackendCandidateMeasurer::result_for(
    const std::string &schedule_json) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = results_.find(schedule_json);
  if (it == results_.end()) return std::nullopt;
  return it->second;
}

}  // namespace protuner
