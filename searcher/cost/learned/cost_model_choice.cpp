#include "searcher/cost/learned/cost_model_choice.h"

#include "common/errors.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/cost/learned/learned_models.h"
#include "searcher/cost/learned/shipped_weights.h"

namespace protuner {

CostModelChoice::CostModelChoice(std::string choice) : name_(std::move(choice)) {
  if (name_ == "analytic") return;
  if (name_ == "feedforward" || name_ == "gcn") {
    const LearnedModelKind kind = parse_model_kind(name_);
    weights_ = shipped_weights(kind);
    source_ = shipped_weights_source(kind);
  } else {
    try {
      weights_ = read_weights_file(name_);
    } catch (const IoError &e) {
      throw IoError(std::string(e.what()) +
                    " (and not a model name: analytic, feedforward or gcn)");
    }
    source_ = name_;
  }
  LearnedNetwork::load_bytes(weights_, source_);  // refuses bad weights now, not per thread
}

std::unique_ptr<CostModel> CostModelChoice::make(
    std::shared_ptr<const PipelineGraph> graph, const MachineModel &machine,
    std::shared_ptr<const AnalyticCalibration> calibration) const {
  if (!learned()) {
    return std::make_unique<AnalyticModel>(std::move(graph), machine, AnalyticModelOptions{},
                                           std::move(calibration));
  }
  return learned_cost_model(
      std::make_shared<LearnedNetwork>(LearnedNetwork::load_bytes(weights_, source_)),
      std::move(graph), machine);
}

}  // namespace protuner
