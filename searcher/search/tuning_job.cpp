// One tuning job, one implementation (see tuning_job.h).
#include "searcher/search/tuning_job.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "common/schedule/schedule_json.h"
#include "searcher/search/search_registry.h"

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<double> min_opt(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

SearchContext context_for(const TuningJob &job, CandidateMeasurer *measurer, uint64_t seed) {
  SearchContext ctx;
  ctx.graph = job.graph;
  ctx.space = job.space.get();
  ctx.cost_model = [factory = job.cost_model, calibration = job.calibration] {
    return factory(calibration);
  };
  ctx.measurer = measurer;
  ctx.seed = seed;
  ctx.threads = job.threads;
  return ctx;
}

// Adds a run's own trace (offset to the job's clock) to the job's trace, keeping the best
// so far in both columns.
void append_trace(SearchOutcome &out, const SearchResult &r, double run_offset) {
  std::optional<double> measured, cost;
  if (!out.trace.empty())
    measured = out.trace.back().best_measured_ms, cost = out.trace.back().best_cost_ms;
  for (const TracePoint &p : r.trace) {
    cost = min_opt(cost, p.cost * 1000);
    if (p.measured_seconds) measured = min_opt(measured, *p.measured_seconds * 1000);
    out.trace.push_back({run_offset + p.seconds, measured, cost});
  }
}

// Measures `state` (free when it was measured already: the measurer remembers) and keeps
// it when it is the fastest so far; a trace point either way.
void keep_if_faster(SearchOutcome &out, const ScheduleState &state, double predicted_seconds,
                    BackendCandidateMeasurer &measurer, double now_offset) {
  const std::optional<double> seconds = measurer.measure({&state})[0];
  if (seconds && (!out.best_result || *seconds * 1000 < out.best_result->timing.min_ms)) {
    out.best = state;
    out.best_result = measurer.result_for(schedule_to_json(state));
    out.best_cost_seconds = predicted_seconds;
  }
  TunePoint p{now_offset, std::nullopt, predicted_seconds * 1000};
  if (!out.trace.empty()) p.best_cost_ms = min_opt(out.trace.back().best_cost_ms, p.best_cost_ms);
  if (out.best_result) p.best_measured_ms = out.best_result->timing.min_ms;
  out.trace.push_back(p);
}

}  // namespace

SearchOutcome run_tuning_job(const TuningJob &job,
                             const std::function<void(const LoopProgress &)> &progress) {
  SearchOutcome out;
  BackendCandidateMeasurer *measurer = job.measurer;
  // The observer must not outlive this call: the measurer may measure more for its caller.
  struct StopObserving {
    BackendCandidateMeasurer *m;
    ~StopObserving() {
      if (m) m->on_measured(nullptr);
    }
  } stop_observing{measurer};
  // Runs repeat until the deadline unless the job is repeatable, each from the best so far:
  // measured, or by the cost model alone, predicted. A measurement can pick between the
  // bests of any search's runs; the model alone only between runs that search from the best
  // so far (deterministic greedy would repeat itself).
  const bool one_run =
      job.iterations.has_value() || (!measurer && !make_search(job.algorithm)->uses_start_points());
  SeedMeasurementSettings seeds = job.seeds;
  seeds.repeatable = seeds.repeatable || job.iterations.has_value();
  if (measurer) {
    if (job.calibration) {
      measurer->on_measured([calibration = job.calibration](const ScheduleState &state,
                                                            double seconds) {
        calibration->add(state, seconds);
      });
    }
    measurer->stop_sampling_above_best(job.candidate_stop_above_best);
    out.best_seed = measure_seeds(
        context_for(job, nullptr, job.seed), job.machine, *measurer,
        job.baseline_compile_seconds, seeds, job.start, job.deadline, job.label,
        [&](const ScheduleState &state, double predicted_seconds) {
          keep_if_faster(out, state, predicted_seconds, *measurer,
                         seconds_between(job.start, Clock::now()));
        });
  } else {
    // The cost model alone starts from its cheapest seed.
    PredictedSeed seed = cheapest_predicted_seed(context_for(job, nullptr, job.seed), job.machine,
                                                 seeds, job.deadline, job.label);
    out.best = std::move(seed.state);
    out.best_cost_seconds = seed.predicted_seconds;
  }
  int64_t decisions = 0;  // taken by the runs that ended
  const auto stopped = [&] { return job.stop && job.stop->load(); };
  for (uint64_t s = job.seed;
       out.seeds.empty() || (!one_run && Clock::now() < job.deadline && !stopped()); ++s) {
    std::unique_ptr<Search> search = make_search(job.algorithm);
    // Cost-only algorithms get no measurer, so each runs as its name says; their best is
    // measured here.
    SearchContext ctx = context_for(job, search->needs_measurer() ? measurer : nullptr, s);
    // Each run starts from the fastest schedule measured so far, seed or earlier run (by
    // the model alone: the cheapest predicted).
    if (out.best && (out.best_result || !measurer)) ctx.start_points.push_back(*out.best);
    const double run_offset = seconds_between(job.start, Clock::now());
    SearchProgress run;  // the run's latest report
    const auto report = [&](std::optional<double> run_best_seconds) {
      if (!progress) return;
      LoopProgress p;
      p.elapsed_seconds = seconds_between(job.start, Clock::now());
      p.best_ms = out.best_result ? std::optional(out.best_result->timing.min_ms) : std::nullopt;
      if (run_best_seconds) p.best_ms = min_opt(p.best_ms, *run_best_seconds * 1000);
      p.measurements = measurer ? measurer->measurements() : 0;
      p.runs = static_cast<int>(out.seeds.size());
      p.rollouts = out.rollouts + run.rollouts;
      p.decisions = decisions + run.decided_steps;
      progress(p);
    };
    ctx.on_progress = [&](const SearchProgress &p) {
      run = p;
      report(p.best_measured_seconds);
    };
    SearchBudget budget;
    budget.deadline = job.deadline;
    budget.iterations = job.iterations;
    budget.stop = job.stop;
    std::optional<SearchResult> result;
    try {
      result = search->run(ctx, budget);
    } catch (const std::exception &e) {
      out.errors.push_back(job.algorithm + " (seed " + std::to_string(s) + ") failed: " +
                           e.what());
      spdlog::error("{}: {}", job.label, out.errors.back());
      break;
    }
    out.seeds.push_back(s);
    out.last_run_best = result->best;
    out.rollouts += result->rollouts;
    decisions += run.decided_steps;
    run = SearchProgress{};
    out.evaluations += result->evaluations;
    append_trace(out, *result, run_offset);
    if (measurer) {
      keep_if_faster(out, result->best, result->best_cost, *measurer,
                     seconds_between(job.start, Clock::now()));
    } else if (result->best_cost <= out.best_cost_seconds) {
      out.best = result->best;
      out.best_cost_seconds = result->best_cost;
    }
    report(std::nullopt);
  }
  if (job.calibration) {
    out.calibration_samples = job.calibration->samples();
    out.calibration_weights = job.calibration->weights();
  }
  return out;
}

}  // namespace protuner
