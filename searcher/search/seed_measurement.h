// The seeds a measuring search starts from, measured by one set of rules for every caller
// (`protuner tune` and `compare`, the Halide plugin): the structural seeds
// (searcher/seeds/seed_schedules.h), the compute-root fallback always, then the cost model's
// own best schedules (model_seed.h). A search then starts from the fastest of them: on most
// apps one seed is within a small factor of the best schedule found, and without them a
// short budget's search starts from nothing measured.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "common/schedule/schedule_state.h"
#include "searcher/cost/machine_model.h"
#include "searcher/search/measured_candidates.h"
#include "searcher/search/model_seed.h"
#include "searcher/search/search.h"
#include "searcher/seeds/seed_schedules.h"

namespace protuner {

// Every tunable of seed measurement, with its default.
struct SeedMeasurementSettings {
  // Structural seeds measured: at most this many beyond the compute-root fallback, and none
  // started once they have used this share of the time from the fallback's end to the
  // deadline. 0 measures only the fallback.
  int seeds_measured = kDefaultSeedsMeasured;
  double seeds_budget_share = kDefaultSeedsBudgetShare;
  // A seed may compile for this share of the time from the start to the deadline, within
  // [its candidate limit, the baseline limit] and the time left: 3 min allows 48 s, 15 min
  // 120 s. Seeds are the structures experts write, and on a large network they compile
  // slowest: resnet50's register-blocked seeds compile for longer than a 3-minute budget
  // gives a candidate (27 s), and run much faster than the fallback (the seeds
  // `build/bin/search_probe resnet50` writes, timed by `protuner measure --schedule`).
  double seed_compile_share = 0.3;
  // Then the cost model's own best schedules, found by the plain and the look-ahead beam in
  // this share of the time left each (model_seed.h), are measured as more seeds. 0: none.
  double model_seed_share = kDefaultModelSeedShare;
  // A model seed is not measured when the same model predicts it this many times slower
  // than the fastest schedule measured so far: such a seed seldom wins, and on a large
  // network (resnet50's plain-beam seed) it can spend its whole compile limit and never run.
  double model_seed_max_predicted_ratio = 2.0;
  // Repeatable runs (a search with an iteration budget): every structural seed is measured
  // whatever the time, and the model seeds' beams may run all their passes, so which seeds
  // are measured does not depend on how fast the host is.
  bool repeatable = false;
};

// A measured seed: the schedule, the model's prediction and the measured runtime (seconds).
struct MeasuredSeed {
  ScheduleState state;
  double predicted_seconds = 0;
  double measured_seconds = 0;
};

// Called after each seed is measured (successfully or not), with the seed and its
// prediction in seconds; measurer.measure() of it returns the runtime at no cost.
using SeedObserver = std::function<void(const ScheduleState &, double predicted_seconds)>;

// Measures the seeds of ctx's pipeline through `measurer` between `start` and `deadline`:
// the structural seeds ranked by the analytic model for `machine` (seeds_to_measure), each
// allowed the seed compile limit (capped by `baseline_compile_seconds`, the limit baselines
// get); the fallback once more with the baseline limit when nothing measured (resnet50's
// whole network at 3 minutes compiles for longer than a candidate may); then the model
// seeds by ctx's cost model. ctx's measurer and start points are not used. Logs one line
// per model seed, naming `label`. Returns the fastest seed measured, or nullopt when none
// measured.
std::optional<MeasuredSeed> measure_seeds(const SearchContext &ctx, const MachineModel &machine,
                                          BackendCandidateMeasurer &measurer,
                                          double baseline_compile_seconds,
                                          const SeedMeasurementSettings &settings,
                                          std::chrono::steady_clock::time_point start,
                                          std::chrono::steady_clock::time_point deadline,
                                          const std::string &label,
                                          const SeedObserver &on_measured = nullptr);

// A seed ranked by the cost model alone: which kind it is (a structural seed, "beam" or
// "beam_lookahead"), the schedule and its prediction (seconds).
struct PredictedSeed {
  std::string kind;
  ScheduleState state;
  double predicted_seconds = 0;
};

// Without a measurer, the same seeds by the cost model alone: the structural seeds
// (seeds_to_measure, at most settings.seeds_measured beyond the fallback) and the model
// seeds (model_seeds, in settings.model_seed_share of the time to `deadline` each, or all
// their passes when settings.repeatable), all predicted by ctx's cost model; the cheapest.
// A search by the model alone starts from it, so its result is never predicted slower than
// a seed's. Logs the choice, naming `label`.
PredictedSeed cheapest_predicted_seed(const SearchContext &ctx, const MachineModel &machine,
                                      const SeedMeasurementSettings &settings,
                                      std::chrono::steady_clock::time_point deadline,
                                      const std::string &label);

}  // namespace protuner
