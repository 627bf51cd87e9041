// Real measurement for searches: a CandidateMeasurer (search.h) over any MeasurementBackend
// (measurement.h): the in-process IsolatedMeasurer, or MeasurerClient for the farm's
// measurer daemons. A state becomes a `protuner` schedule (schedule_json.h) of one app.
//
// Searches propose the same complete schedule again and again (other seeds, other trees,
// the final check of a search's best), so results are remembered by the schedule's JSON
// text: a repeat costs no request and does not count as a measurement. Failures are
// remembered too (a timeout is not retried within a run: the budget is better spent on
// other candidates).
//
// Thread safety: measure() may be called from several search threads; calls are
// serialized, since one measurement at a time is what the backend does anyway.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "measurer/measurement.h"
#include "searcher/search/search.h"

namespace protuner {

// How a search's candidates are measured, before the app's budget is known: the farm's
// settings, except shorter time limits, since a candidate that needs minutes to compile is
// never a winner and a budget is minutes (MeasureSettings' 300 s would eat a 2-minute
// budget twice).
MeasureSettings search_measure_settings();

// `measure` with the compile limit of a candidate of an app with a budget of
// `budget_seconds`: `share` of it, within [min_seconds, measure.compile_timeout_seconds].
// One candidate that compiles for two minutes would otherwise eat most of a short budget
// (bilateral_grid has such candidates). The defaults, which tune and the plugin use: 15
// minutes allow 120 s, 3 minutes 27 s, 2 minutes 20 s.
inline constexpr double kDefaultCandidateCompileShare = 0.15;
inline constexpr double kDefaultCandidateCompileMinSeconds = 20;
MeasureSettings with_candidate_compile_limit(const MeasureSettings &measure,
                                             double budget_seconds, double share,
                                             double min_seconds);

// How the distinct schedules measured for an app fared.
struct CandidateTally {
  int64_t ok = 0, failed = 0;
  // The first few failures, in the order they happened: "status: first line of the error".
  std::vector<std::string> first_errors;
};

// Why an app's measurements cannot be trusted to have tuned it, or nullopt: nothing
// measured ok, or more candidates failed than measured ok (a reference that fails, a
// pipeline protuner cannot schedule or a generator it builds wrong fails them all). Names
// the counts and the first errors. Tune and the plugin refuse such an app rather than fall
// back to the cost model's choice unmeasured.
std::optional<std::string> measurement_failure(const CandidateTally &tally);

class BackendCandidateMeasurer : public CandidateMeasurer {
 public:
  // `backend` must outlive this object. `target` is a Halide target string ("host": the
  // measurer's corrected host target).
  BackendCandidateMeasurer(MeasurementBackend &backend, AppSpec app, std::string target,
                           MeasureSettings settings);
  BackendCandidateMeasurer(const BackendCandidateMeasurer &) = delete;
  BackendCandidateMeasurer &operator=(const BackendCandidateMeasurer &) = delete;

  // Runtime in seconds (the minimum over samples) per state, nullopt where the candidate
  // failed; each failure is logged with its status and error.
  std::vector<std::optional<double>> measure(
      const std::vector<const ScheduleState *> &batch) override;
  int64_t measurements() const override;

  // Measures `state` with a compile limit of `compile_timeout_seconds` instead of the one
  // the measurer was made with, replacing a remembered failure (a remembered success is
  // returned as is): for the one schedule an app must have, which may compile for longer
  // than a candidate may (tune's fallback on resnet50's whole network).
  std::optional<double> measure_allowing_compile(const ScheduleState &state,
                                                 double compile_timeout_seconds);

  // Every schedule measured so far, counted by outcome (the latest result of each).
  CandidateTally tally() const;

  // The remembered result for a schedule's JSON text, if it was measured.
  std::optional<MeasureResult> result_for(const std::string &schedule_json) const;

  // Called once per schedule that measured successfully, with its runtime in seconds
  // (tune calibrates the cost model with it): not for repeats, nor for failures. Called
  // from the measuring thread, after the measurement's lock is released. Set it before
  // measuring.
  using MeasuredObserver = std::function<void(const ScheduleState &, double seconds)>;
  void on_measured(MeasuredObserver observer) { observer_ = std::move(observer); }

  // From now on, a candidate stops sampling once its first samples are all slower than
  // `ratio` times the fastest candidate measured so far (TimingSettings::stop_above_ms):
  // it will not win, and its runtime is still the fastest of those samples. 0, the
  // default, samples every candidate to the end. Set it before measuring.
  void stop_sampling_above_best(double ratio) { stop_above_best_ = ratio; }
  // A runtime in ms measured for this app outside the search, which the line counts as
  // the fastest so far when it is (tune's expert and default schedules): the first
  // candidates, when slow, stop early too (without it, a slow first candidate of
  // conv_layer, several times the expert's runtime, can sample for a good part of a
  // 3-minute budget).
  void stop_line_reference(double ms);

  const AppSpec &app() const { return app_; }
  // The settings candidates are measured with (measure_allowing_compile aside).
  const MeasureSettings &settings() const { return settings_; }

 private:
  // The runtime of `state`: remembered (a remembered failure too, unless `retry_failure`),
  // else measured with `settings`; tells the observer of a new success.
  std::optional<double> measure_one(const ScheduleState &state, const MeasureSettings &settings,
                                    bool retry_failure);
  // Sends one request (mutex_ held) and remembers its result.
  const MeasureResult &request(const std::string &schedule_json, const MeasureSettings &settings);

  MeasurementBackend &backend_;
  AppSpec app_;
  std::string target_;
  MeasureSettings settings_;
  mutable std::mutex mutex_;
  std::map<std::string, MeasureResult> results_;  // by schedule JSON text
  std::vector<std::string> first_errors_;         // CandidateTally::first_errors
  MeasureResult cancelled_;  // the last cancelled answer: kept out of results_ and the tally
  int64_t measurements_ = 0;                      // requests sent (repeats excluded)
  double stop_above_best_ = 0;
  std::optional<double> best_ms_;  // the fastest successful result (or reference) so far
  MeasuredObserver observer_;
};

}  // namespace protuner
