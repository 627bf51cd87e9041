#include "coordinator/baseline_report.h"

#include <Halide.h>

#include "common/errors.h"
#include "coordinator/text_table.h"
#include "measurer/app_benchmark.h"

namespace protuner {
namespace {

std::map<std::string, std::string> params_for(const std::string &schedule) {
  if (schedule == "default") return {{"expert", "false"}};
  if (schedule == "expert") return {{"expert", "true"}};
  throw ConfigError("unknown baseline schedule '" + schedule + "' (use default or expert)");
}

}  // namespace

std::vector<BaselineRow> measure_baselines(
    const Suite &suite, const std::vector<std::string> &schedules, const TimingSettings &timing,
    const std::function<void(const std::string &app, const BaselineMeasurement &)> &progress) {
  for (const auto &s : schedules) params_for(s);  // refuse a bad list before any work
  std::vector<BaselineRow> rows;
  for (const SuiteApp &app : suite.apps) {
    BaselineRow row{app.spec.name, {}};
    for (const std::string &schedule : schedules) {
      BaselineMeasurement m;
      m.schedule = schedule;
      try {
        AppBenchmarkResult r = benchmark_app(app.spec, params_for(schedule), timing);
        m.min_ms = r.timing.min_ms;
        m.compile_seconds = r.compile_seconds;
        m.relative_spread = r.timing.relative_spread;
      } catch (const Halide::Error &e) {
        m.error = e.what();
      } catch (const Error &e) {
        m.error = e.what();
      }
      if (progress) progress(app.spec.name, m);
      row.measurements.push_back(std::move(m));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void print_baseline_table(const std::vector<BaselineRow> &rows,
                          const std::vector<std::string> &schedules, std::ostream &out) {
  std::vector<std::string> header{"app"};
  for (const auto &s : schedules) header.push_back(s + " ms");
  const bool both = schedules.size() == 2 && schedules[0] == "default" && schedules[1] == "expert";
  if (both) header.push_back("expert speedup");
  TextTable table(header);
  for (const BaselineRow &row : rows) {
    std::vector<std::string> cells{row.app};
    for (const auto &m : row.measurements) {
      cells.push_back(m.min_ms ? format_fixed(*m.min_ms, 3) : "failed");
    }
    if (both) {
      const auto &d = row.measurements[0].min_ms, &e = row.measurements[1].min_ms;
      cells.push_back(d && e && *e > 0 ? format_fixed(*d / *e, 2) + "x" : "-");
    }
    table.add_row(cells);
  }
  table.print(out);
}

}  // namespace protuner
