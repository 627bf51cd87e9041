#include "searcher/cost/learned/network_modules.h"

#include <algorithm>
#include <cmath>

#include "searcher/cost/analytic_model.h"
#include "searcher/cost/learned/cost_terms.h"

namespace protuner {
namespace {

namespace nn = torch::nn;

// Row-normalized (A + I) over the undirected stage DAG of one state, appended to the edge
// lists with node indices offset by `base`. 004_* averages a node with its neighbours; we
// take producers and consumers alike, since a stage's cost depends on both (what it reads,
// where it is computed).
void append_adjacency(const PipelineFeatures &f, int64_t base, std::vector<int64_t> &src,
                      std::vector<int64_t> &dst, std::vector<float> &weight) {
  const size_t n = f.stages.size();
  std::vector<std::vector<int64_t>> neighbours(n);
  for (size_t i = 0; i < n; ++i) neighbours[i].push_back(static_cast<int64_t>(i));
  for (const auto &[p, c] : f.edges) {
    neighbours[c].push_back(p);
    neighbours[p].push_back(c);
  }
  for (size_t i = 0; i < n; ++i) {
    auto &nb = neighbours[i];
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
    const float w = 1.0f / static_cast<float>(nb.size());
    for (int64_t j : nb) {
      src.push_back(base + j);
      dst.push_back(base + static_cast<int64_t>(i));
      weight.push_back(w);
    }
  }
}

torch::Tensor to_tensor(std::vector<float> values, int64_t rows, int64_t cols) {
  return torch::from_blob(values.data(), {rows, cols}, torch::kFloat32).clone();
}
torch::Tensor to_tensor(std::vector<int64_t> values) {
  return torch::from_blob(values.data(), {static_cast<int64_t>(values.size())}, torch::kInt64)
      .clone();
}

// The largest log factor by which the GCN may correct a stage's analytic seconds
// (GcnNetwork::bounded): a stage is at most 100 times faster or slower than the analytic
// model says. Wide enough for what training teaches (trained at seed 0 without an app, the
// GCN's median correction of that app's whole pipelines is at most 3.7-fold), tight
// enough that a pipeline unlike the training data is not predicted absurdly.
const double kMaxStageLogCorrection = std::log(100.0);

// Seconds as an input feature: log10, shifted so 100 us is 0 (1 ns is -5, 10 s is 5).
torch::Tensor log_scaled(const torch::Tensor &seconds) {
  return torch::log10(seconds + 1e-9) + 4;
}

// Embeds both feature kinds of every node (004_* figure 5): one linear layer and ReLU each,
// concatenated. With the analytic prior the scheduled side also sees the node's cost terms
// and analytic cost, log scaled.
struct StageEmbeddingImpl : nn::Module {
  nn::Linear invariant{nullptr}, scheduled{nullptr};
  bool with_costs;
  explicit StageEmbeddingImpl(const LearnedModelOptions &o, bool with_costs)
      : with_costs(with_costs) {
    const int64_t cost_inputs = with_costs ? kNumCostTerms + 1 : 0;
    invariant =
        register_module("invariant", nn::Linear(kNumInvariantFeatures, o.invariant_embedding));
    scheduled = register_module(
        "scheduled", nn::Linear(kNumScheduledFeatures + cost_inputs, o.scheduled_embedding));
  }
  torch::Tensor forward(const FeatureBatch &b) {
    const torch::Tensor sched =
        with_costs ? torch::cat({b.scheduled, log_scaled(b.terms),
                                 log_scaled(b.analytic).unsqueeze(1)},
                                1)
                   : b.scheduled;
    return torch::cat({torch::relu(invariant(b.invariant)), torch::relu(scheduled(sched))}, 1);
  }
};
TORCH_MODULE(StageEmbedding);

class FeedForwardNetwork : public CostNetwork {
 public:
  explicit FeedForwardNetwork(const LearnedModelOptions &o) {
    embedding_ = register_module("embedding", StageEmbedding(o, false));
    hidden_ = register_module("hidden",
                              nn::Linear(o.invariant_embedding + o.scheduled_embedding, o.hidden));
    coefficients_ = register_module("coefficients", nn::Linear(o.hidden, kNumCostTerms));
    // Start every coefficient near softplus(0.5413) = 1: the untrained model is the sum
    // of the cost terms, the analytic model's shape (cost_terms.h).
    torch::NoGradGuard no_grad;
    coefficients_->weight.mul_(0.1);
    coefficients_->bias.fill_(std::log(std::exp(1.0) - 1.0));
  }
  torch::Tensor forward(const FeatureBatch &b) override {
    const torch::Tensor h = torch::relu(hidden_(embedding_(b)));
    const torch::Tensor c = torch::softplus(coefficients_(h));  // [nodes, terms], >= 0
    const torch::Tensor stage_seconds = (c * b.terms).sum(1);
    return torch::zeros({b.graphs}, stage_seconds.options())
        .index_add(0, b.graph_of_node, stage_seconds);
  }

