// The farm's subcommands: the embedded farm, its daemons, and its read-out and control
// from the command line.
//
//   protuner up [suite.yaml] [--data-dir D --out DIR]      (local_farm.h)
//   protuner coordinator --redis URL [--name N --lease-ms MS --tick-ms MS]
//   protuner searcher --redis URL --measurer tcp://127.0.0.1:5555 [--measurer ...]
//                     [--name N --algorithm A --cores N --seed S ...]
//   protuner status [SUITE_ID] --redis URL [--json] [--watch SECONDS]
//   protuner report [SUITE_ID] --redis URL [--json]
//   protuner schedule SUITE_ID APP --redis URL [--format cpp|json]
//   protuner cancel SUITE_ID --redis URL
//
// The daemons run until SIGINT or SIGTERM: the coordinator releases its lease, a searcher
// gives its running job back. status and report print, per app of a suite (the latest
// submitted by default), its phase, jobs, measurements, failures, best time, baselines and
// the speedups over them (farm_report.h). Exit codes: 0 done, 2 for bad input or a Redis
// failure (the message names it).
//
// Kept out of protuner_main.cpp so the main file stays a list of subcommands; CLI11 is
// forward-declared so this header is cheap.
#pragma once

#include <memory>

namespace CLI {
class App;
}

namespace protuner {

class FarmCommands {
 public:
  // Adds the `up`, `coordinator`, `searcher`, `status`, `report`, `schedule` and `cancel`
  // subcommands to `cli`.
  explicit FarmCommands(CLI::App &cli);
  ~FarmCommands();

  bool parsed() const;
  // Runs the chosen one; returns the exit code. Throws protuner::Error for main to report.
  int run() const;

  struct Args;

 private:
  std::unique_ptr<Args> args_;
  CLI::App *up_ = nullptr;
  CLI::App *coordinator_ = nullptr;
  CLI::App *searcher_ = nullptr;
  CLI::App *status_ = nullptr;
  CLI::App *report_ = nullptr;
  CLI::App *schedule_ = nullptr;
  CLI::App *cancel_ = nullptr;
};

}  // namespace protuner
