#include "searcher/cost/learned/feature_normalizer.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "common/stable_hash.h"

namespace protuner {
namespace {

bool compressed_units(const char *units) {
  return std::strcmp(units, "flag") != 0 && std::strcmp(units, "ratio") != 0;
}

// Which features of each table are compressed, computed once from the units.
template <typename Feature, int N>
std::vector<bool> compression_table() {
  std::vector<bool> out(N);
  for (int i = 0; i < N; ++i)
    out[i] = compressed_units(feature_info(static_cast<Feature>(i)).units);
  return out;
}

const std::vector<bool> &invariant_compression() {
  static const auto table = compression_table<InvariantFeature, kNumInvariantFeatures>();
  return table;
}
const std::vector<bool> &scheduled_compression() {
  static const auto table = compression_table<ScheduledFeature, kNumScheduledFeatures>();
  return table;
}

// Negative values never occur (every feature is a count, size, flag or ratio); clamping
// keeps log1p finite if a future feature breaks that.
float compress(float v, bool log) { return log ? std::log1p(std::max(v, 0.0f)) : v; }

// Accumulates mean and variance of one table in double precision.
struct Moments {
  std::vector<double> sum, sum_sq;
  explicit Moments(int n) : sum(n), sum_sq(n) {}
  void add(int i, double v) {
    sum[i] += v;
    sum_sq[i] += v * v;
  }
  void finish(double count, std::vector<float> &mean, std::vector<float> &std) const {
    mean.resize(sum.size());
    std.resize(sum.size());
    for (size_t i = 0; i < sum.size(); ++i) {
      const double m = sum[i] / count;
      const double sd = std::sqrt(std::max(sum_sq[i] / count - m * m, 0.0));
      mean[i] = static_cast<float>(m);
      std[i] = sd < FeatureNormalizer::kMinStd ? 1.0f : static_cast<float>(sd);
    }
  }
};

}  // namespace

bool is_log_compressed(InvariantFeature f) { return invariant_compression()[static_cast<int>(f)]; }
bool is_log_compressed(ScheduledFeature f) { return scheduled_compression()[static_cast<int>(f)]; }

uint64_t feature_layout_fingerprint() {
  uint64_t h = kStableHashStart;
  auto mix = [&h](const std::string &text) { h = stable_hash(text + '\n', h); };
  mix("invariant " + std::to_string(kNumInvariantFeatures));
  for (int i = 0; i < kNumInvariantFeatures; ++i) {
    mix(feature_info(static_cast<InvariantFeature>(i)).name);
  }
  mix("scheduled " + std::to_string(kNumScheduledFeatures));
  for (int i = 0; i < kNumScheduledFeatures; ++i) {
    mix(feature_info(static_cast<ScheduledFeature>(i)).name);
  }
  return h;
}

FeatureNormalizer FeatureNormalizer::identity() {
  FeatureNormalizer n;
  n.invariant_mean.assign(kNumInvariantFeatures, 0.0f);
  n.invariant_std.assign(kNumInvariantFeatures, 1.0f);
  n.scheduled_mean.assign(kNumScheduledFeatures, 0.0f);
  n.scheduled_std.assign(kNumScheduledFeatures, 1.0f);
  return n;
}

FeatureNormalizer FeatureNormalizer::fit(const std::vector<const PipelineFeatures *> &samples,
                                         const std::vector<double> &runtimes) {
  if (samples.empty() || samples.size() != runtimes.size()) {
    throw std::invalid_argument("FeatureNormalizer::fit needs one runtime per sample, and samples");
  }
  Moments inv(kNumInvariantFeatures), sched(kNumScheduledFeatures);
  double nodes = 0, log_runtime_sum = 0;
  for (size_t k = 0; k < samples.size(); ++k) {
    for (const StageFeatures &s : samples[k]->stages) {
      for (int i = 0; i < kNumInvariantFeatures; ++i) {
        inv.add(i, compress(s.invariant[i], invariant_compression()[i]));
      }
      for (int i = 0; i < kNumScheduledFeatures; ++i) {
        sched.add(i, compress(s.scheduled[i], scheduled_compression()[i]));
      }
      nodes += 1;
    }
    log_runtime_sum += std::log(runtimes[k]);
  }
  if (nodes == 0) throw std::invalid_argument("FeatureNormalizer::fit: samples without stages");
  FeatureNormalizer n;
  inv.finish(nodes, n.invariant_mean, n.invariant_std);
  sched.finish(nodes, n.scheduled_mean, n.scheduled_std);
  n.log_runtime_mean = static_cast<float>(log_runtime_sum / static_cast<double>(samples.size()));
  return n;
}

void FeatureNormalizer::normalize(const StageFeatures &stage, float *invariant_out,
                                  float *scheduled_out) const {
  for (int i = 0; i < kNumInvariantFeatures; ++i) {
    invariant_out[i] =
        (compress(stage.invariant[i], invariant_compression()[i]) - invariant_mean[i]) /
        invariant_std[i];
  }
  for (int i = 0; i < kNumScheduledFeatures; ++i) {
    scheduled_out[i] =
        (compress(stage.scheduled[i], scheduled_compression()[i]) - scheduled_mean[i]) /
        scheduled_std[i];
  }
}

bool FeatureNormalizer::operator==(const FeatureNormalizer &o) const {
  return invariant_mean == o.invariant_mean && invariant_std == o.invariant_std &&
         scheduled_mean == o.scheduled_mean && scheduled_std == o.scheduled_std &&
         log_runtime_mean == o.log_runtime_mean;
}

}  // namespace protuner