 private:
  StageEmbedding embedding_{nullptr};
  nn::Linear hidden_{nullptr}, coefficients_{nullptr};
};

class GcnNetwork : public CostNetwork {
 public:
  GcnNetwork(const LearnedModelOptions &o, float log_runtime_mean)
      : analytic_prior_(o.analytic_prior) {
    const int64_t width = o.invariant_embedding + o.scheduled_embedding;
    embedding_ = register_module("embedding", StageEmbedding(o, o.analytic_prior));
    for (int k = 0; k < o.gcn_layers; ++k) {
      linear_.push_back(register_module("conv" + std::to_string(k), nn::Linear(width, width)));
      norm_.push_back(register_module("norm" + std::to_string(k), nn::BatchNorm1d(width)));
    }
    readout_ = register_module("readout", nn::Linear(width * (o.gcn_layers + 1), 1));
    // Stored as a buffer so it travels with the weights.
    offset_ = register_buffer("log_runtime_offset", torch::full({1}, log_runtime_mean));
    // Start at the training set's typical runtime (or the analytic model's prediction) for
    // every state: with the default
    // initialization, sums over a graph's nodes put the first predictions off by 10-100x,
    // and the relative-error loss has vanishing gradients for predictions far below the
    // runtime (d|e^z / y - 1| / dz = e^z / y), so training can stall there.
    torch::NoGradGuard no_grad;
    readout_->weight.mul_(0.01);
    readout_->bias.zero_();
  }
  torch::Tensor forward(const FeatureBatch &b) override {
    torch::Tensor e = embedding_(b);
    std::vector<torch::Tensor> per_node{e};
    for (size_t k = 0; k < linear_.size(); ++k) {
      e = torch::relu(norm_[k](convolve(linear_[k](e), b)));
      per_node.push_back(e);
    }
    if (analytic_prior_) {
      // The readout is linear, so reading out the pooled embeddings is summing per-node
      // readouts. As a log correction of the whole pipeline's analytic seconds, that sum
      // grows with the number of stages: apps of 30-100 stages would get corrections many
      // times those the 8-stage random pipelines teach (resnet50 predicted orders of
      // magnitude too slow).
      // Each node's readout is rather its own stage's log correction, and the pipeline
      // takes the sum of the corrected stages' seconds: the same weights mean the same for
      // any number of stages.
      const torch::Tensor correction = readout_(torch::cat(per_node, 1)).squeeze(1);
      last_correction_ = correction;
      const torch::Tensor stage_seconds = b.analytic * torch::exp(bounded(correction));
      return pool(stage_seconds.unsqueeze(1), b).squeeze(1) + 1e-12;
    }
    std::vector<torch::Tensor> pooled;
    for (const torch::Tensor &x : per_node) pooled.push_back(pool(x, b));
    const torch::Tensor log_seconds = readout_(torch::cat(pooled, 1)).squeeze(1) + offset_;
    // The clamp keeps a wild untrained prediction finite (1e-13 s to 1e13 s).
    return torch::exp(torch::clamp(log_seconds, -30.0, 30.0));
  }
  torch::Tensor mean_squared_correction() const override {
    return last_correction_.defined() ? last_correction_.square().mean() : torch::zeros({});
  }

 private:
  // A stage's log correction, squashed smoothly into +-kMaxStageLogCorrection: nearly
  // unchanged near 0, where training puts it, and bounded where it does not. Clamped only
  // at 30 (1e13-fold), a GCN trained without stencil_chain predicted stencil_chain's
  // schedules a median 4.8 million times too slow. The correction penalty (trainer.h)
  // acts on the raw readout, so a saturated correction still pays for itself.
  static torch::Tensor bounded(const torch::Tensor &correction) {
    return kMaxStageLogCorrection * torch::tanh(correction / kMaxStageLogCorrection);
  }
  // A' E: each node's weighted mean over itself and its neighbours.
  static torch::Tensor convolve(const torch::Tensor &e, const FeatureBatch &b) {
    const torch::Tensor messages = e.index_select(0, b.edge_src) * b.edge_weight.unsqueeze(1);
    return torch::zeros_like(e).index_add(0, b.edge_dst, messages);
  }
  // Sum over each graph's nodes: [graphs, width].
  static torch::Tensor pool(const torch::Tensor &e, const FeatureBatch &b) {
    return torch::zeros({b.graphs, e.size(1)}, e.options()).index_add(0, b.graph_of_node, e);
  }

