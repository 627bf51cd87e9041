// The seeds a measuring search starts from, by one set of rules (see seed_measurement.h).
#include "searcher/search/seed_measurement.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "searcher/cost/analytic_model.h"

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;

// The fastest seed measured so far, kept as each one is measured.
class FastestSeed {
 public:
  FastestSeed(BackendCandidateMeasurer &measurer, const SeedObserver &on_measured)
      : measurer_(measurer), on_measured_(on_measured) {}

  // Measures `state` (free when it was measured already: the measurer remembers), keeps it
  // when it is the fastest so far, tells the observer; its runtime, or nullopt on failure.
  std::optional<double> measure(const ScheduleState &state, double predicted_seconds) {
    const std::optional<double> seconds = measurer_.measure({&state})[0];
    if (seconds && (!best_ || *seconds < best_->measured_seconds)) {
      best_ = MeasuredSeed{state, predicted_seconds, *seconds};
    }
    if (on_measured_) on_measured_(state, predicted_seconds);
    return seconds;
  }
  const std::optional<MeasuredSeed> &best() const { return best_; }

 private:
  BackendCandidateMeasurer &measurer_;
  const SeedObserver &on_measured_;
  std::optional<MeasuredSeed> best_;
};

// The structural seeds: the fallback whatever it costs, the others while they have used
// less than their share of the time left after it (on a large network such as resnet50 the
// fallback alone takes a good part of a short budget to compile).
void measure_structural_seeds(const SearchContext &ctx, const MachineModel &machine,
                              BackendCandidateMeasurer &measurer,
                              double baseline_compile_seconds,
                              const SeedMeasurementSettings &settings, Clock::time_point start,
                              Clock::time_point deadline, FastestSeed &fastest) {
  AnalyticModel model(ctx.graph, machine);
  const std::vector<SeedSchedule> seeds =
      seeds_to_measure(ctx.graph, ctx.space->options(), model, settings.seeds_measured);
  const double seed_compile_seconds = std::min(
      baseline_compile_seconds, settings.seed_compile_share * seconds_between(start, deadline));
  Clock::time_point seeding_start = start;
  double seed_seconds = 0;
  for (size_t k = 0; k < seeds.size(); ++k) {
    if (k == 1) {
      seeding_start = Clock::now();
      seed_seconds = settings.seeds_budget_share * seconds_between(seeding_start, deadline);
    }
    if (k > 0 && !settings.repeatable &&
        seconds_between(seeding_start, Clock::now()) >= seed_seconds) {
      break;
    }
    const double left = seconds_between(Clock::now(), deadline);
    measurer.measure_allowing_compile(
        seeds[k].state,
        std::max(measurer.settings().compile_timeout_seconds, std::min(seed_compile_seconds, left)));
    fastest.measure(seeds[k].state, seeds[k].predicted_seconds);
  }
  // The fallback is the schedule every app must have: when nothing compiled within a
  // candidate's limit (resnet50's whole network at 3 minutes: 27 s), it gets the
  // baselines' limit, within the time left.
  const double left = seconds_between(Clock::now(), deadline);
  if (!fastest.best() && !seeds.empty() && left > 0) {
    measurer.measure_allowing_compile(seeds[0].state, std::min(baseline_compile_seconds, left));
    fastest.measure(seeds[0].state, seeds[0].predicted_seconds);
  }
}

// The cost model's own best schedules (model_seed.h), measured once the structural seeds
// are in, so that a calibrated model ranks by its calibration on them when they are enough
// for one (CalibrationOptions::min_samples).
void measure_model_seeds(const SearchContext &ctx, const SeedMeasurementSettings &settings,
                         Clock::time_point deadline, const std::string &label,
                         FastestSeed &fastest) {
  const Clock::time_point began = Clock::now();
  const std::vector<ModelSeed> found =
      model_seeds(ctx, deadline, settings.repeatable ? 1.0 : settings.model_seed_share);
  const double search_seconds = seconds_between(began, Clock::now());
  for (const ModelSeed &s : found) {
    if (fastest.best()) {
      const std::vector<double> predicted =
          ctx.cost_model()->predict({&s.result.best, &fastest.best()->state});
      if (predicted[0] > settings.model_seed_max_predicted_ratio * predicted[1]) {
        spdlog::info(
            "{}: the cost model's best schedule by {}, predicted {:.3f} ms, {:.1f}x the fastest "
            "measured schedule's prediction: not measured",
            label, s.search, predicted[0] * 1000, predicted[0] / predicted[1]);
        continue;
      }
    }
    const std::optional<double> seconds = fastest.measure(s.result.best, s.result.best_cost);
    spdlog::info("{}: the cost model's best schedule by {}, predicted {:.3f} ms: {}", label,
                 s.search, s.result.best_cost * 1000,
                 seconds ? fmt::format("measured {:.3f} ms", *seconds * 1000)
                         : std::string("did not measure"));
  }
  if (!found.empty()) spdlog::info("{}: model seeds searched in {:.1f} s", label, search_seconds);
}

// The context the seeds are searched in: by the model alone.
SearchContext model_only(const SearchContext &ctx) {
  SearchContext model_ctx = ctx;
  model_ctx.measurer = nullptr;
  model_ctx.start_points.clear();
  return model_ctx;
}

}  // namespace

std::optional<MeasuredSeed> measure_seeds(const SearchContext &ctx, const MachineModel &machine,
                                          BackendCandidateMeasurer &measurer,
                                          double baseline_compile_seconds,
                                          const SeedMeasurementSettings &settings,
                                          Clock::time_point start, Clock::time_point deadline,
                                          const std::string &label,
                                          const SeedObserver &on_measured) {
  const SearchContext model_ctx = model_only(ctx);
  FastestSeed fastest(measurer, on_measured);
  measure_structural_seeds(model_ctx, machine, measurer, baseline_compile_seconds, settings,
                           start, deadline, fastest);
  measure_model_seeds(model_ctx, settings, deadline, label, fastest);
  return fastest.best();
}

PredictedSeed cheapest_predicted_seed(const SearchContext &ctx, const MachineModel &machine,
                                      const SeedMeasurementSettings &settings,
                                      Clock::time_point deadline, const std::string &label) {
  const SearchContext model_ctx = model_only(ctx);
  AnalyticModel analytic(ctx.graph, machine);
  std::vector<PredictedSeed> seeds;
  for (SeedSchedule &s :
       seeds_to_measure(ctx.graph, ctx.space->options(), analytic, settings.seeds_measured)) {
    seeds.push_back({seeds.empty() ? "fallback" : "structural", std::move(s.state), 0});
  }
  for (ModelSeed &s :
       model_seeds(model_ctx, deadline, settings.repeatable ? 1.0 : settings.model_seed_share)) {
    seeds.push_back({s.search, std::move(s.result.best), 0});
  }
  std::vector<const ScheduleState *> batch;
  for (const PredictedSeed &s : seeds) batch.push_back(&s.state);
  const std::vector<double> predicted = ctx.cost_model()->predict(batch);
  for (size_t i = 0; i < seeds.size(); ++i) seeds[i].predicted_seconds = predicted[i];
  // seeds_to_measure always gives the fallback, so there is one.
  const auto cheapest = std::min_element(
      seeds.begin(), seeds.end(),
      [](const auto &a, const auto &b) { return a.predicted_seconds < b.predicted_seconds; });
  spdlog::info("{}: the cheapest of {} seeds by the cost model is a {} seed, predicted {:.3f} ms",
               label, seeds.size(), cheapest->kind, cheapest->predicted_seconds * 1000);
  return std::move(*cheapest);
}

}  // namespace protuner
