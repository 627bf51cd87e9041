// Building a dataset: draw schedules per pipeline, skip the ones already stored, measure the
// rest, append the ok ones. Also the dataset statistics and the `dataset` CLI wiring.
#include "coordinator/dataset_build.h"

#include <Halide.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "common/errors.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/redis_client.h"
#include "common/redis_options.h"
#include "common/schedule/schedule_json.h"
#include "common/suite.h"
#include "coordinator/measurement_recorder.h"
#include "coordinator/redis_option.h"
#include "coordinator/text_table.h"
#include "measurer/isolated_measurer.h"
#include "searcher/space/search_space.h"

namespace protuner {
namespace {

// FNV-1a: a seed from the pipeline id that is the same in every build (std::hash is not).
uint64_t stable_hash(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// Up to `wanted` distinct random complete schedules of the app, always the same ones for
// the same (pipeline id, schedule seed). Counts dead-end rollouts in `dead_ends`.
std::vector<std::string> draw_schedules(const DatasetApp &app, const DatasetBuildOptions &options,
                                        const SearchSpace &space, const Halide::Target &target,
                                        int &dead_ends) {
  AppInstance instance = AppInstance::create(app.resolved, target);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(instance.pipeline()));
  std::mt19937_64 rng(stable_hash(app.pipeline_id) ^ options.schedule_seed);
  std::vector<std::string> schedules;
  std::set<DatasetKey> seen;
  const int wanted = options.schedules_per_pipeline;
  for (int draw = 0; draw < wanted * options.draws_per_schedule && (int)schedules.size() < wanted;
       ++draw) {
    ScheduleState state(graph);
    if (!space.random_rollout(state, rng)) {
      ++dead_ends;
      continue;
    }
    std::string text = schedule_to_json(state);
    if (seen.insert(dataset_key(app.pipeline_id, text)).second)
      schedules.push_back(std::move(text));
  }
  return schedules;
}

// Everything one build needs, so the phases below take one argument.
struct BuildContext {
  const DatasetBuildOptions &options;
  MeasurementBackend &measurer;
  std::ostream &progress;
  Halide::Target target;
  SearchSpace space;
  DatasetWriter writer;
  std::set<DatasetKey> stored;
  DatasetBuildSummary summary;
};

void measure_schedule(BuildContext &ctx, const DatasetApp &app, const std::string &schedule,
                      size_t index, const std::string &label) {
  const DatasetMeasurement m = measure_into_dataset(
      ctx.measurer, app, schedule, index, ctx.options.timing, ctx.target, ctx.writer, label);
  if (m.result.ok()) {
    ctx.stored.insert(dataset_key(app.pipeline_id, schedule));
    ++ctx.summary.stored;
  } else {
    ++ctx.summary.failed;
  }
  ctx.progress << label << ": " << m.note << " (stored " << ctx.summary.stored << ", skipped "
               << ctx.summary.skipped << ", failed " << ctx.summary.failed << ")" << std::endl;
}

void sample_app(BuildContext &ctx, const DatasetApp &app) {
  std::vector<std::string> schedules;
  int dead_ends = 0;
  try {
    schedules = draw_schedules(app, ctx.options, ctx.space, ctx.target, dead_ends);
  } catch (const Error &e) {  // the pipeline does not build or has no estimates
    ++ctx.summary.failed;
    spdlog::error("{}: cannot sample schedules: {}", app.pipeline_id, e.what());
    return;
  }
  ctx.summary.failed += dead_ends;
  if (dead_ends > 0) spdlog::warn("{}: {} rollouts hit a dead end", app.pipeline_id, dead_ends);
  for (size_t k = 0; k < schedules.size(); ++k) {
    const std::string label = app.pipeline_id + " schedule " + std::to_string(k + 1) + "/" +
                              std::to_string(schedules.size());
    if (ctx.stored.count(dataset_key(app.pipeline_id, schedules[k]))) {
      ++ctx.summary.skipped;
      continue;
    }
    measure_schedule(ctx, app, schedules[k], k, label);
  }
}

std::string fixed_or_dash(int samples, double value) {
  return samples > 0 ? format_fixed(value, 3) : "-";
}

}  // namespace

DatasetKey dataset_key(const std::string &pipeline_id, const std::string &schedule_json) {
  return {pipeline_id, nlohmann::json::parse(schedule_json).dump()};
}

std::set<DatasetKey> dataset_keys(const std::string &path) {
  std::set<DatasetKey> keys;
  if (!std::filesystem::exists(path)) return keys;
  for (const DatasetSample &s : read_dataset(path)) {
    keys.insert(dataset_key(s.pipeline_id, s.schedule_json));
  }
  return keys;
}

DatasetMeasurement measure_into_dataset(MeasurementBackend &measurer, const DatasetApp &app,
                                        const std::string &schedule, size_t index,
                                        const TimingSettings &timing, const Halide::Target &target,
                                        DatasetWriter &writer, const std::string &label) {
  MeasureRequest request;
  request.app = app.resolved;
  request.schedule.kind = ScheduleKind::kProtuner;
  request.schedule.schedule_json = schedule;
  request.target = target.to_string();
  request.settings.timing = timing;
  DatasetMeasurement m{measurer.measure(request), ""};
  if (m.result.ok()) {
    writer.append(sample_of(app.pipeline_id, app.stored, schedule, m.result, target));
    m.note = "ok " + format_fixed(m.result.timing.min_ms, 3) + " ms";
    // It failed in an earlier run (a measurer since mended): nothing left to chase.
    std::error_code ignored;
    std::filesystem::remove(failed_schedule_path(writer.path(), app.pipeline_id, index), ignored);
  } else {
    m.note = std::string(status_name(m.result.status)) + ", schedule kept in " +
             keep_failed_schedule(writer.path(), app.pipeline_id, index, schedule);
    spdlog::warn("{}: {}: {}", label, status_name(m.result.status),
                 m.result.error.substr(0, m.result.error.find('\n')));
  }
  return m;
}

std::vector<DatasetApp> dataset_apps(const DatasetBuildOptions &options) {
  std::vector<DatasetApp> apps;
  if (options.pipelines > 0) {
    const std::string library = resolve_library(options.random_library, ".");
    for (int i = 0; i < options.pipelines; ++i) {
      const std::string seed = std::to_string(options.first_seed + static_cast<uint32_t>(i));
      const std::string id = (options.scans ? "random_scans_" : "random_") + seed;
      AppSpec stored{id, options.random_library, "random_pipeline", {{"seed", seed}}};
      if (options.scans) stored.params["scans"] = "true";
      AppSpec resolved = stored;
      resolved.library = library;
      apps.push_back({id, stored, resolved});
    }
  }
  if (!options.apps_suite.empty()) {
    for (const SuiteApp &a : parse_suite_file(options.apps_suite).apps) {
      apps.push_back({a.spec.name, a.spec, a.spec});
    }
  }
  return apps;
}

DatasetBuildSummary build_dataset(const DatasetBuildOptions &options, MeasurementBackend &measurer,
                                  std::ostream &progress) {
  const std::vector<DatasetApp> apps = dataset_apps(options);
  const Halide::Target target = host_target();
  BuildContext ctx{options,
                   measurer,
                   progress,
                   target,
                   SearchSpace(SearchSpaceOptions::for_target(target)),
                   DatasetWriter(options.out),
                   dataset_keys(options.out),
                   {}};
  progress << "dataset " << options.out << ": " << ctx.stored.size() << " samples already, "
           << apps.size() << " pipelines x " << options.schedules_per_pipeline
           << " schedules to sample" << std::endl;
  for (const DatasetApp &app : apps) sample_app(ctx, app);
  return ctx.summary;
}

DatasetStats dataset_stats(const std::vector<DatasetSample> &samples) {
  DatasetStats stats;
  std::map<std::string, size_t> index;
  std::set<std::string> hosts, targets;
  for (const DatasetSample &s : samples) {
    auto [it, added] = index.emplace(s.pipeline_id, stats.pipelines.size());
    if (added) stats.pipelines.push_back({s.pipeline_id, 0, s.min_ms, s.min_ms});
    PipelineSampleStats &p = stats.pipelines[it->second];
    ++p.samples;
    p.fastest_ms = std::min(p.fastest_ms, s.min_ms);
    p.slowest_ms = std::max(p.slowest_ms, s.min_ms);
    stats.fastest_ms = stats.samples == 0 ? s.min_ms : std::min(stats.fastest_ms, s.min_ms);
    stats.slowest_ms = std::max(stats.slowest_ms, s.min_ms);
    ++stats.samples;
    hosts.insert(s.host_class);
    targets.insert(s.target);
  }
  stats.host_classes.assign(hosts.begin(), hosts.end());
  stats.targets.assign(targets.begin(), targets.end());
  return stats;
}

void print_dataset_stats(const DatasetStats &stats, std::ostream &out) {
  out << stats.samples << " samples of " << stats.pipelines.size() << " pipelines; runtimes "
      << fixed_or_dash(stats.samples, stats.fastest_ms) << " .. "
      << fixed_or_dash(stats.samples, stats.slowest_ms) << " ms (min of each sample)\n";
  for (const std::string &h : stats.host_classes) out << "host class: " << h << "\n";
  for (const std::string &t : stats.targets) out << "target: " << t << "\n";
  out << "\n";
  TextTable table({"pipeline", "samples", "fastest ms", "slowest ms", "slowest/fastest"});
  for (const PipelineSampleStats &p : stats.pipelines) {
    table.add_row({p.pipeline_id, std::to_string(p.samples), format_fixed(p.fastest_ms, 3),
                   format_fixed(p.slowest_ms, 3),
                   p.fastest_ms > 0 ? format_fixed(p.slowest_ms / p.fastest_ms, 2) : "-"});
  }
  table.print(out);
}

DatasetCommand::DatasetCommand(CLI::App &cli) {
  CLI::App *dataset = cli.add_subcommand("dataset", "training data for the learned cost models");
  dataset->require_subcommand(1);
  build_ = dataset->add_subcommand(
      "build", "measure random schedules of random pipelines (and a suite's apps) into a dataset");
  DatasetBuildOptions &o = options_;
  build_->add_option("--out", o.out, "dataset file (JSON Lines); an existing one is resumed")
      ->required();
  build_->add_option("--pipelines", o.pipelines, "random pipelines")->check(CLI::NonNegativeNumber);
  build_->add_option("--first-seed", o.first_seed, "seed of the first random pipeline");
  build_->add_flag("--scans", o.scans,
                   "random pipelines that also draw scan blocks (ids random_scans_<seed>)");
  build_
      ->add_option("--schedules-per-pipeline", o.schedules_per_pipeline,
                   "distinct random schedules per pipeline")
      ->check(CLI::PositiveNumber);
  build_->add_option("--apps", o.apps_suite, "suite file whose apps are sampled too");
  build_
      ->add_option_function<int>(
          "--samples", [&o](const int &n) { o.timing.samples = o.timing.max_samples = n; },
          "timed samples per measurement (default 10)")
      ->check(CLI::PositiveNumber);
  build_
      ->add_option("--min-sample-seconds", o.timing.min_sample_seconds,
                   "each sample repeats the run until it lasts this long (default 0.02)")
      ->check(CLI::NonNegativeNumber);
  build_->add_option("--schedule-seed", o.schedule_seed, "another value draws other schedules");
  build_->add_option("--random-library", o.random_library, "the random pipeline generator library");
  build_->add_option("--cache-dir", o.cache_dir,
                     "reference outputs and cached results (default ~/.cache/protuner)");
  build_->add_flag(
      "--no-cache", [&o](int64_t) { o.use_result_cache = false; },
      "measure even when a cached result exists");
  merge_ = dataset->add_subcommand(
      "merge", "append other files' samples to a dataset, each schedule of a pipeline once");
  merge_->add_option("--out", merge_out_, "dataset file to append to (created when missing)")
      ->required();
  merge_->add_option("inputs", merge_inputs_, "dataset files, e.g. a tune's measurements.jsonl")
      ->required();
  stats_ = dataset->add_subcommand("stats", "samples, pipelines and runtimes of a dataset");
  stats_->add_option("file", stats_file_, "dataset file")->required();

  remeasure_ = dataset->add_subcommand(
      "remeasure", "measure a dataset's schedules again on this host, in one run, into another");
  DatasetRemeasureOptions &r = remeasure_options_;
  remeasure_->add_option("--data", r.data, "dataset whose schedules are measured")->required();
  remeasure_->add_option("--out", r.out, "new dataset file; an existing one is resumed")
      ->required();
  remeasure_->add_option("--pipelines", r.pipelines, "only these pipeline ids (comma-separated)")
      ->delimiter(',');
  remeasure_
      ->add_option_function<int>(
          "--samples", [&r](const int &n) { r.timing.samples = r.timing.max_samples = n; },
          "exactly this many timed samples (default: 10 or more, up to 40, until the "
          "minimum is confirmed)")
      ->check(CLI::PositiveNumber);
  remeasure_->add_option("--cache-dir", r.cache_dir,
                         "reference outputs (default ~/.cache/protuner); results are never "
                         "taken from the cache");
  agreement_ = dataset->add_subcommand(
      "agreement",
      "how often two measurements of the same schedules order them the same, per pipeline");
  agreement_->add_option("files", agreement_files_, "two dataset files")->required()->expected(2);

  export_ = dataset->add_subcommand(
      "export", "append every ok measurement the farm kept in Redis to a dataset");
  export_redis_ = kDefaultRedisUrl;
  add_redis_option(export_, export_redis_);
  export_->add_option("--out", export_options_.out, "dataset file (created, or appended to)")
      ->required();
  export_->add_option("--suite", export_options_.suites,
                      "a suite id, repeatable (default: every suite submitted)");
  export_->add_option("--library-dir", export_options_.library_dir,
                      "where the apps' libraries are fetched to (default: <out>.libraries)");
}

bool DatasetCommand::parsed() const {
  return build_->parsed() || merge_->parsed() || stats_->parsed() || remeasure_->parsed() ||
         agreement_->parsed() || export_->parsed();
}

int DatasetCommand::run() {
  if (stats_->parsed()) {
    print_dataset_stats(dataset_stats(read_dataset(stats_file_)), std::cout);
    return 0;
  }
  if (merge_->parsed()) {
    const DatasetMergeSummary s = merge_datasets(merge_inputs_, merge_out_);
    std::cout << "dataset " << merge_out_ << ": appended " << s.appended << ", skipped "
              << s.duplicates << " (schedules it already held)\n";
    return 0;
  }
  if (export_->parsed()) {
    RedisClient redis(parse_redis_url(export_redis_));
    const DatasetExportSummary s = export_farm_dataset(redis, export_options_);
    std::cout << "dataset " << export_options_.out << ": appended " << s.exported << " from "
              << s.apps << " apps of " << s.suites << " suites, skipped " << s.already
              << " (schedules it already held) and " << s.not_samples
              << " candidates that did not measure ok\n";
    return 0;
  }
  if (agreement_->parsed()) {
    print_dataset_agreement(dataset_agreement(read_dataset(agreement_files_.at(0)),
                                              read_dataset(agreement_files_.at(1))),
                            std::cout);
    return 0;
  }
  IsolatedMeasurerOptions measurer_options;
  if (remeasure_->parsed()) {
    measurer_options.cache_dir = remeasure_options_.cache_dir;
    measurer_options.use_result_cache = false;
    IsolatedMeasurer measurer(measurer_options);
    const DatasetRemeasureSummary s = remeasure_dataset(remeasure_options_, measurer, std::cout);
    std::cout << "dataset " << remeasure_options_.out << ": stored " << s.stored << ", skipped "
              << s.skipped << " (already there), failed " << s.failed << "\n";
    return 0;
  }
  measurer_options.cache_dir = options_.cache_dir;
  measurer_options.use_result_cache = options_.use_result_cache;
  IsolatedMeasurer measurer(measurer_options);
  const DatasetBuildSummary s = build_dataset(options_, measurer, std::cout);
  std::cout << "dataset " << options_.out << ": stored " << s.stored << ", skipped " << s.skipped
            << " (already there), failed " << s.failed << "\n";
  return 0;
}

}  // namespace protuner
