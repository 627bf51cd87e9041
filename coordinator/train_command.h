// `protuner train` and `protuner evaluate`: the learned cost models from the command line.
//
//   protuner train --data FILE[,FILE] --model gcn|feedforward --out weights.pt
//                  [--epochs N --seed S --holdout-fraction F --learning-rate LR]
//   protuner evaluate --weights W --data FILE[,FILE] [--json] [--leave-one-out-apps]
//   protuner evaluate --model analytic --data FILE[,FILE] [--json] [--calibrate-on N]
//
// evaluate prints MAPE, max error, R^2 (of log runtimes) and pairwise ranking accuracy
// per app and overall, for a weights file or for the analytic model (the untrained
// baseline, searcher/cost/analytic_model.h). With --leave-one-out-apps it trains, for every app, a
// fresh model of the weights file's kind and sizes on the other apps and evaluates it on that app
// (002_*'s hold-one-out protocol: how the model does on an app it has never seen). With
// --calibrate-on N it fits the analytic model's term weights to each pipeline's first N
// samples, as tune does (searcher/cost/analytic_calibration.h), and evaluates the model
// with and without them on the rest.
//
// Kept out of protuner_main.cpp so the main file stays a list of subcommands; CLI11 is
// forward-declared so this header is cheap.
#pragma once

#include <memory>

namespace CLI {
class App;
}

namespace protuner {

class LearnedCommands {
 public:
  // Adds the `train` and `evaluate` subcommands to `cli`.
  explicit LearnedCommands(CLI::App &cli);
  ~LearnedCommands();

  // Whether the parsed command line chose one of them.
  bool parsed() const;
  // Runs the chosen one; returns the exit code. Throws protuner::Error (ConfigError for
  // bad input, IoError for files) for main to report.
  int run() const;

  struct Args;

 private:
  std::unique_ptr<Args> args_;
  CLI::App *train_ = nullptr;
  CLI::App *evaluate_ = nullptr;
};

}  // namespace protuner
