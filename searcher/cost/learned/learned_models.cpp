#include "searcher/cost/learned/learned_models.h"

#include <stdexcept>

namespace protuner {
namespace {

std::shared_ptr<LearnedNetwork> require_kind(std::shared_ptr<LearnedNetwork> network,
                                             LearnedModelKind kind) {
  if (!network) throw std::invalid_argument("learned cost model without a network");
  if (network->kind() != kind) {
    throw std::invalid_argument(std::string("a ") + model_kind_name(kind) + " model needs a " +
                                model_kind_name(kind) + " network, not a " +
                                model_kind_name(network->kind()) + " one");
  }
  return network;
}

}  // namespace

LearnedCostModel::LearnedCostModel(std::shared_ptr<const PipelineGraph> graph,
                                   std::shared_ptr<LearnedNetwork> network, MachineModel machine)
    : featurizer_(std::move(graph), machine), network_(std::move(network)) {
  if (!network_) throw std::invalid_argument("learned cost model without a network");
}

std::vector<double> LearnedCostModel::predict(const std::vector<const ScheduleState *> &batch) {
  std::vector<PipelineFeatures> features;
  features.reserve(batch.size());
  for (const ScheduleState *state : batch)
    features.push_back(featurizer_.featurize(*state, cache_));
  std::vector<const PipelineFeatures *> pointers;
  pointers.reserve(features.size());
  for (const PipelineFeatures &f : features) pointers.push_back(&f);
  return network_->predict(pointers);
}

FeedForwardModel::FeedForwardModel(std::shared_ptr<const PipelineGraph> graph,
                                   std::shared_ptr<LearnedNetwork> network, MachineModel machine)
    : LearnedCostModel(std::move(graph),
                       require_kind(std::move(network), LearnedModelKind::kFeedForward), machine) {}

GcnModel::GcnModel(std::shared_ptr<const PipelineGraph> graph,
                   std::shared_ptr<LearnedNetwork> network, MachineModel machine)
    : LearnedCostModel(std::move(graph), require_kind(std::move(network), LearnedModelKind::kGcn),
                       machine) {}

std::unique_ptr<LearnedCostModel> learned_cost_model(std::shared_ptr<LearnedNetwork> network,
                                                     std::shared_ptr<const PipelineGraph> graph,
                                                     MachineModel machine) {
  if (network->kind() == LearnedModelKind::kFeedForward) {
    return std::make_unique<FeedForwardModel>(std::move(graph), std::move(network), machine);
  }
  return std::make_unique<GcnModel>(std::move(graph), std::move(network), machine);
}

}  // namespace protuner
