// `protuner tune` and `protuner local`: tune apps on this machine. Per app: analyze the
// pipeline for the host target, measure Halide's default and the generator's own schedule as the
// yardsticks, then run the app's tuning job (searcher/search/tuning_job.h: the seeds, then a
// search algorithm again and again with new seeds until the app's budget is spent),
// measuring in isolated children (one IsolatedMeasurer for the whole run), and keep the
// fastest measured.
// Each app gets <out>/<app>/schedule.h, schedule.json, result.json and trace.csv; the run
// ends with a summary table. The per-app pieces (prepare_app, search_until and
// TuneSettings, searcher/search/app_tuning.h, and ProgressLine here) are also what
// `protuner compare` (compare.h) and the farm's searcher daemon use, so all measure the
// same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/app.h"
#include "common/schedule/schedule_state.h"
#include "common/suite.h"
#include "measurer/measurement.h"
#include "searcher/search/app_tuning.h"

namespace CLI {
class App;
}

namespace protuner {

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
