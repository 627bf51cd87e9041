// The cost model a search ranks schedules with, chosen by one string: `protuner tune
// --cost-model` (and `local`, `compare`) and the plugin's HL_PROTUNER_COST_MODEL.
//
//   analytic     the analytic model: no training, and it follows the machine model
//   feedforward  the feed-forward weights shipped for this machine class (shipped_weights.h)
//   gcn          the GCN weights shipped for this machine class
//   other        the path of a weights file (`protuner train --out`); ./gcn names a file
//
// One choice serves every search thread: the weights are read and checked once, when the
// choice is made, and each make() builds its own model (a model is not thread-safe).
#pragma once

#include <memory>
#include <string>

#include "searcher/cost/cost_model.h"
#include "searcher/cost/machine_model.h"

namespace protuner {

class AnalyticCalibration;

// What searches use when nothing is chosen: the analytic model, which needs no weights
// and predicts for the machine it is given (`protuner compare --cost-model NAME` measures
// the searches with another; docs/RESULTS.md has those runs).
inline const char *kDefaultCostModel = "analytic";

class CostModelChoice {
 public:
  // Throws IoError for a weights file that cannot be read and ConfigError for one that is
  // not valid weights for this build, each naming the file (or the shipped weights).
  explicit CostModelChoice(std::string choice);
  CostModelChoice() : CostModelChoice(kDefaultCostModel) {}

  // As given: "analytic", "feedforward", "gcn" or a path.
  const std::string &name() const { return name_; }
  bool learned() const { return !weights_.empty(); }

  // A new model of the chosen kind for `graph`. The analytic model weighs its terms by
  // `calibration` when given (analytic_calibration.h); the learned models ignore it.
  std::unique_ptr<CostModel> make(
      std::shared_ptr<const PipelineGraph> graph, const MachineModel &machine,
      std::shared_ptr<const AnalyticCalibration> calibration = nullptr) const;

 private:
  std::string name_;
  std::string weights_;  // a learned model's weights file, its bytes; empty: analytic
  std::string source_;   // what errors call them
};

}  // namespace protuner
