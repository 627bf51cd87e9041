// `protuner tune` and `protuner local`: tune apps on this machine. Per app: analyze the
// pipeline for the host target, measure Halide's default and the generator's own schedule as the
// yardsticks, then run the app's tuning job (searcher/search/tuning_job.h: the seeds, then a
// search algorithm again and again with new seeds until the app's budget is spent),
// measuring in isolated children (one IsolatedMeasurer for the whole run), and keep the
// fastest measured.
// Each app gets <out>/<app>/schedule.h, schedule.json, result.json and trace.csv; the run
// ends with a summary table. The pieces (prepare_app, search_until, ProgressLine) are also
// what `protuner compare` (compare.h) uses, so both measure the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/app.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/schedule/schedule_state.h"
#include "common/suite.h"
#include "measurer/measurement.h"
#include "searcher/cost/analytic_calibration.h"
#include "searcher/cost/learned/cost_model_choice.h"
#include "searcher/cost/machine_model.h"
#include "searcher/search/measured_candidates.h"
#include "searcher/search/seed_measurement.h"
#include "searcher/search/tuning_job.h"
#include "searcher/space/search_space.h"

namespace CLI {
class App;
}

namespace protuner {

class BackendCandidateMeasurer;

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

// What `protuner tune` (and `protuner local`) was asked to do.
struct TuneArgs {
  std::string suite_file;                // tune every app of this suite, or:
  std::string app, suite;                // one app of a suite, or:
  std::string library, generator;        // one generator of a library
  std::vector<std::string> params;       // generator params k=v (with --library)
  std::string algorithm;                 // empty: kDefaultSearch
  std::optional<double> budget_minutes;  // overrides the suite's per-app budget
  std::string out_dir = "tune-out";
  uint64_t seed = 1;                       // first search seed; each run adds one
  int samples = TimingSettings{}.samples;  // timed samples per measurement
  std::string cache_dir;                   // empty: the measurer's default
  std::vector<int> cpus;                   // empty: this process's CPUs
  // Every successful candidate measurement is appended here as a training sample
  // (coordinator/measurement_recorder.h); empty: <out_dir>/measurements.jsonl.
  std::string dataset;
  std::string cost_model = kDefaultCostModel;  // a CostModelChoice name or weights file
  bool no_calibration = false;                 // TuneSettings::calibrate off
  std::optional<double> stop_above_best;       // TuneSettings::candidate_stop_above_best
  // How candidates and baselines are timed (MeasureSettings::allocator): "platform" or
  // "pooling".
  std::string allocator = allocator_policy_name(AllocatorPolicy::kPlatform);
};

// `settings` with what `args` override: the cost model they name, its calibration unless
// they say not, the candidates' stop line. Weights are read and checked here, so a missing
// or wrong file is refused (IoError, ConfigError naming it) before any work.
TuneSettings with_args(const TuneSettings &settings, const TuneArgs &args);

// Which command the options are for: `tune`; `local` (a required suite file, no single
// app); `compare` (no --algorithm: it runs several, compare.h).
enum class TuneCommand { kTune, kLocal, kCompare };
void add_tune_options(CLI::App *command, TuneArgs &args, TuneCommand which = TuneCommand::kTune);

// The apps the arguments name, with their budgets (--budget-minutes applied). Throws
// ConfigError when none is named or the suite or library cannot be read.
std::vector<SuiteApp> apps_to_tune(const TuneArgs &args);

// Runs the whole tuning: exit code 0 when every app got a measured schedule, 1 when some
// app failed (each is reported, the others still run). Throws ConfigError (exit 2) for a
// bad command line: no app named, an unknown algorithm (naming the valid ones).
int run_tune(const TuneArgs &args, const TuneSettings &settings = {});

// --- Pieces shared with `protuner compare` ---

// The dataset file the run records its measurements in (TuneArgs::dataset), its folder
// created. Throws IoError when the folder cannot be created.
std::string dataset_path(const TuneArgs &args);

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
// learned, the stop line, the threads). Throws ConfigError for an unknown algorithm.
SearchOutcome search_until(const PreparedApp &app, const std::string &algorithm, uint64_t seed,
                           Clock::time_point start, Clock::time_point deadline,
                           BackendCandidateMeasurer &measurer, const TuneSettings &settings,
                           const std::function<void(const LoopProgress &)> &progress);

// How search candidates of an app with this budget are measured: `measure` with the
// compile limit of TuneSettings::candidate_compile_share.
MeasureSettings candidate_measure_settings(const MeasureSettings &measure, double budget_seconds,
                                           const TuneSettings &settings);

// The stop time of an app's search: its budget minus the reserve (TuneSettings).
Clock::time_point search_deadline(Clock::time_point start, double budget_seconds,
                                  const TuneSettings &settings);

// One line of progress per app: on a terminal rewritten in place, otherwise printed as
// plain lines at most every `plain_interval_seconds`.
class ProgressLine {
 public:
  ProgressLine(std::string label, double plain_interval_seconds);
  void update(const std::string &text);
  void finish(const std::string &text);  // the app's last line, always printed

 private:
  std::string label_;
  double interval_;
  bool tty_;
  double last_print_ = -1e9;  // when the last line was printed, seconds since start_
  size_t last_width_ = 0;
  Clock::time_point start_ = Clock::now();
};

// "12.345" in ms, or the status name of a failed measurement.
std::string runtime_or_status(const std::optional<MeasureResult> &result);

// An app name as a C++ identifier (schedule_source) and as a folder name.
std::string identifier_for(const std::string &name);
std::string folder_for(const std::string &name);

}  // namespace protuner
