// How the learned models see features: counts, bytes and extents span ten orders of
// magnitude, so they are compressed with log1p, then every feature is standardized with
// the mean and standard deviation of the training set. The statistics are part of a
// model (saved in its weights file): a model must see features exactly as in training.
//
// Which features are compressed follows their units in featurizer.h's tables: flags and
// ratios (already in [0, 1] or near it) are not, everything else (counts, bytes, points,
// loops, lanes...) is.
#pragma once

#include <cstdint>
#include <vector>

#include "searcher/cost/featurizer.h"

namespace protuner {

bool is_log_compressed(InvariantFeature f);
bool is_log_compressed(ScheduledFeature f);

// A hash (FNV-1a, 64 bit) of every feature name of both tables, in order, with the table
// sizes. A weights file records it; a model trained on another feature layout is refused.
uint64_t feature_layout_fingerprint();

// Per-feature standardization after log1p compression. Thread-safe to read.
struct FeatureNormalizer {
  // Standard deviations below this are treated as 1 (constant features, e.g. a flag that
  // is 0 throughout the training set), so they map to 0 instead of blowing up.
  static constexpr float kMinStd = 1e-6f;

  std::vector<float> invariant_mean, invariant_std;  // kNumInvariantFeatures each
  std::vector<float> scheduled_mean, scheduled_std;  // kNumScheduledFeatures each
  // Mean of log(runtime in seconds) over the training samples: the GCN's readout is an
  // offset from it, so an untrained network already predicts the right magnitude.
  float log_runtime_mean = 0;

  // Mean 0, std 1 for every feature (used before fitting, e.g. in benchmarks).
  static FeatureNormalizer identity();
  // Statistics over every stage node of every sample; `runtimes` in seconds, > 0.
  static FeatureNormalizer fit(const std::vector<const PipelineFeatures *> &samples,
                               const std::vector<double> &runtimes);

  // Writes kNumInvariantFeatures (resp. kNumScheduledFeatures) normalized values to out.
  void normalize(const StageFeatures &stage, float *invariant_out, float *scheduled_out) const;

  bool operator==(const FeatureNormalizer &o) const;
};

}  // namespace protuner
