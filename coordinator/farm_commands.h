// `protuner coordinator`, `protuner searcher` and `protuner status`: the farm's daemons and
// its read-out from the command line.
//
//   protuner coordinator --redis URL [--name N --lease-ms MS --tick-ms MS]
//   protuner searcher --redis URL --measurer tcp://127.0.0.1:5555 [--measurer ...]
//                     [--name N --algorithm A --cores N --seed S]
//   protuner status --redis URL [SUITE_ID] [--json]
//
// The daemons run until SIGINT or SIGTERM: the coordinator releases its lease, a searcher
// gives its running job back. status prints, per app of a suite (the latest submitted by
// default), its phase, jobs, measurements, failures, best time and baselines.
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
  // Adds the `coordinator`, `searcher` and `status` subcommands to `cli`.
  explicit FarmCommands(CLI::App &cli);
  ~FarmCommands();

  bool parsed() const;
  // Runs the chosen one; returns the exit code. Throws protuner::Error for main to report.
  int run() const;

  struct Args;

 private:
  std::unique_ptr<Args> args_;
  CLI::App *coordinator_ = nullptr;
  CLI::App *searcher_ = nullptr;
  CLI::App *status_ = nullptr;
};

}  // namespace protuner
