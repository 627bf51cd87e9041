// Fitting the analytic model's term weights to measurements (analytic_calibration.h).
#include "searcher/cost/analytic_calibration.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace protuner {
namespace {

// Coordinate descent converges on this 6-variable box-constrained least squares in a few
// dozen sweeps; it stops when no weight moves more than kTolerance.
constexpr int kMaxSweeps = 500;
constexpr double kTolerance = 1e-9;

}  // namespace

AnalyticTerms fit_term_weights(const std::vector<CalibrationSample> &samples,
                               const CalibrationOptions &options) {
  AnalyticTerms w = unit_term_weights();
  if (samples.size() < options.min_samples) return w;
  constexpr int K = kNumAnalyticTerms;
  // Each sample's terms relative to its runtime: the fit makes a . w close to 1.
  std::vector<AnalyticTerms> a(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const double runtime = samples[i].runtime_s;
    if (!(runtime > 0) || !std::isfinite(runtime)) {
      throw std::invalid_argument("calibration sample " + std::to_string(i) +
                                  ": the runtime must be positive, not " + std::to_string(runtime));
    }
    for (int k = 0; k < K; ++k) a[i][k] = samples[i].terms[k] / runtime;
  }
  const double lambda = options.ridge * static_cast<double>(samples.size());
  // The normal equations: G = sum a a^T, g = sum a; minimize w^T G w - 2 g^T w + lambda |w - 1|^2.
  double G[K][K] = {};
  double g[K] = {};
  for (const AnalyticTerms &row : a) {
    for (int j = 0; j < K; ++j) {
      g[j] += row[j];
      for (int k = 0; k < K; ++k) G[j][k] += row[j] * row[k];
    }
  }
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    double moved = 0;
    for (int k = 0; k < K; ++k) {
      double rest = 0;  // sum_j!=k G[k][j] w_j
      for (int j = 0; j < K; ++j) {
        if (j != k) rest += G[k][j] * w[j];
      }
      const double den = G[k][k] + lambda;
      if (den <= 0) continue;  // no sample has this term and no ridge: leave it at 1
      const double next =
          std::clamp((g[k] - rest + lambda) / den, options.min_weight, options.max_weight);
      moved = std::max(moved, std::abs(next - w[k]));
      w[k] = next;
    }
    if (moved < kTolerance) break;
  }
  return w;
}

AnalyticCalibration::AnalyticCalibration(std::shared_ptr<const PipelineGraph> graph,
                                         MachineModel machine, AnalyticModelOptions model_options,
                                         CalibrationOptions options)
    : featurizer_(std::move(graph), machine),
      model_options_(model_options),
      options_(options),
      weights_(unit_term_weights()) {}

void AnalyticCalibration::add(const ScheduleState &state, double runtime_s) {
  if (!(runtime_s > 0) || !std::isfinite(runtime_s)) {
    throw std::invalid_argument("calibration: a measured runtime must be positive, not " +
                                std::to_string(runtime_s));
  }
  // Featurized outside the lock: another thread's prediction waits only for the fit.
  const CalibrationSample sample{
      analytic_terms(featurizer_.featurize(state), featurizer_.machine(), model_options_),
      runtime_s};
  std::lock_guard<std::mutex> lock(mutex_);
  samples_.push_back(sample);
  weights_ = fit_term_weights(samples_, options_);
}

AnalyticTerms AnalyticCalibration::weights() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return weights_;
}

size_t AnalyticCalibration::samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_.size();
}

}  // namespace protuner
