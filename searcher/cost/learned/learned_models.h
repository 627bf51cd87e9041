// The learned cost models behind the CostModel interface: featurize every state of the
// batch (memoized in a FeatureCache, like the analytic model), then one forward pass of
// the network (learned_network.h) over the whole batch.
//
// FeedForwardModel ("feedforward") and GcnModel ("gcn") differ only in the network they
// accept; both share it through a shared_ptr so fine-tuning (trainer.h) can update the
// network a model predicts with.
//
// Not thread-safe (a FeatureCache and a torch module): one instance per search thread,
// and no training of its network while it predicts.
#pragma once

#include <memory>
#include <string>

#include "searcher/cost/cost_model.h"
#include "searcher/cost/featurizer.h"
#include "searcher/cost/learned/learned_network.h"

namespace protuner {

class LearnedCostModel : public CostModel {
 public:
  LearnedCostModel(std::shared_ptr<const PipelineGraph> graph,
                   std::shared_ptr<LearnedNetwork> network, MachineModel machine = {});

  std::vector<double> predict(const std::vector<const ScheduleState *> &batch) override;
  std::string name() const override { return model_kind_name(network_->kind()); }

  LearnedNetwork &network() { return *network_; }
  const Featurizer &featurizer() const { return featurizer_; }

 private:
  Featurizer featurizer_;
  FeatureCache cache_;
  std::shared_ptr<LearnedNetwork> network_;
};

// Throws std::invalid_argument when the network is not a feed-forward one.
class FeedForwardModel : public LearnedCostModel {
 public:
  FeedForwardModel(std::shared_ptr<const PipelineGraph> graph,
                   std::shared_ptr<LearnedNetwork> network, MachineModel machine = {});
};

// Throws std::invalid_argument when the network is not a GCN.
class GcnModel : public LearnedCostModel {
 public:
  GcnModel(std::shared_ptr<const PipelineGraph> graph, std::shared_ptr<LearnedNetwork> network,
           MachineModel machine = {});
};

// The model of `network`'s kind, feed-forward or GCN, for `graph`.
std::unique_ptr<LearnedCostModel> learned_cost_model(std::shared_ptr<LearnedNetwork> network,
                                                     std::shared_ptr<const PipelineGraph> graph,
                                                     MachineModel machine = {});

}  // namespace protuner
