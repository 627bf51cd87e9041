// A suite file: the apps a user submits for tuning, with a time budget and a number of
// seeds per app. Parsing is strict (unknown keys, wrong types and missing fields are
// refused with file:line), and validation loads every library and instantiates every
// generator with its parameters, so a bad suite fails at submission, not at 3 a.m.
//
// Format (YAML):
//   suite: demo                        # name, required
//   defaults: {budget_minutes: 15, seeds: 1}   # optional, applied to apps without them
//   apps:
//     - name: harris                   # required, unique
//       library: libprotuner_app_harris.so   # required; see resolve_library()
//       generator: harris              # optional, defaults to name
//       params: {expert: false}        # optional generator params
//       budget_minutes: 3              # optional
//       seeds: 2                       # optional
#pragma once

#include <string>
#include <vector>

#include "common/app.h"

namespace protuner {

struct SuiteApp {
  AppSpec spec;
  double budget_minutes = 15.0;  // hard budget per app: search, compile and measurement
  int seeds = 1;                 // independent searches (jobs) per app; tune and local run one
  int line = 0;                  // where the app is declared, for later error messages
};

struct Suite {
  std::string name;
  std::string path;  // the file it came from
  std::vector<SuiteApp> apps;
};

// Reads and checks the file's structure. Libraries are resolved to paths (see
// resolve_library) but not loaded. Throws ConfigError "file:line: what is wrong".
Suite parse_suite_file(const std::string &path);

// Loads every app's library and instantiates its generator with its params on the host
// target; throws ConfigError "file:line: app 'x': ..." for the first app that fails.
void validate_suite_apps(const Suite &suite);

// Where a library named in a suite is found. A name with a '/' is a path relative to the
// suite file's folder (or absolute). A bare file name is searched in: the suite file's
// folder, each folder of $PROTUNER_LIBRARY_PATH (':'-separated), and the lib/ folder next
// to the running executable's bin/ folder (the build tree). Returns the first existing
// path, or throws ConfigError listing the places searched.
std::string resolve_library(const std::string &name, const std::string &suite_dir);

}  // namespace protuner
