// The baseline report of a suite: for every app, the runtime of Halide's default schedule
// and of the app's expert schedule, measured on this machine. It is the yardstick every
// tuned schedule is compared with, and what `protuner local` shows before any search.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/suite.h"
#include "measurer/timing.h"

namespace protuner {

// One schedule of one app: its runtime, or why it has none.
struct BaselineMeasurement {
  std::string schedule;  // "default" or "expert"
  std::optional<double> min_ms;
  double compile_seconds = 0;
  double relative_spread = 0;
  std::string error;  // set when min_ms is empty
};

struct BaselineRow {
  std::string app;
  std::vector<BaselineMeasurement> measurements;  // in the order of the schedules asked for
};

// Measures `schedules` (each "default" or "expert") of every app of the suite, in order,
// calling `progress` after each measurement. A failing app is recorded, not fatal.
std::vector<BaselineRow> measure_baselines(
    const Suite &suite, const std::vector<std::string> &schedules, const TimingSettings &timing,
    const std::function<void(const std::string &app, const BaselineMeasurement &)> &progress);

// Prints the rows as a table with the expert schedule's speedup over the default.
void print_baseline_table(const std::vector<BaselineRow> &rows,
                          const std::vector<std::string> &schedules, std::ostream &out);

}  // namespace protuner
