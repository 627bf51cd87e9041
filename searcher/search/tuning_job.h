// One tuning job, one implementation: a pipeline, a measurement backend, a cost model and a
// deadline in, the fastest measured schedule out. `protuner tune` and `compare` run it per
// app (coordinator/tune.h), so do the Halide plugin (searcher/plugin/) and the farm's
// searcher daemon, per job (searcher/daemon/), so a schedule is found by the same rules
// however it is asked for.
//
// The job measures the seeds (seed_measurement.h), then runs the named search from the
// fastest schedule measured so far, with seeds seed, seed+1, ... until the deadline,
// measuring each run's best when the search did not, and keeps the fastest measured.
// Without a measurer (the cost model alone) the same happens by prediction: the search
// starts from the seed the model predicts cheapest (cheapest_predicted_seed), runs repeat
// from the cheapest so far when the search uses start points (MCTS; greedy would repeat
// itself, so it runs once), and the result is the cheapest predicted of seeds and runs.
// With an iteration budget (a repeatable job) the search runs once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/pipeline/pipeline_graph.h"
#include "common/schedule/schedule_state.h"
#include "measurer/measurement.h"
#include "searcher/cost/analytic_calibration.h"
#include "searcher/cost/cost_model.h"
#include "searcher/cost/machine_model.h"
#include "searcher/search/measured_candidates.h"
#include "searcher/search/seed_measurement.h"
#include "searcher/space/search_space.h"

namespace protuner {

// A candidate stops sampling once its first samples are all slower than this multiple of
// the fastest schedule the job has measured (BackendCandidateMeasurer::
// stop_sampling_above_best). The fastest of a candidate's first 10 samples is usually
// within a few percent of the fastest of all 40, so one whose first 10 are all 20% slower
// than the best seldom wins; on a noisy host few candidates confirm their minimum early,
// and without the stop the slow ones would spend much of a short budget on samples that
// change nothing. 0: every candidate takes them all.
inline constexpr double kDefaultCandidateStopAboveBest = 1.2;

// The cost model the job's searches use, one per search thread, given the job's calibration
// (nullptr when it has none).
using CalibratedCostModelFactory =
    std::function<std::unique_ptr<CostModel>(std::shared_ptr<const AnalyticCalibration>)>;

struct TuningJob {
  std::string label;  // names the job in log lines: the app
  std::shared_ptr<const PipelineGraph> graph;
  std::shared_ptr<const SearchSpace> space;
  MachineModel machine;  // the analytic model's machine: ranks the structural seeds
  CalibratedCostModelFactory cost_model;
  std::string algorithm;  // a search_registry.h name
  uint64_t seed = 0;      // of the first search run; each further run adds one
  int threads = 0;        // search threads; 0: hardware concurrency
  std::chrono::steady_clock::time_point start, deadline;
  // When set and true, the job ends as at its deadline (SearchBudget::stop).
  const std::atomic<bool> *stop = nullptr;
  // A repeatable job: the search runs once with this iteration budget
  // (SearchBudget::iterations), and the seeds are measured whatever the time.
  std::optional<int64_t> iterations;
  // Where candidates are measured; nullptr: by the cost model alone (nothing measured, the
  // cheapest predicted seed or search result is the result).
  BackendCandidateMeasurer *measurer = nullptr;
  // The compile limit baselines get: the most a seed may compile for.
  double baseline_compile_seconds = 0;
  SeedMeasurementSettings seeds;
  double candidate_stop_above_best = kDefaultCandidateStopAboveBest;
  // When set, every schedule measured successfully calibrates it (analytic_calibration.h),
  // and the cost models made after that predict with it.
  std::shared_ptr<AnalyticCalibration> calibration;
};

// A point of a job's trace, over all its search runs.
struct TunePoint {
  double seconds = 0;                      // since the job's start
  std::optional<double> best_measured_ms;  // the best measured so far
  std::optional<double> best_cost_ms;      // the cost model's best prediction so far
};

// The live state of a job, for progress lines and the farm's progress records: totals over
// its search runs so far, the one under way included.
struct LoopProgress {
  double elapsed_seconds = 0;
  std::optional<double> best_ms;
  int64_t measurements = 0;
  int runs = 0;
  int64_t rollouts = 0;   // complete schedules the searches reached
  int64_t decisions = 0;  // root decisions the searches took (MCTS; other searches: 0)
};

struct SearchOutcome {
  // The fastest measured complete schedule, or, without a measurer, the cheapest predicted
  // seed or search result (then best_result is empty).
  std::optional<ScheduleState> best;
  std::optional<MeasureResult> best_result;
  double best_cost_seconds = 0;  // the cost model's prediction for `best`
  std::optional<MeasuredSeed> best_seed;  // the fastest seed measured
  // The last search run's best complete schedule, measured or not: what a caller may fall
  // back to when nothing measured.
  std::optional<ScheduleState> last_run_best;
  std::vector<uint64_t> seeds;            // one per search run
  std::vector<TunePoint> trace;
  std::vector<std::string> errors;  // runs that threw, with why
  // Over all runs: complete schedules the searches built, and their cost-model evaluations.
  int64_t rollouts = 0, evaluations = 0;
  // The calibration at the end: the measured schedules it was fitted to (0 without one)
  // and the term weights it came to.
  size_t calibration_samples = 0;
  AnalyticTerms calibration_weights = unit_term_weights();
};

// Runs `job` (see the file comment): at least one search run, even past the deadline.
// Throws ConfigError for an unknown algorithm; a run that throws is recorded in `errors`
// and ends the job. `progress` (may be empty) is called from the search's thread after
// every root decision and every run.
SearchOutcome run_tuning_job(const TuningJob &job,
                             const std::function<void(const LoopProgress &)> &progress = {});

}  // namespace protuner
