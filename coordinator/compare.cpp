// `protuner compare`: every method on every app under one budget, one measurer (compare.h).
#include "coordinator/compare.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/errors.h"
#include "common/schedule/schedule_json.h"
#include "coordinator/measurement_recorder.h"
#include "coordinator/text_table.h"
#include "measurer/isolated_measurer.h"
#include "searcher/search/measured_candidates.h"
#include "searcher/search/search_registry.h"

namespace protuner {
namespace {

// The baseline every speedup is over, and the fixed columns before the algorithms.
constexpr const char *kReference = "Adams2019";
const std::vector<std::string> kFixedColumns{"Adams2019", "Mullapudi2016", "own", "default"};

// One method on one app: its measured result (ok or a failure status), or why there is
// none (the app did not load, the search threw).
struct Cell {
  std::optional<MeasureResult> result;
  std::string error;
  int64_t measurements = 0;
  double seconds = 0;
  std::string schedule_json;  // searches: the best schedule
};

struct Row {
  std::string app;
  std::vector<Cell> cells;  // in column order
};

std::optional<double> runtime(const Cell &c) {
  if (c.result && c.result->ok()) return c.result->timing.min_ms;
  return std::nullopt;
}

// "1.234", "timeout", "oom", "compile_error", ... or "error" without a result.
std::string cell_text(const Cell &c) {
  if (!c.result) return "error";
  if (c.result->ok()) return format_fixed(c.result->timing.min_ms, 3);
  if (c.result->status == MeasureStatus::kOutOfMemory) return "oom";
  return status_name(c.result->status);
}

struct CompareRun {
  const CompareArgs &args;
  const TuneSettings &settings;
  IsolatedMeasurer &measurer;
  MeasurementBackend &candidates;  // search candidates: the measurer, recorded
  MeasureSettings measure;
};

Cell measure_schedule(CompareRun &run, const AppSpec &app, const ScheduleSpec &schedule,
                      const MeasureSettings &settings) {
  MeasureRequest request{app, schedule, "host", settings, ""};
  const auto start = Clock::now();
  Cell c;
  c.result = run.measurer.measure(request);
  c.measurements = 1;
  c.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return c;
}

// `reference_ms`: runtimes measured for the app already, which set the stop line before
// the first candidate, as in tune (BackendCandidateMeasurer::stop_line_reference).
Cell search_cell(CompareRun &run, const PreparedApp &app, const std::string &algorithm,
                 double budget_seconds, const std::vector<double> &reference_ms) {
  ProgressLine line(app.spec.name + " / " + algorithm,
                    run.settings.plain_progress_interval_seconds);
  BackendCandidateMeasurer measurer(
      run.candidates, app.spec, "host",
      candidate_measure_settings(run.measure, budget_seconds, run.settings));
  for (const double ms : reference_ms) measurer.stop_line_reference(ms);
  const auto start = Clock::now();
  const SearchOutcome o =
      search_until(app, algorithm, run.args.apps.seed, start,
                   search_deadline(start, budget_seconds, run.settings), measurer, run.settings,
                   [&](const LoopProgress &p) {
                     line.update(format_fixed(p.elapsed_seconds, 0) + " s, best " +
                                 (p.best_ms ? format_fixed(*p.best_ms, 3) + " ms" : "-"));
                   });
  Cell c;
  c.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  c.measurements = measurer.measurements();
  if (o.best) {
    c.result = o.best_result;
    c.schedule_json = schedule_to_json(*o.best);
  } else {
    c.error = o.errors.empty() ? "no schedule measured successfully" : o.errors.front();
  }
  line.finish(c.result ? cell_text(c) + (c.result->ok() ? " ms" : "") : "failed: " + c.error);
  return c;
}

Row compare_app(CompareRun &run, const SuiteApp &app) {
  Row row{app.spec.name, {}};
  const double budget_seconds = app.budget_minutes * 60;
  std::optional<PreparedApp> prepared;
  try {
    prepared = prepare_app(app.spec, static_cast<int>(run.measurer.cpus().size()));
  } catch (const std::exception &e) {  // AppLoadError, ConfigError, a Halide::Error
    std::cout << app.spec.name << ": cannot load the app: " << e.what() << std::endl;
    for (size_t i = 0; i < kFixedColumns.size() + run.args.algorithms.size(); ++i) {
      Cell failed;
      failed.error = e.what();
      row.cells.push_back(failed);
    }
    return row;
  }
  // An autoscheduler gets the budget to schedule and compile (one compile phase).
  MeasureSettings autoscheduled = run.measure;
  autoscheduled.compile_timeout_seconds = budget_seconds;
  for (const char *name : {"Adams2019", "Mullapudi2016"}) {
    std::cout << app.spec.name << " / " << name << "..." << std::flush;
    row.cells.push_back(measure_schedule(
        run, app.spec, {ScheduleKind::kAutoscheduler, "", name, ""}, autoscheduled));
    std::cout << " " << cell_text(row.cells.back()) << std::endl;
  }
  row.cells.push_back(measure_schedule(run, app.spec, {ScheduleKind::kOwn}, run.measure));
  row.cells.push_back(measure_schedule(run, app.spec, {ScheduleKind::kDefault}, run.measure));
  std::cout << app.spec.name << " / own " << cell_text(row.cells[2]) << ", default "
            << cell_text(row.cells[3]) << std::endl;
  std::vector<double> reference_ms;  // the own schedule's and the default's
  for (const size_t column : {2, 3}) {
    if (const auto ms = runtime(row.cells[column])) reference_ms.push_back(*ms);
  }
  for (const std::string &algorithm : run.args.algorithms) {
    row.cells.push_back(search_cell(run, *prepared, algorithm, budget_seconds, reference_ms));
  }
  return row;
}

std::optional<double> speedup(const Row &row, size_t column) {
  const auto ref = runtime(row.cells[0]), ms = runtime(row.cells[column]);
  if (!ref || !ms || *ms <= 0) return std::nullopt;
  return *ref / *ms;
}

// Geometric mean of a column's speedups over the apps where both it and Adams2019 ran.
std::optional<double> geomean(const std::vector<Row> &rows, size_t column, int &count) {
  double log_sum = 0;
  count = 0;
  for (const Row &row : rows) {
    if (auto s = speedup(row, column)) log_sum += std::log(*s), ++count;
  }
  if (count == 0) return std::nullopt;
  return std::exp(log_sum / count);
}

void print_tables(const std::vector<Row> &rows, const std::vector<std::string> &columns,
                  std::ostream &out) {
  std::vector<std::string> header{"app"};
  for (const auto &c : columns) header.push_back(c + " ms");
  TextTable runtimes(header);
  for (const Row &row : rows) {
    std::vector<std::string> cells{row.app};
    for (const Cell &c : row.cells) cells.push_back(cell_text(c));
    runtimes.add_row(cells);
  }
  runtimes.print(out);

  out << "\nspeedup over " << kReference
      << " (higher is better; the geomean is over the apps where both ran, "
         "counted in parentheses):\n";
  header = {"app"};
  for (const auto &c : columns) header.push_back(c);
  TextTable speedups(header);
  for (const Row &row : rows) {
    std::vector<std::string> cells{row.app};
    for (size_t i = 0; i < columns.size(); ++i) {
      const auto s = speedup(row, i);
      cells.push_back(s ? format_fixed(*s, 2) + "x" : "-");
    }
    speedups.add_row(cells);
  }
  std::vector<std::string> mean{"geomean"};
  for (size_t i = 0; i < columns.size(); ++i) {
    int n = 0;
    const auto g = geomean(rows, i, n);
    mean.push_back(g ? format_fixed(*g, 2) + "x (" + std::to_string(n) + ")" : "-");
  }
  speedups.add_row(mean);
  speedups.print(out);
}

nlohmann::json cell_json(const Row &row, size_t column) {
  const Cell &c = row.cells[column];
  nlohmann::json j = {{"status", c.result ? status_name(c.result->status) : "error"},
                      {"measurements", c.measurements},
                      {"seconds", c.seconds}};
  if (c.result) {
    j["compile_seconds"] = c.result->compile_seconds;
    if (c.result->ok()) j["runtime_ms"] = c.result->timing.min_ms;
    if (!c.result->ok()) j["error"] = c.result->error.substr(0, c.result->error.find('\n'));
  } else {
    j["error"] = c.error;
  }
  if (auto s = speedup(row, column)) j["speedup_over_adams2019"] = *s;
  return j;
}

void write_file(const std::filesystem::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw IoError("cannot write '" + path.string() + "'");
}

// compare.json (everything), compare.csv (one line per app and method), and each
// search's best schedule as <app>/<algorithm>.schedule.json.
void write_outputs(const std::vector<Row> &rows, const std::vector<std::string> &columns,
                   const CompareArgs &args) {
  const std::filesystem::path dir(args.apps.out_dir);
  std::filesystem::create_directories(dir);
  nlohmann::json j = {{"reference", kReference},
                      {"columns", columns},
                      {"cost_model", args.apps.cost_model},
                      {"apps", nlohmann::json::array()}};
  std::string csv = "app,method,status,runtime_ms,speedup_over_adams2019\n";
  for (const Row &row : rows) {
    nlohmann::json app = {{"app", row.app}, {"results", nlohmann::json::object()}};
    for (size_t i = 0; i < columns.size(); ++i) {
      const nlohmann::json c = cell_json(row, i);
      app["results"][columns[i]] = c;
      csv += row.app + "," + columns[i] + "," + c["status"].get<std::string>() + "," +
             (c.contains("runtime_ms") ? format_fixed(c["runtime_ms"].get<double>(), 6) : "") +
             "," +
             (c.contains("speedup_over_adams2019")
                  ? format_fixed(c["speedup_over_adams2019"].get<double>(), 4)
                  : "") +
             "\n";
      if (!row.cells[i].schedule_json.empty()) {
        std::filesystem::create_directories(dir / folder_for(row.app));
        write_file(dir / folder_for(row.app) / (identifier_for(columns[i]) + ".schedule.json"),
                   row.cells[i].schedule_json + "\n");
      }
    }
    j["apps"].push_back(app);
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    int n = 0;
    const auto g = geomean(rows, i, n);
    j["geomean_speedup_over_adams2019"][columns[i]] = g ? nlohmann::json(*g) : nlohmann::json();
  }
  write_file(dir / "compare.json", j.dump(2) + "\n");
  write_file(dir / "compare.csv", csv);
}

}  // namespace

void add_compare_options(CLI::App *command, CompareArgs &args) {
  add_tune_options(command, args.apps, TuneCommand::kCompare);
  command->add_option("--algorithms", args.algorithms, "search algorithms to compare")
      ->delimiter(',')
      ->capture_default_str();
}

int run_compare(const CompareArgs &args, const TuneSettings &compare_settings) {
  for (const auto &algorithm : args.algorithms) make_search(algorithm);  // names checked first
  const TuneSettings settings = with_args(compare_settings, args.apps);
  const std::vector<SuiteApp> apps = apps_to_tune(args.apps);
  IsolatedMeasurerOptions options;
  options.cpus = args.apps.cpus;
  options.cache_dir = args.apps.cache_dir;
  options.use_result_cache = false;  // no method profits from another's measurements
  IsolatedMeasurer measurer(options);
  RecordingBackend recorder(measurer, dataset_path(args.apps));
  CompareRun run{args, settings, measurer, recorder, settings.measure};
  run.measure.timing.set_samples(args.apps.samples);
  std::vector<std::string> columns = kFixedColumns;
  columns.insert(columns.end(), args.algorithms.begin(), args.algorithms.end());
  std::cout << "protuner compare: " << apps.size() << " app(s), " << columns.size()
            << " methods each, on " << measurer.host().cpu_model << " (" << measurer.cpus().size()
            << " cpus)" << std::endl;
  std::vector<Row> rows;
  for (const SuiteApp &app : apps) {
    rows.push_back(compare_app(run, app));
    // After every app, so an interrupted multi-hour run keeps what it measured.
    write_outputs(rows, columns, args);
  }
  std::cout << "\n";
  print_tables(rows, columns, std::cout);
  std::cout << "\nwritten: " << args.apps.out_dir << "/compare.json, compare.csv; "
            << recorder.recorded() << " measured candidates recorded in " << recorder.path()
            << std::endl;
  return 0;
}

}  // namespace protuner
