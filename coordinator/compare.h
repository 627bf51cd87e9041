// `protuner compare`: the comparison bench. For every app, under one budget per app and
// per method, it produces and measures, with one IsolatedMeasurer in one run:
//   Adams2019 and Mullapudi2016 (Halide's autoschedulers, ScheduleKind::kAutoscheduler,
//   allowed the budget to schedule and compile: a timeout or out-of-memory is their
//   result), the generator's own schedule, Halide's default schedule, and each search algorithm
//   named (default mcts_cost+real_1s, beam, greedy; search_until, tune.h).
// It prints runtimes (ms, or the failure: "timeout", "oom", ...) and speedups over
// Adams2019 with the geometric mean per column, and writes compare.json and compare.csv
// (rewritten after every app, so an interrupted run keeps what it measured).
//
// Why a subcommand and not a script over `protuner tune` / `protuner measure`: one
// process keeps one measurer (same CPUs, same reference outputs, one at a time) for every
// method, reuses tune's tuning job unchanged, and needs no JSON glue in shell. The result
// cache is off, so no method profits from another's measurements within its budget.
// Not a CI test: with the defaults it runs for hours (5 methods x 15 minutes per app).
#pragma once

#include <string>
#include <vector>

#include "coordinator/tune.h"

namespace CLI {
class App;
}

namespace protuner {

struct CompareArgs {
  TuneArgs apps;  // which apps, budget, seed, samples, CPUs, out folder
  std::vector<std::string> algorithms{"mcts_cost+real_1s", "beam", "greedy"};
  CompareArgs() { apps.out_dir = "compare-out"; }
};

void add_compare_options(CLI::App *command, CompareArgs &args);

// Exit code 0 when the table was produced (failed methods are results, shown as their
// status); throws ConfigError (exit 2) for a bad command line or an unknown algorithm.
int run_compare(const CompareArgs &args, const TuneSettings &settings = {});

}  // namespace protuner
