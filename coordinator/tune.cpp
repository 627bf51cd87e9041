// `protuner tune`: the tuning job per app, its outputs and the summary (tune.h).
#include "coordinator/tune.h"

#include <unistd.h>

#include <Halide.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/errors.h"
#include "common/host_target.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "common/suite.h"
#include "common/unscheduled_check.h"
#include "coordinator/measurement_recorder.h"
#include "coordinator/text_table.h"
#include "measurer/isolated_measurer.h"
#include "measurer/measure_json.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/cost/learned/learned_network.h"
#include "searcher/search/measured_candidates.h"
#include "searcher/search/search_registry.h"

namespace protuner {
namespace {

std::string algorithm_of(const TuneArgs &args) {
  return args.algorithm.empty() ? kDefaultSearch : args.algorithm;
}

// Everything one tuning run shares across apps.
struct TuneRun {
  const TuneArgs &args;
  const TuneSettings &settings;
  std::string algorithm;
  IsolatedMeasurer &measurer;      // baselines
  MeasurementBackend &candidates;  // search candidates: the measurer, recorded
  MeasureSettings measure;         // settings.measure with the requested samples
};

// What became of one app, for its files and the summary.
struct AppReport {
  AppSpec spec;
  double budget_minutes = 0;
  std::optional<MeasureResult> default_result, own_result;
  std::optional<SearchOutcome> outcome;
  int64_t measurements = 0;
  CandidateTally candidates;  // how the schedules measured for it fared
  double seconds = 0;         // the app's clock: search and final measurement
  std::string error;          // why the app failed; empty when it has a measured schedule
};

std::optional<MeasureResult> measure_baseline(TuneRun &run, const AppSpec &app, ScheduleKind kind) {
  MeasureRequest request;
  request.app = app;
  request.schedule.kind = kind;
  request.target = "host";
  request.settings = run.measure;
  MeasureResult result = run.measurer.measure(request);
  if (!result.ok()) {
    spdlog::warn("{}: the {} schedule failed to measure: {}: {}", app.name,
                 kind == ScheduleKind::kOwn ? "own" : "default", status_name(result.status),
                 result.error.substr(0, result.error.find('\n')));
  }
  return result;
}

std::string progress_text(const LoopProgress &p, double budget_seconds) {
  std::string text =
      format_fixed(p.elapsed_seconds, 0) + " s of " + format_fixed(budget_seconds, 0) + " s, best ";
  text += p.best_ms ? format_fixed(*p.best_ms, 3) + " ms" : "-";
  return text + ", " + std::to_string(p.measurements) + " measurements, " + std::to_string(p.runs) +
         " runs";
}

// A baseline's runtime in ms; 0 when it was not measured or failed.
double runtime_ms(const std::optional<MeasureResult> &r) {
  return r && r->ok() ? r->timing.min_ms : 0;
}

nlohmann::json baseline_json(const std::optional<MeasureResult> &r) {
  if (!r) return nullptr;
  nlohmann::json j = {{"status", status_name(r->status)}};
  if (r->ok()) {
    j["runtime_ms"] = r->timing.min_ms;
    j["relative_spread"] = r->timing.relative_spread;
  } else {
    j["error"] = r->error.substr(0, r->error.find('\n'));
  }
  return j;
}

// The analytic model's term weights at the end and the measurements they were fitted to;
// null when the model was not calibrated (or nothing measured).
nlohmann::json calibration_json(const SearchOutcome &o) {
  if (o.calibration_samples == 0) return nullptr;
  nlohmann::json weights = nlohmann::json::object();
  for (int k = 0; k < kNumAnalyticTerms; ++k) {
    weights[analytic_term_name(static_cast<AnalyticTerm>(k))] = o.calibration_weights[k];
  }
  return {{"samples", o.calibration_samples}, {"term_weights", weights}};
}

// How the app's schedules fared: counts and the first errors.
nlohmann::json candidates_json(const CandidateTally &t) {
  return {{"ok", t.ok}, {"failed", t.failed}, {"first_errors", t.first_errors}};
}

nlohmann::json result_json(const AppReport &rep, const TuneRun &run) {
  const SearchOutcome &o = *rep.outcome;
  const MeasureResult &best = *o.best_result;
  nlohmann::json j = {
      {"app", rep.spec.name},
      {"status", "ok"},
      {"generator", rep.spec.generator},
      {"library", rep.spec.library},
      {"params", rep.spec.params},
      {"algorithm", run.algorithm},
      {"cost_model", run.args.cost_model},
      {"budget_minutes", rep.budget_minutes},
      {"seeds", o.seeds},
      {"measurements", rep.measurements},
      {"candidates", candidates_json(rep.candidates)},
      {"tuning_seconds", rep.seconds},
      {"runtime_ms", best.timing.min_ms},
      {"median_ms", best.timing.median_ms},
      {"relative_spread", best.timing.relative_spread},
      {"compile_seconds", best.compile_seconds},
      {"predicted_ms", o.best_cost_seconds * 1000},
      {"calibration", calibration_json(o)},
      {"cpus", best.cpus},
      {"allocator", allocator_policy_name(best.allocator)},
      {"host", host_facts_to_json(best.host)},
      {"default", baseline_json(rep.default_result)},
      {"own", baseline_json(rep.own_result)},
  };
  for (const auto &[key, baseline] : {std::pair{"speedup_over_default", &rep.default_result},
                                      std::pair{"speedup_over_own", &rep.own_result}}) {
    const double ms = runtime_ms(*baseline);
    j[key] = ms > 0 ? nlohmann::json(ms / best.timing.min_ms) : nlohmann::json(nullptr);
  }
  return j;
}

std::string trace_csv(const std::vector<TunePoint> &trace) {
  std::string csv = "seconds,best_measured_ms,best_cost_ms\n";
  for (const TunePoint &p : trace) {
    csv += format_fixed(p.seconds, 3) + "," +
           (p.best_measured_ms ? format_fixed(*p.best_measured_ms, 6) : "") + "," +
           (p.best_cost_ms ? format_fixed(*p.best_cost_ms, 6) : "") + "\n";
  }
  return csv;
}

void write_text(const std::filesystem::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw IoError("cannot write '" + path.string() + "'");
}

// <out>/<app>/, created.
std::filesystem::path app_dir(const AppReport &rep, const TuneRun &run) {
  const std::filesystem::path dir =
      std::filesystem::path(run.args.out_dir) / folder_for(rep.spec.name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("cannot create '" + dir.string() + "': " + ec.message());
  return dir;
}

// A failed app's result.json: why it failed and the baselines measured before, so the
// failure is on record beside the apps that succeeded; no schedule files.
void write_failure_file(const AppReport &rep, const TuneRun &run) {
  const nlohmann::json j = {{"app", rep.spec.name},
                            {"status", "failed"},
                            {"error", rep.error},
                            {"generator", rep.spec.generator},
                            {"library", rep.spec.library},
                            {"params", rep.spec.params},
                            {"algorithm", run.algorithm},
                            {"measurements", rep.measurements},
                            {"candidates", candidates_json(rep.candidates)},
                            {"tuning_seconds", rep.seconds},
                            {"default", baseline_json(rep.default_result)},
                            {"own", baseline_json(rep.own_result)}};
  std::filesystem::path dir = app_dir(rep, run);
  // Schedule files of an earlier run in the same folder would read as this run's result.
  for (const char *stale : {"schedule.h", "schedule.json", "trace.csv"}) {
    std::error_code ec;
    std::filesystem::remove(dir / stale, ec);
  }
  write_text(dir / "result.json", j.dump(2) + "\n");
}

// write_failure_file, logging (not throwing) when it cannot be written: the app has
// failed already, and the summary says why.
void record_failure(const AppReport &rep, const TuneRun &run) {
  try {
    write_failure_file(rep, run);
  } catch (const IoError &e) {
    spdlog::error("{}: {}", rep.spec.name, e.what());
  }
}

// <out>/<app>/: schedule.h, schedule.json, result.json, trace.csv.
void write_app_files(const AppReport &rep, const TuneRun &run) {
  const std::filesystem::path dir = app_dir(rep, run);
  const ScheduleState &best = *rep.outcome->best;
  write_text(dir / "schedule.h", schedule_source(best, identifier_for(rep.spec.name)));
  write_text(dir / "schedule.json", schedule_to_json(best) + "\n");
  write_text(dir / "result.json", result_json(rep, run).dump(2) + "\n");
  write_text(dir / "trace.csv", trace_csv(rep.outcome->trace));
}

// Loads the app, measures its baselines, searches within its budget and writes its files.
AppReport tune_app(const SuiteApp &app, TuneRun &run) {
  AppReport rep;
  rep.spec = app.spec;
  rep.budget_minutes = app.budget_minutes;
  ProgressLine line(app.spec.name, run.settings.plain_progress_interval_seconds);
  std::optional<PreparedApp> prepared;
  try {
    prepared = prepare_app(app.spec, static_cast<int>(run.measurer.cpus().size()));
  } catch (const std::exception &e) {  // AppLoadError, ConfigError, a Halide::Error analyzing
    rep.error = std::string("cannot load the app: ") + e.what();
    line.finish("failed: " + rep.error);
    record_failure(rep, run);
    return rep;
  }
  line.update("measuring the default schedule and the generator's own");
  rep.default_result = measure_baseline(run, app.spec, ScheduleKind::kDefault);
  rep.own_result = measure_baseline(run, app.spec, ScheduleKind::kOwn);

  const double budget_seconds = app.budget_minutes * 60;
  BackendCandidateMeasurer measurer(
      run.candidates, app.spec, "host",
      candidate_measure_settings(run.measure, budget_seconds, run.settings));
  measurer.stop_line_reference(runtime_ms(rep.own_result));
  measurer.stop_line_reference(runtime_ms(rep.default_result));
  const Clock::time_point start = Clock::now();
  rep.outcome =
      search_until(*prepared, run.algorithm, run.args.seed, start,
                   search_deadline(start, budget_seconds, run.settings), measurer, run.settings,
                   [&](const LoopProgress &p) { line.update(progress_text(p, budget_seconds)); });
  rep.seconds = seconds_between(start, Clock::now());
  rep.measurements = measurer.measurements();
  rep.candidates = measurer.tally();
  // An app most of whose schedules failed is not tuned, whatever the fastest of the rest.
  std::optional<std::string> failure = measurement_failure(rep.candidates);
  if (!failure && !rep.outcome->best) failure = "no schedule measured successfully";
  if (failure) {
    rep.error = *failure;
    for (const auto &e : rep.outcome->errors) rep.error += "; " + e;
    line.finish("failed: " + rep.error);
    record_failure(rep, run);
    return rep;
  }
  try {
    write_app_files(rep, run);
  } catch (const IoError &e) {
    rep.error = e.what();
    line.finish("failed: " + rep.error);
    return rep;
  }
  line.finish("best " + format_fixed(rep.outcome->best_result->timing.min_ms, 3) + " ms after " +
              format_fixed(rep.seconds, 0) + " s, " + std::to_string(rep.measurements) +
              " measurements, " + std::to_string(rep.outcome->seeds.size()) + " runs");
  return rep;
}

std::string speedup(const std::optional<MeasureResult> &baseline, const AppReport &rep) {
  const double base = runtime_ms(baseline);
  if (base <= 0 || !rep.error.empty()) return "-";
  return format_fixed(base / rep.outcome->best_result->timing.min_ms, 2) + "x";
}

void print_summary(const std::vector<AppReport> &reports, std::ostream &out) {
  TextTable table({"app", "best ms", "own ms", "default ms", "vs own", "vs default"});
  for (const AppReport &r : reports) {
    table.add_row(
        {r.spec.name,
         r.error.empty() ? format_fixed(r.outcome->best_result->timing.min_ms, 3) : "failed",
         runtime_or_status(r.own_result), runtime_or_status(r.default_result),
         speedup(r.own_result, r), speedup(r.default_result, r)});
  }
  table.print(out);
  for (const AppReport &r : reports) {
    if (!r.error.empty()) out << r.spec.name << ": " << r.error << "\n";
  }
}

}  // namespace

// --- Shared pieces ---

std::vector<SuiteApp> apps_to_tune(const TuneArgs &a) {
  std::vector<SuiteApp> apps;
  if (!a.suite_file.empty()) {
    apps = parse_suite_file(a.suite_file).apps;
  } else if (!a.app.empty()) {
    if (a.suite.empty()) throw ConfigError("--app needs --suite (the suite file that lists it)");
    const Suite suite = parse_suite_file(a.suite);
    std::string names;
    for (const auto &app : suite.apps) {
      if (app.spec.name == a.app) apps.push_back(app);
      names += (names.empty() ? "" : ", ") + app.spec.name;
    }
    if (apps.empty())
      throw ConfigError(a.suite + ": no app '" + a.app + "' (it has: " + names + ")");
  } else if (!a.library.empty() && !a.generator.empty()) {
    SuiteApp app;
    app.spec = {a.generator, resolve_library(a.library, "."), a.generator, {}};
    for (const auto &kv : a.params) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw ConfigError("--param '" + kv + "' is not of the form name=value");
      }
      app.spec.params[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    apps.push_back(app);
  } else {
    throw ConfigError(
        "name what to tune: a suite file, --app NAME --suite FILE, or "
        "--library L --generator G");
  }
  if (a.budget_minutes) {
    for (auto &app : apps) app.budget_minutes = *a.budget_minutes;
  }
  return apps;
}

std::string identifier_for(const std::string &name) {
  std::string id;
  for (unsigned char c : name) id += std::isalnum(c) ? static_cast<char>(c) : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "app_" + id;
  return id;
}

std::string folder_for(const std::string &name) {
  std::string folder = name;
  std::replace(folder.begin(), folder.end(), '/', '_');
  return folder.empty() || folder == "." || folder == ".." ? "app_" + folder : folder;
}

std::string runtime_or_status(const std::optional<MeasureResult> &result) {
  if (!result) return "-";
  return result->ok() ? format_fixed(result->timing.min_ms, 3) : status_name(result->status);
}

// --- Progress ---

ProgressLine::ProgressLine(std::string label, double plain_interval_seconds)
    : label_(std::move(label)),
      interval_(plain_interval_seconds),
      tty_(isatty(STDOUT_FILENO) == 1) {}

void ProgressLine::update(const std::string &text) {
  // Searches report after every batch, thousands of times a second on small pipelines: a
  // terminal line is rewritten at most 4 times a second.
  constexpr double kTtyIntervalSeconds = 0.25;
  const double now = seconds_between(start_, Clock::now());
  if (now - last_print_ < (tty_ ? kTtyIntervalSeconds : interval_)) return;
  last_print_ = now;
  const std::string line = label_ + ": " + text;
  if (tty_) {
    // Pad over the previous line's tail: the new text may be shorter.
    std::cout << '\r' << line
              << std::string(last_width_ > line.size() ? last_width_ - line.size() : 0, ' ')
              << std::flush;
    last_width_ = line.size();
    return;
  }
  std::cout << line << std::endl;
}

void ProgressLine::finish(const std::string &text) {
  const std::string line = label_ + ": " + text;
  if (tty_) {
    std::cout << '\r' << line
              << std::string(last_width_ > line.size() ? last_width_ - line.size() : 0, ' ');
  }
  std::cout << (tty_ ? "" : line) << std::endl;
}

// --- The command ---

void add_tune_options(CLI::App *cmd, TuneArgs &a, TuneCommand which) {
  if (which == TuneCommand::kLocal) {
    cmd->add_option("file", a.suite_file, "suite YAML file")->required();
  } else {
    cmd->add_option("file", a.suite_file, "suite YAML file: tune every app in it");
    cmd->add_option("--app", a.app, "one app of --suite");
    cmd->add_option("--suite", a.suite, "suite YAML file that lists --app");
    cmd->add_option("--library", a.library, "generator library (instead of a suite)");
    cmd->add_option("--generator", a.generator, "generator name in --library");
    cmd->add_option("--param", a.params, "generator param name=value (repeatable)");
  }
  if (which != TuneCommand::kCompare) {
    std::string names;
    for (const auto &n : search_names()) names += (names.empty() ? "" : ", ") + n;
    cmd->add_option("--algorithm", a.algorithm,
                    std::string("search algorithm (default ") + kDefaultSearch + "): " + names);
  }
  cmd->add_option("--budget-minutes", a.budget_minutes,
                  "minutes per app: search and measurement (default: the suite's, else 15)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--out", a.out_dir, "output folder, one subfolder per app")
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "seed of the first search run")->capture_default_str();
  cmd->add_option("--samples", a.samples,
                  "timed samples per measurement, at least (more, up to 40, until the minimum "
                  "is confirmed)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--cpus", a.cpus, "CPUs to measure on, e.g. 0,1")->delimiter(',');
  cmd->add_option("--cache-dir", a.cache_dir,
                  "reference outputs and cached results (default ~/.cache/protuner)");
  cmd->add_option("--cost-model", a.cost_model,
                  "the searches' cost model: analytic, feedforward or gcn (the learned "
                  "models' weights shipped for this machine class), or a weights file "
                  "(protuner train --out)")
      ->capture_default_str();
  cmd->add_flag("--no-calibration", a.no_calibration,
                "keep the analytic model's terms as they are, instead of fitting their weights "
                "to each app's measurements as they come in");
  cmd->add_option("--stop-above-best", a.stop_above_best,
                  "stop sampling a candidate once its first samples are all slower than this "
                  "many times the fastest measured so far (default 1.2; 0: never)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--allocator", a.allocator,
                  "malloc candidates are timed under: platform (glibc's as it comes, as the "
                  "user's program runs them) or pooling (freed memory kept for reuse); "
                  "recorded in every result")
      ->check(CLI::IsMember({"platform", "pooling"}))
      ->capture_default_str();
  cmd->add_option("--dataset", a.dataset,
                  "append every measured candidate to this dataset file, training data for "
                  "`protuner train` (default: <out>/measurements.jsonl)");
}

std::string dataset_path(const TuneArgs &args) {
  const std::filesystem::path path =
      args.dataset.empty() ? std::filesystem::path(args.out_dir) / "measurements.jsonl"
                           : std::filesystem::path(args.dataset);
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw IoError("cannot create the folder of dataset '" + path.string() + "': " + ec.message());
  }
  return path.string();
}

