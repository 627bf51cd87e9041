// Preparing an app and building its tuning job (app_tuning.h).
#include "searcher/search/app_tuning.h"

#include <Halide.h>

#include <algorithm>

#include "common/host_target.h"
#include "common/unscheduled_check.h"
#include "searcher/cost/analytic_model.h"

namespace protuner {

PreparedApp prepare_app(const AppSpec &spec, int cores) {
  const Halide::Target target = host_target();
  PreparedApp p;
  p.spec = spec;
  p.instance = std::make_shared<AppInstance>(AppInstance::create(spec, target));
  require_unscheduled(p.instance->pipeline());  // before minutes of search, not after
  p.graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p.instance->pipeline()));
  SearchSpaceOptions options = SearchSpaceOptions::for_target(target);
  // Plan parallelism for the CPUs the schedule is measured (and so tuned) on.
  options.cores = std::max(1, cores);
  p.space = std::make_shared<const SearchSpace>(options);
  p.machine = MachineModel::from_host();
  p.machine.cores = options.cores;
  return p;
}

MeasureSettings candidate_measure_settings(const MeasureSettings &measure, double budget_seconds,
                                           const TuneSettings &settings) {
  return with_candidate_compile_limit(measure, budget_seconds, settings.candidate_compile_share,
                                      settings.candidate_compile_min_seconds);
}

Clock::time_point search_deadline(Clock::time_point start, double budget_seconds,
                                  const TuneSettings &settings) {
  const double reserve = std::min(
      0.5 * budget_seconds, std::clamp(settings.reserve_share * budget_seconds,
                                       settings.reserve_min_seconds, settings.reserve_max_seconds));
  return start + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(std::max(0.0, budget_seconds - reserve)));
}


SearchOutcome search_until(const PreparedApp &app, const std::string &algorithm, uint64_t seed,
                           Clock::time_point start, Clock::time_point deadline,
                           BackendCandidateMeasurer &measurer, const TuneSettings &settings,
                           const std::function<void(const LoopProgress &)> &progress,
                           const std::atomic<bool> *stop) {
  TuningJob job;
  job.label = app.spec.name;
  job.graph = app.graph;
  job.space = app.space;
  job.machine = app.machine;
  job.cost_model = [graph = app.graph, machine = app.machine, &choice = settings.cost_model](
                       std::shared_ptr<const AnalyticCalibration> calibration) {
    return choice.make(graph, machine, std::move(calibration));
  };
  job.algorithm = algorithm;
  job.seed = seed;
  job.threads = settings.search_threads;
  job.start = start;
  job.deadline = deadline;
  job.stop = stop;
  job.measurer = &measurer;
  job.baseline_compile_seconds = settings.measure.compile_timeout_seconds;
  job.seeds = settings.seeds;
  job.candidate_stop_above_best = settings.candidate_stop_above_best;
  if (settings.calibrate && !settings.cost_model.learned()) {
    job.calibration = std::make_shared<AnalyticCalibration>(
        app.graph, app.machine, AnalyticModelOptions{}, settings.calibration);
  }
  return run_tuning_job(job, progress);
}

}  // namespace protuner
