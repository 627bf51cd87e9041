// The analytic model's terms and their calibration on measurements: the fit recovers the
// weights that made synthetic runtimes, keeps unit weights below its minimum of samples and
// its weights within bounds, refuses runtimes that are not positive, and a model sharing a
// calibration predicts with the weights of its latest fit.
#include <gtest/gtest.h>

#include <Halide.h>

#include <random>
#include <stdexcept>

#include "searcher/cost/analytic_calibration.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

// `count` samples with random terms whose runtimes are exactly `weights` . terms.
std::vector<CalibrationSample> synthetic(const AnalyticTerms &weights, int count) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> seconds(1e-4, 1e-2);
  std::vector<CalibrationSample> out;
  for (int i = 0; i < count; ++i) {
    CalibrationSample s;
    for (double &t : s.terms) t = seconds(rng);
    s.runtime_s = weighed_seconds(s.terms, weights);
    out.push_back(s);
  }
  return out;
}

TEST(AnalyticCalibration, TheFitRecoversTheWeightsThatMadeTheRuntimes) {
  const AnalyticTerms truth = {2.0, 0.5, 3.0, 1.0, 0.25, 4.0};
  CalibrationOptions options;
  options.ridge = 1e-12;  // the data is exact: nothing to pull towards
  const AnalyticTerms w = fit_term_weights(synthetic(truth, 40), options);
  for (int k = 0; k < kNumAnalyticTerms; ++k) {
    EXPECT_NEAR(w[k], truth[k], 1e-3 * truth[k])
        << analytic_term_name(static_cast<AnalyticTerm>(k));
  }
}

TEST(AnalyticCalibration, FewerSamplesThanTheMinimumKeepUnitWeights) {
  const AnalyticTerms truth = {2.0, 2.0, 2.0, 2.0, 2.0, 2.0};
  CalibrationOptions options;
  EXPECT_EQ(fit_term_weights(synthetic(truth, static_cast<int>(options.min_samples) - 1), options),
            unit_term_weights());
  EXPECT_NE(fit_term_weights(synthetic(truth, static_cast<int>(options.min_samples)), options),
            unit_term_weights());
}

// Every weight stays within its bounds, however far the truth lies; a term no sample
// exercises keeps weight 1.
TEST(AnalyticCalibration, WeightsStayWithinTheirBoundsAndUnusedTermsAtOne) {
  const CalibrationOptions options;
  for (const double compute : {50.0, 0.01}) {
    std::vector<CalibrationSample> samples = synthetic(unit_term_weights(), 30);
    for (CalibrationSample &s : samples) {  // compute alone, `compute` times as costly
      for (int k = 1; k < kNumAnalyticTerms; ++k) s.terms[k] = 0;
      s.runtime_s = compute * s.terms[0];
    }
    const AnalyticTerms w = fit_term_weights(samples, options);
    EXPECT_DOUBLE_EQ(w[0], compute > 1 ? options.max_weight : options.min_weight);
    for (int k = 1; k < kNumAnalyticTerms; ++k) EXPECT_DOUBLE_EQ(w[k], 1.0) << k;
  }
}

TEST(AnalyticCalibration, ARuntimeThatIsNotPositiveIsRefused) {
  std::vector<CalibrationSample> samples = synthetic(unit_term_weights(), 10);
  samples[3].runtime_s = 0;
  try {
    fit_term_weights(samples);
    FAIL() << "a zero runtime was accepted";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("calibration sample 3"), std::string::npos) << e.what();
  }
  auto graph = testing::graph_of(testing::blur_chain_pipeline());
  AnalyticCalibration calibration(graph);
  ScheduleState state(graph);
  std::mt19937_64 rng(1);
  ASSERT_TRUE(SearchSpace(SearchSpaceOptions{}).random_rollout(state, rng));
  EXPECT_THROW(calibration.add(state, -1.0), std::invalid_argument);
  EXPECT_EQ(calibration.samples(), 0u);
}

// The model's prediction is the sum of its terms; a model sharing a calibration predicts
// with its latest weights: schedules measured 3x slower than predicted make it predict
// other schedules about 3x slower (a little less: 8 measurements pull the weights only
// part of the way from 1).
TEST(AnalyticCalibration, AModelPredictsWithTheWeightsOfTheLatestFit) {
  auto graph = testing::graph_of(testing::blur_chain_pipeline(512, 512));
  auto calibration = std::make_shared<AnalyticCalibration>(graph);
  AnalyticModel plain(graph),
      calibrated(graph, MachineModel{}, AnalyticModelOptions{}, calibration);
  const SearchSpace space{SearchSpaceOptions{}};
  std::mt19937_64 rng(3);
  std::vector<ScheduleState> states;
  while (states.size() < 12) {
    ScheduleState s(graph);
    ASSERT_TRUE(space.random_rollout(s, rng));
    states.push_back(s);
  }
  for (const ScheduleState &s : states) {
    const double p = plain.predict({&s})[0];
    EXPECT_NEAR(weighed_seconds(analytic_terms(plain.featurizer().featurize(s), MachineModel{}),
                                unit_term_weights()),
                p, 1e-12 * p);
    EXPECT_DOUBLE_EQ(calibrated.predict({&s})[0], p);  // no measurement yet
  }
  for (size_t i = 0; i < 8; ++i) calibration->add(states[i], 3 * plain.predict({&states[i]})[0]);
  EXPECT_EQ(calibration->samples(), 8u);
  for (size_t i = 8; i < states.size(); ++i) {
    const double ratio = calibrated.predict({&states[i]})[0] / plain.predict({&states[i]})[0];
    EXPECT_GT(ratio, 2.5);
    EXPECT_LT(ratio, 3.05);
    const PipelineFeatures f = calibrated.featurizer().featurize(states[i]);
    double staged = 0;
    for (double c : calibrated.stage_costs(f)) staged += c;
    EXPECT_NEAR(staged, calibrated.predict({&states[i]})[0], 1e-9 * staged);
  }
}

}  // namespace
}  // namespace protuner