TuneSettings with_args(const TuneSettings &settings, const TuneArgs &args) {
  TuneSettings out = settings;
  out.cost_model = CostModelChoice(args.cost_model);
  out.calibrate = out.calibrate && !args.no_calibration;
  if (args.stop_above_best) out.candidate_stop_above_best = *args.stop_above_best;
  out.measure.allocator = parse_allocator_policy(args.allocator);
  if (out.cost_model.learned()) predict_on_the_calling_thread_only();
  return out;
}

int run_tune(const TuneArgs &args, const TuneSettings &tune_settings) {
  const std::string algorithm = algorithm_of(args);
  make_search(algorithm);  // an unknown name is refused before any work, naming the valid ones
  const TuneSettings settings = with_args(tune_settings, args);
  const std::vector<SuiteApp> apps = apps_to_tune(args);
  IsolatedMeasurerOptions options;
  options.cpus = args.cpus;
  options.cache_dir = args.cache_dir;
  IsolatedMeasurer measurer(options);
  RecordingBackend recorder(measurer, dataset_path(args));
  TuneRun run{args, settings, algorithm, measurer, recorder, settings.measure};
  run.measure.timing.set_samples(args.samples);
  const HostFacts &host = measurer.host();
  std::cout << "protuner tune: " << apps.size() << " app(s), algorithm " << algorithm
            << ", cost model " << args.cost_model << ", on " << host.cpu_model << " ("
            << measurer.cpus().size() << " cpus, SMT " << host.smt << "), results in "
            << args.out_dir << "/, measurements recorded in " << recorder.path() << std::endl;
  std::vector<AppReport> reports;
  for (const SuiteApp &app : apps) reports.push_back(tune_app(app, run));
  std::cout << "\n";
  print_summary(reports, std::cout);
  const bool all_ok = std::all_of(reports.begin(), reports.end(),
                                  [](const AppReport &r) { return r.error.empty(); });
  return all_ok ? 0 : 1;
}

}  // namespace protuner
