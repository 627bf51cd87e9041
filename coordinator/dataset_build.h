// `protuner dataset build` and `protuner dataset stats`: training data for the learned cost
// models. For each random pipeline (apps/random_pipeline, one per seed) and each app of an
// optional suite, K random complete schedules are drawn from the schedule space (the same
// space and rollout the search uses), measured one at a time in isolation, and the ok ones
// appended to a dataset file (searcher/cost/dataset.h). Failures are counted and logged,
// never stored as samples; a failed schedule is kept in `<out>.failed/` to reproduce it. A
// build is resumable: schedules are drawn from a generator seeded by the pipeline, so a
// rerun draws the same ones and skips those already in the file.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/app.h"
#include "coordinator/dataset_export.h"
#include "coordinator/dataset_remeasure.h"
#include "measurer/measurement.h"
#include "measurer/timing.h"
#include "searcher/cost/dataset.h"

namespace CLI {
class App;
}

namespace Halide {
struct Target;
}

namespace protuner {

inline TimingSettings dataset_timing() {
  TimingSettings t;
  t.samples = t.max_samples = 10;
  t.min_sample_seconds = 0.02;
  return t;
}

// What a build does. The defaults are the command line's.
struct DatasetBuildOptions {
  std::string out;  // the dataset file: created, or appended to and resumed
  // Random pipelines: seeds first_seed .. first_seed + pipelines - 1.
  int pipelines = 20;
  uint32_t first_seed = 0;
  // Random pipelines that also draw scan blocks (the generator's `scans` param): other
  // pipelines than the same seeds without, so their ids are random_scans_<seed>.
  bool scans = false;
  // Distinct random complete schedules per pipeline (and per suite app).
  int schedules_per_pipeline = 10;
  // Rollouts drawn per wanted schedule before a pipeline's space counts as exhausted (a
  // two-Func pipeline has fewer distinct schedules than a large K).
  int draws_per_schedule = 4;
  // An optional suite file whose apps are sampled too (pipeline_id = the app's name).
  std::string apps_suite;
  // Timing of each measurement: a fixed 10 samples as the GCN paper takes (004_*), not the
  // measurer's confirm-the-minimum loop of up to 40, which takes about twice as long per
  // sample on sub-millisecond pipelines; 20 ms each, since every pipeline runs for about a
  // millisecond. The spread of the 10 is stored and weights the training loss.
  TimingSettings timing = dataset_timing();
  // The random pipeline generator library; a bare name is searched like a suite's
  // libraries (common/suite.h, resolve_library) and stored in samples as given.
  std::string random_library = "libprotuner_random_pipeline.so";
  // Mixed into every pipeline's schedule generator: another value draws other schedules.
  uint64_t schedule_seed = 0;
  // Measurer caches (reference outputs, results); empty: the measurer's default.
  std::string cache_dir;
  bool use_result_cache = true;
};

// A schedule of a pipeline, whatever the key order its JSON was written with: (pipeline
// id, canonical schedule JSON). A dataset holds each at most once.
using DatasetKey = std::pair<std::string, std::string>;
DatasetKey dataset_key(const std::string &pipeline_id, const std::string &schedule_json);
// The keys of every sample of the file; none when it does not exist. Errors as read_dataset's.
std::set<DatasetKey> dataset_keys(const std::string &path);

// One app a build samples: the spec stored in samples and the one measured (its library
// resolved to a path).
struct DatasetApp {
  std::string pipeline_id;
  AppSpec stored;
  AppSpec resolved;
};

// One schedule of `app` measured for a dataset: an ok result is appended to `writer` as a
// sample (and a failure an earlier run kept for it removed), a failure is kept in
// `<writer's file>.failed/<pipeline id>.<index + 1>.json` and logged under `label`.
// `note` says which, for a progress line ("ok 1.234 ms", or the status and the file).
struct DatasetMeasurement {
  MeasureResult result;
  std::string note;
};
DatasetMeasurement measure_into_dataset(MeasurementBackend &measurer, const DatasetApp &app,
                                        const std::string &schedule, size_t index,
                                        const TimingSettings &timing, const Halide::Target &target,
                                        DatasetWriter &writer, const std::string &label);

// The random pipelines, then the suite's apps. Throws ConfigError for a bad suite or a
// library that cannot be found.
std::vector<DatasetApp> dataset_apps(const DatasetBuildOptions &options);

struct DatasetBuildSummary {
  int stored = 0;   // samples appended
  int skipped = 0;  // schedules already in the file
  int failed = 0;   // failed measurements, pipelines that did not build, dead-end rollouts
};

// Builds or resumes the dataset, measuring with `measurer`; one progress line per schedule
// on `progress`. Throws IoError when the dataset cannot be read or written, ConfigError
// when its existing lines are malformed.
DatasetBuildSummary build_dataset(const DatasetBuildOptions &options, MeasurementBackend &measurer,
                                  std::ostream &progress);

struct PipelineSampleStats {
  std::string pipeline_id;
  int samples = 0;
  double fastest_ms = 0, slowest_ms = 0;  // over its samples' min_ms
};

struct DatasetStats {
  int samples = 0;
  std::vector<PipelineSampleStats> pipelines;  // in order of first appearance
  double fastest_ms = 0, slowest_ms = 0;
  std::vector<std::string> host_classes, targets;  // distinct, sorted
};

DatasetStats dataset_stats(const std::vector<DatasetSample> &samples);
void print_dataset_stats(const DatasetStats &stats, std::ostream &out);

// The `dataset` subcommand of the protuner command line, with `build`, `merge`, `stats`,
// `remeasure` and `agreement` (dataset_remeasure.h), and `export` (dataset_export.h).
class DatasetCommand {
 public:
  explicit DatasetCommand(CLI::App &cli);
  bool parsed() const;
  // Exit code: 0 when done (failed measurements included; they are reported).
  int run();

 private:
  CLI::App *build_ = nullptr;
  CLI::App *merge_ = nullptr;
  CLI::App *stats_ = nullptr;
  CLI::App *remeasure_ = nullptr;
  CLI::App *agreement_ = nullptr;
  DatasetBuildOptions options_;
  DatasetRemeasureOptions remeasure_options_;
  std::vector<std::string> agreement_files_;
  std::vector<std::string> merge_inputs_;
  std::string merge_out_;
  std::string stats_file_;
  CLI::App *export_ = nullptr;
  std::string export_redis_;
  DatasetExportOptions export_options_;
};

}  // namespace protuner
