// One app's tuning on a searcher, as `protuner tune`, `compare` and the farm's searcher
// daemon all run it: the app prepared for the host target (generator instantiated,
// pipeline analyzed, space built), every tunable of a tuning run with its default, and the
// tuning job (tuning_job.h) built from them. Only how an app reaches the searcher and where
// its results go differ between the commands; what is searched and measured does not.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/app.h"
#include "common/pipeline/pipeline_graph.h"
#include "measurer/measurement.h"
#include "searcher/cost/analytic_calibration.h"
#include "searcher/cost/learned/cost_model_choice.h"
#include "searcher/cost/machine_model.h"
#include "searcher/search/measured_candidates.h"
#include "searcher/search/seed_measurement.h"
#include "searcher/search/tuning_job.h"
#include "searcher/space/search_space.h"

namespace protuner {

// Every tunable of a tuning run, in one place.
struct TuneSettings {
  // How candidates and baselines are measured (search_measure_settings,
  // measured_candidates.h).
  MeasureSettings measure = search_measure_settings();
  // The reserve: a search stops this long before the app's budget ends, so measuring its
  // best schedule (one compile, typically 1-20 s, plus warm-up and 10 samples of 50 ms)
  // still fits in the budget. A share of the budget within [min, max], and never more
  // than half of it: 15 min keeps 60 s, 2 min 12 s, a test's 18 s budget 5 s. A compile
  // slower than the reserve overruns the budget by the difference.
  double reserve_share = 0.1;
  double reserve_min_seconds = 5;
  double reserve_max_seconds = 60;
  // A search candidate may compile for this share of the app's budget, within [min,
  // measure.compile_timeout_seconds] (with_candidate_compile_limit); baselines keep the
  // full limit.
  double candidate_compile_share = kDefaultCandidateCompileShare;
  double candidate_compile_min_seconds = kDefaultCandidateCompileMinSeconds;
  // A candidate stops sampling once its first samples are all slower than this multiple of
  // the fastest schedule measured (kDefaultCandidateStopAboveBest, tuning_job.h). It also
  // stops after 3 samples 5/3 of the line (2x the best at 1.2;
  // TimingSettings::early_stop_factor), and tune_app counts the own and default schedules'
  // runtimes as measured. 0: every candidate takes them all.
  double candidate_stop_above_best = kDefaultCandidateStopAboveBest;
  // How the seeds are measured before the search (seed_measurement.h): up to the deadline
  // of the search (the budget less the reserve), seeds compiling within
  // measure.compile_timeout_seconds.
  SeedMeasurementSettings seeds;
  // Search threads (MCTS trees, beam scoring); 0: hardware concurrency.
  int search_threads = 0;
  // The searches' cost model (one per search thread). The seeds stay ranked by the
  // analytic model (seeds_to_measure).
  CostModelChoice cost_model;
  // Whether the analytic model's term weights are fitted to the app's measurements as
  // they come in (searcher/cost/analytic_calibration.h); learned models are not.
  bool calibrate = true;
  CalibrationOptions calibration;
  // Without a terminal, a progress line is printed at most this often (with one, the
  // line is rewritten in place at every update).
  double plain_progress_interval_seconds = 15;
};

// One app ready to search on this machine: its generator instantiated for the host
// target (kept alive: the graph refers to its pipeline), the graph, the space.
struct PreparedApp {
  AppSpec spec;
  std::shared_ptr<AppInstance> instance;
  std::shared_ptr<const PipelineGraph> graph;
  std::shared_ptr<const SearchSpace> space;
  MachineModel machine;  // the analytic model's machine: the host, with `cores` CPUs
};

// Throws AppLoadError (or ConfigError) when the app cannot be loaded or analyzed.
PreparedApp prepare_app(const AppSpec &spec, int cores);

using Clock = std::chrono::steady_clock;

// The tuning job (run_tuning_job, tuning_job.h) of one prepared app: `algorithm` from seed
// `seed`, between `start` and `deadline`, measured through `measurer`, by `settings` (the
// seeds, the cost model, its calibration unless settings.calibrate is off or the model is
// learned, the stop line, the threads). `stop`, when given, ends it early
// (TuningJob::stop). Throws ConfigError for an unknown algorithm.
SearchOutcome search_until(const PreparedApp &app, const std::string &algorithm, uint64_t seed,
                           Clock::time_point start, Clock::time_point deadline,
                           BackendCandidateMeasurer &measurer, const TuneSettings &settings,
                           const std::function<void(const LoopProgress &)> &progress,
                           const std::atomic<bool> *stop = nullptr);

// How search candidates of an app with this budget are measured: `measure` with the
// compile limit of TuneSettings::candidate_compile_share.
MeasureSettings candidate_measure_settings(const MeasureSettings &measure, double budget_seconds,
                                           const TuneSettings &settings);

// The stop time of an app's search: its budget minus the reserve (TuneSettings).
Clock::time_point search_deadline(Clock::time_point start, double budget_seconds,
                                  const TuneSettings &settings);

}  // namespace protuner