  bool analytic_prior_;
  StageEmbedding embedding_{nullptr};
  std::vector<nn::Linear> linear_;
  std::vector<nn::BatchNorm1d> norm_;
  nn::Linear readout_{nullptr};
  torch::Tensor offset_;
  torch::Tensor last_correction_;  // of the last forward pass, with the analytic prior
};

// Members trained apart (trainer.h trains each through members()), combined in log space:
// the geometric mean of their predictions.
class EnsembleNetwork : public CostNetwork {
 public:
  EnsembleNetwork(LearnedModelKind kind, const LearnedModelOptions &o, float log_runtime_mean) {
    LearnedModelOptions one = o;
    one.members = 1;
    for (int k = 0; k < o.members; ++k) {
      members_.push_back(register_module("member" + std::to_string(k),
                                         make_cost_network(kind, one, log_runtime_mean)));
    }
  }
  torch::Tensor forward(const FeatureBatch &b) override {
    torch::Tensor log_seconds = torch::log(members_[0]->forward(b));
    for (size_t k = 1; k < members_.size(); ++k)
      log_seconds = log_seconds + torch::log(members_[k]->forward(b));
    return torch::exp(log_seconds / static_cast<double>(members_.size()));
  }
  std::vector<std::shared_ptr<CostNetwork>> members() override { return members_; }

 private:
  std::vector<std::shared_ptr<CostNetwork>> members_;
};

}  // namespace

std::vector<double> predict_seconds(CostNetwork &net, const FeatureNormalizer &normalizer,
                                    const std::vector<const PipelineFeatures *> &batch) {
  if (batch.empty()) return {};
  torch::NoGradGuard no_grad;
  net.eval();
  const torch::Tensor seconds =
      net.forward(make_feature_batch(batch, normalizer)).to(torch::kFloat64).contiguous();
  const double *data = seconds.data_ptr<double>();
  return std::vector<double>(data, data + seconds.numel());
}

FeatureBatch make_feature_batch(const std::vector<const PipelineFeatures *> &batch,
                                const FeatureNormalizer &normalizer) {
  int64_t nodes = 0;
  for (const PipelineFeatures *f : batch) nodes += static_cast<int64_t>(f->stages.size());
  std::vector<float> invariant(nodes * kNumInvariantFeatures);
  std::vector<float> scheduled(nodes * kNumScheduledFeatures);
  std::vector<float> terms(nodes * kNumCostTerms), analytic;
  analytic.reserve(nodes);
  // The reference machine, as for the cost terms: a weights file means the same everywhere.
  static const MachineModel reference;
  std::vector<int64_t> graph_of_node, src, dst;
  std::vector<float> weight;
  graph_of_node.reserve(nodes);
  int64_t node = 0;
  for (size_t g = 0; g < batch.size(); ++g) {
    append_adjacency(*batch[g], node, src, dst, weight);
    for (double c : analytic_stage_costs(*batch[g], reference))
      analytic.push_back(static_cast<float>(c));
    for (const StageFeatures &s : batch[g]->stages) {
      normalizer.normalize(s, &invariant[node * kNumInvariantFeatures],
                           &scheduled[node * kNumScheduledFeatures]);
      const CostTerms t = cost_terms(s);
      std::copy(t.begin(), t.end(), terms.begin() + node * kNumCostTerms);
      graph_of_node.push_back(static_cast<int64_t>(g));
      ++node;
    }
  }
  FeatureBatch b;
  b.graphs = static_cast<int64_t>(batch.size());
  b.invariant = to_tensor(std::move(invariant), nodes, kNumInvariantFeatures);
  b.scheduled = to_tensor(std::move(scheduled), nodes, kNumScheduledFeatures);
  b.terms = to_tensor(std::move(terms), nodes, kNumCostTerms);
  b.analytic = to_tensor(std::move(analytic), nodes, 1).squeeze(1);
  b.graph_of_node = to_tensor(std::move(graph_of_node));
  b.edge_weight = to_tensor(weight, static_cast<int64_t>(weight.size()), 1).squeeze(1);
  b.edge_src = to_tensor(std::move(src));
  b.edge_dst = to_tensor(std::move(dst));
  return b;
}

std::shared_ptr<CostNetwork> make_cost_network(LearnedModelKind kind,
                                               const LearnedModelOptions &options,
                                               float log_runtime_mean) {
  if (options.members != 1)
    return std::make_shared<EnsembleNetwork>(kind, options, log_runtime_mean);
  if (kind == LearnedModelKind::kFeedForward) return std::make_shared<FeedForwardNetwork>(options);
  return std::make_shared<GcnNetwork>(options, log_runtime_mean);
}

}  // namespace protuner
