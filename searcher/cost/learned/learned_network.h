// A learned cost model's network with its feature normalization: what a weights file
// holds. Two kinds (004_*, 002_*):
//
//  - feed-forward: per stage, the invariant and the scheduled features are embedded by one
//    layer each, a two-layer MLP maps the stage embedding to non-negative coefficients
//    (softplus), and the prediction is the sum over stages of coefficients x hand-made
//    cost terms (cost_terms.h), in seconds.
//  - gcn: stage nodes with the same embedding, `gcn_layers` graph convolutions over the
//    stage DAG (row-normalized adjacency with self-loops, both edge directions, then
//    batch norm and ReLU), sum-pooling of the initial, intermediate and final embeddings,
//    and a linear readout of log(seconds) offset by the training set's mean log runtime.
//    Log because runtimes span orders of magnitude: a linear readout of seconds would
//    have to produce 1e-5 and 1e1 from the same weights. With `analytic_prior`, the same
//    readout of each node's embeddings is a log correction of its stage's analytic
//    seconds, squashed to at most 100-fold either way, and the prediction is the sum of
//    the corrected stages (network_modules.cpp says why not a correction of the pooled
//    whole, and why bounded).
//
// Either kind may be an ensemble (LearnedModelOptions::members): networks of that kind
// trained apart, the prediction the geometric mean of theirs; the shipped GCN is one.
//
// Each predict() call runs one forward pass over the whole batch (graphs batched as one
// block-diagonal graph), in inference mode (batch norm uses its running statistics), so a
// state's prediction does not depend on what else is in its batch.
//
// torch/torch.h stays out of this header (it costs seconds per translation unit): the
// network lives behind a pimpl.
//
// Not thread-safe: one instance per thread, or a lock around it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "searcher/cost/featurizer.h"
#include "searcher/cost/learned/feature_normalizer.h"

namespace protuner {

enum class LearnedModelKind { kFeedForward, kGcn };
// "feedforward" or "gcn": the CostModel::name() of the model, and the CLI's --model.
const char *model_kind_name(LearnedModelKind kind);
// Throws ConfigError naming the accepted names.
LearnedModelKind parse_model_kind(const std::string &name);

// Layer sizes. The defaults are small: the search evaluates thousands of states per
// second on 2 cores, and our datasets have thousands of schedules, not 004_*'s 1.6 million
// (whose GCN embeds to 220 + 60).
struct LearnedModelOptions {
  int invariant_embedding = 24;  // width of the invariant features' embedding
  int scheduled_embedding = 40;  // width of the scheduled features' embedding
  int hidden = 64;               // feed-forward: hidden layer between embedding and coefficients
  int gcn_layers = 2;            // 004_* swept 0-8 layers and found 2 best
  // gcn: predict a correction to the analytic model (analytic_model.h, for the reference
  // machine) rather than runtimes from scratch: seconds = sum over stages of the analytic
  // model's stage seconds x exp(the stage's readout), and every node also sees its
  // analytic cost and cost terms (log scaled). Thousands of measured schedules teach a
  // network what the analytic model gets wrong far sooner than they teach it the
  // arithmetic of loop nests (`protuner train --no-analytic-prior`, then `protuner
  // evaluate --leave-one-out-apps` on its weights, measures the ranking without).
  bool analytic_prior = true;
  // An ensemble: this many networks, each trained apart from its own seed (trainer.h), the
  // prediction the geometric mean of theirs. Trained on a few thousand schedules, one
  // network's ranking of an app it never saw moves by tens of points with the training
  // seed; the mean of several errs less (weights/README.md).
  int members = 1;
  bool operator==(const LearnedModelOptions &o) const;
};

// The bytes of a weights file; IoError naming `path` when it cannot be read.
std::string read_weights_file(const std::string &path);

class LearnedNetwork {
 public:
  // A freshly initialized network: torch's global generator is reseeded with `seed` and
  // the parameters drawn from it, so one seed gives one network.
  LearnedNetwork(LearnedModelKind kind, LearnedModelOptions options, FeatureNormalizer normalizer,
                 uint64_t seed);
  LearnedNetwork(LearnedNetwork &&) noexcept;
  LearnedNetwork &operator=(LearnedNetwork &&) noexcept;
  ~LearnedNetwork();

  LearnedModelKind kind() const;
  const LearnedModelOptions &options() const;
  const FeatureNormalizer &normalizer() const;

  // Predicted seconds per featurized state, in batch order; one forward pass.
  std::vector<double> predict(const std::vector<const PipelineFeatures *> &batch) const;

  // The weights file (see learned_network.cpp for the layout). save throws IoError naming
  // the path when it cannot write. load throws IoError for a missing or unreadable file
  // and ConfigError for anything else wrong with it (not a weights file, another version,
  // truncated, another model kind than `expected_kind` when given, another feature
  // layout), each message naming the file and the problem.
  void save(const std::string &path) const;
  static LearnedNetwork load(const std::string &path);
  static LearnedNetwork load(const std::string &path, LearnedModelKind expected_kind);
  // The same from a weights file's bytes (read_weights_file, shipped_weights.h); `source`
  // stands for the path in every message.
  static LearnedNetwork load_bytes(const std::string &bytes, const std::string &source);

  // The torch side, for the trainer (network_modules.h); not part of the public API.
  struct Impl;
  Impl &impl() { return *impl_; }
  const Impl &impl() const { return *impl_; }

 private:
  explicit LearnedNetwork(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Makes every forward pass in this process run on the thread that calls it. A search runs
// one thread per core, each predicting with its own model; with torch's default intra-op
// pool (one thread per core) each pass could also fan out over the cores the other search
// threads use. Two concurrent GCN predictors run as fast either way, within the noise,
// so this is for predictable searches, not a measured speedup. Training
// keeps the default (one process, one pass at a time).
void predict_on_the_calling_thread_only();

}  // namespace protuner
