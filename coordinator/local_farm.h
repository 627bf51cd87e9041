// `protuner up [suite.yaml]`: the whole farm on this machine, for one command. It starts a
// redis-server (AOF, `appendfsync always`, loopback, its data in the farm's data folder), a
// measurer daemon, a coordinator and one searcher (or `searchers`) as child processes, submits the suite (or
// resumes the unfinished one of the same name found there), prints each app's progress as
// it changes, and at the end the report table, writing each app's best schedule to
// <out>/<app>/schedule.h and schedule.json. The daemons are the farm's own executables
// with the farm's protocol; nothing is simulated.
//
// With two or more CPUs the measurer gets the last one to itself and the searcher and
// coordinator the others, so timings are not disturbed by the search; the schedule space
// plans for the measurer's CPUs.
//
// Stopping (stop flag, set by SIGINT/SIGTERM in `protuner up`): the searcher gives its job
// back, then the coordinator, the measurer and Redis (which flushes its AOF) stop, each
// with SIGTERM. Running it again resumes the suite: its apps' budgets are wall clock, so
// an app whose deadline passed meanwhile finishes with what it had measured.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "common/farm/app_join.h"

namespace protuner {

struct LocalFarmOptions {
  std::string suite_path;  // the suite file
  // Redis' data, logs, caches; empty: $XDG_DATA_HOME/protuner/farm (~/.local/share/...).
  std::string data_dir;
  std::string out_dir = "farm-out";  // <out>/<app>/schedule.h, schedule.json, report.json
  // How often progress is read from Redis.
  std::chrono::milliseconds progress_interval{2000};
  // Searcher daemons, all on the CPUs the measurer does not use: more than one searches
  // apps side by side, and free ones join running apps by `join` (common/farm/app_join.h).
  int searchers = 1;
  farm::JoinPolicy join = farm::JoinSettings().policy;
};

// The farm's data folder when none is given.
std::string default_farm_data_dir();

// Runs the suite to its end; returns 0 when every app is done, 1 when some failed, 130
// when stopped (the suite resumes on the next run). Throws ConfigError for a bad suite
// (nothing is started), IoError when a daemon cannot start or dies (its log is named).
int run_local_farm(const LocalFarmOptions &options, const std::atomic<bool> &stop);

}  // namespace protuner
