// The torch side of the learned models (internal to protuner_learned: it includes
// torch/torch.h). Featurized states become one FeatureBatch of tensors (every stage node of
// every state, graphs batched block-diagonally as an edge list), and a CostNetwork maps a
// FeatureBatch to predicted seconds per state. learned_network.h documents the two kinds.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "searcher/cost/learned/learned_network.h"

namespace protuner {

struct FeatureBatch {
  int64_t graphs = 0;
  torch::Tensor invariant;      // [nodes, kNumInvariantFeatures], normalized
  torch::Tensor scheduled;      // [nodes, kNumScheduledFeatures], normalized
  torch::Tensor terms;          // [nodes, kNumCostTerms], seconds (cost_terms.h)
  torch::Tensor analytic;       // [nodes], the analytic model's seconds per stage node
  torch::Tensor graph_of_node;  // [nodes] int64: which state each node belongs to
  // The row-normalized adjacency with self-loops as weighted edges src -> dst: a node's
  // next embedding is the weighted sum over its (src) neighbours, itself included.
  torch::Tensor edge_src, edge_dst;  // [edges] int64
  torch::Tensor edge_weight;         // [edges] float
};

FeatureBatch make_feature_batch(const std::vector<const PipelineFeatures *> &batch,
                                const FeatureNormalizer &normalizer);

class CostNetwork : public torch::nn::Module {
 public:
  // Predicted seconds, [graphs].
  virtual torch::Tensor forward(const FeatureBatch &batch) = 0;
  // The mean squared log correction of the analytic model's stage costs in the last
  // forward pass (the GCN with the analytic prior), for the trainer's correction
  // penalty; a zero scalar for networks that correct nothing.
  virtual torch::Tensor mean_squared_correction() const { return torch::zeros({}); }
  // An ensemble's members (LearnedModelOptions::members), which training trains one by
  // one; empty for a single network.
  virtual std::vector<std::shared_ptr<CostNetwork>> members() { return {}; }
};

// Predicted seconds per state, in batch order: one forward pass in inference mode.
std::vector<double> predict_seconds(CostNetwork &net, const FeatureNormalizer &normalizer,
                                    const std::vector<const PipelineFeatures *> &batch);

// A network of `kind`; an ensemble (EnsembleNetwork) of `options.members` when more than one.
std::shared_ptr<CostNetwork> make_cost_network(LearnedModelKind kind,
                                               const LearnedModelOptions &options,
                                               float log_runtime_mean);

struct LearnedNetwork::Impl {
  LearnedModelKind kind;
  LearnedModelOptions options;
  FeatureNormalizer normalizer;
  std::shared_ptr<CostNetwork> net;
};

}  // namespace protuner
