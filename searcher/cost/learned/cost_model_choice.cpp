#include "searcher/cost/learned/cost_model_choice.h"

#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/cost/learned/learned_models.h"
#include "searcher/cost/learned/shipped_weights.h"

namespace protuner {
namespace {

std::string read_weights_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw IoError("cost model '" + path +
                  "': not analytic, feedforward or gcn, and no weights file can be read there");
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

CostModelChoice::CostModelChoice(std::string choice) : name_(std::move(choice)) {
  if (name_ == "analytic") return;
  if (name_ == "feedforward" || name_ == "gcn") {
    const LearnedModelKind kind = parse_model_kind(name_);
    weights_ = shipped_weights(kind);
    source_ = shipped_weights_source(kind);
  } else {
    weights_ = read_weights_file(name_);
    source_ = name_;
  }
  LearnedNetwork::load_bytes(weights_, source_);  // refuses bad weights now, not per thread
}

std::unique_ptr<CostModel> CostModelChoice::make(std::shared_ptr<const PipelineGraph> graph,
                                                 const MachineModel &machine) const {
  if (!learned()) return std::make_unique<AnalyticModel>(std::move(graph), machine);
  return learned_cost_model(
      std::make_shared<LearnedNetwork>(LearnedNetwork::load_bytes(weights_, source_)),
      std::move(graph), machine);
}

}  // namespace protuner
