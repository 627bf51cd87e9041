// The analytic model calibrated on one app's own measurements while it is tuned (the
// autotuning mode of 002_*, for the model that needs no training). The model's time per
// schedule is a sum of terms (AnalyticTerm: compute, cache traffic, memory traffic,
// overheads); how much each term really costs differs from app to app (a stencil's cache
// traffic overlaps its arithmetic, a scan's does not). Each measured schedule gives the
// terms the model predicts and the runtime it took, and a fit of one weight per term to
// those pairs reorders the model's predictions of the app's other schedules: on the
// suite's measured candidates, weights fitted on each app's first 8 measurements rank the
// rest of its schedules better than the plain model does (`protuner evaluate --model
// analytic --calibrate-on 8 --data searcher/cost/learned/data/suite_candidates.jsonl`
// prints both).
//
// The fit: weights w >= 0 minimizing sum_i ((w . terms_i - runtime_i) / runtime_i)^2 (the
// relative error, so fast and slow schedules count alike) + ridge * n * |w - 1|^2 (few
// measurements pull the weights little away from the model as it stands), each weight
// kept within [min_weight, max_weight].
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "searcher/cost/analytic_model.h"
#include "searcher/cost/featurizer.h"

namespace protuner {

struct CalibrationOptions {
  // Below this many measurements every weight stays 1: a fit to fewer than the 6 terms
  // and a few spare says more about the measurer's noise than about the app.
  size_t min_samples = 8;
  // Pull towards 1 per measurement (see above). Chosen on the suite's measured candidates
  // (the first 8 of each app, the rest held out; the command above): 1e-3 ranks them
  // better than 1e-4, 1e-2 and 1e-1.
  double ridge = 1e-3;
  // No term is discounted or inflated beyond these: the fit sees few schedules, and a term
  // none of them exercises keeps its weight near 1 through the ridge anyway.
  double min_weight = 0.1;
  double max_weight = 10.0;
};

struct CalibrationSample {
  AnalyticTerms terms{};  // the model's seconds per term for the schedule
  double runtime_s = 0;   // measured, > 0
};

// The weights for `samples` (see above); unit weights for fewer than options.min_samples.
// Throws std::invalid_argument for a runtime that is not positive.
AnalyticTerms fit_term_weights(const std::vector<CalibrationSample> &samples,
                               const CalibrationOptions &options = {});

// One app's calibration, shared by every search thread's AnalyticModel: measurements are
// added from whichever thread measured them, and every prediction reads the weights of
// the latest fit. Thread-safe.
class AnalyticCalibration {
 public:
  AnalyticCalibration(std::shared_ptr<const PipelineGraph> graph, MachineModel machine = {},
                      AnalyticModelOptions model_options = {}, CalibrationOptions options = {});

  // Adds a measured schedule of the app (complete, of the calibration's pipeline) and
  // refits. A runtime that is not positive is refused (std::invalid_argument).
  void add(const ScheduleState &state, double runtime_s);
  // The weights of the latest fit: unit weights until options.min_samples were added.
  AnalyticTerms weights() const;
  size_t samples() const;

 private:
  const Featurizer featurizer_;
  const AnalyticModelOptions model_options_;
  const CalibrationOptions options_;
  mutable std::mutex mutex_;
  std::vector<CalibrationSample> samples_;
  AnalyticTerms weights_;
};

}  // namespace protuner
