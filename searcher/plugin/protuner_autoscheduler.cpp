// The entry point of libautoschedule_protuner.so: loading the library registers the
// autoscheduler "ProTuner" with the process's libHalide, so any generator can be scheduled
// by protuner through Halide's own driver:
//   <generator driver> -p libautoschedule_protuner.so -s ProTuner auto_schedule=true ...
// Halide calls it with the pipeline, the target and machine_params; the rest of the
// settings come from the environment (plugin_settings.h). It runs the named search (MCTS
// by default) with the analytic cost model, measuring candidates in child processes when
// the search asks for it, applies the best schedule to the pipeline's Funcs (Halide then
// compiles them) and returns the schedule as the body of the .schedule.h file Halide writes.
#include <Halide.h>
#include <dlfcn.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "common/errors.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "common/unscheduled_check.h"
#include "measurer/isolated_measurer.h"
#include "searcher/cost/analytic_calibration.h"
#include "searcher/cost/learned/learned_network.h"
#include "searcher/plugin/halide_schedule_file.h"
#include "searcher/plugin/plugin_settings.h"
#include "searcher/search/measured_candidates.h"
#include "searcher/search/search_registry.h"
#include "searcher/search/tuning_job.h"
#include "searcher/space/search_space.h"

namespace protuner {
namespace {

// The name generators select with -s (or Pipeline::auto_schedule(name, ...)).
constexpr const char *kAutoschedulerName = "ProTuner";

void write_schedule_json(const ScheduleState &state, const std::string &path) {
  std::ofstream out(path);
  out << schedule_to_json(state) << "\n";
  out.close();
  if (!out) {
    throw ConfigError("HL_PROTUNER_SCHEDULE_JSON='" + path + "': cannot write the schedule there");
  }
}

// The search space for the machine Halide asks about: the vector width of the target, and
// the cores machine_params names (the target machine may not be this one).
SearchSpaceOptions space_options_for(const Halide::Target &target,
                                     const Halide::MachineParams &params) {
  SearchSpaceOptions o = SearchSpaceOptions::for_target(target);
  if (params.parallelism > 0) o.cores = params.parallelism;
  return o;
}

// The machine the cost model predicts for: this host's caches and clock, with the cores,
// vector width and last-level cache Halide asks about (the target may be another machine).
MachineModel machine_for(const SearchSpaceOptions &space, const Halide::MachineParams &params) {
  MachineModel m = MachineModel::from_host();
  m.cores = space.cores;
  m.vector_bits = space.vector_bits;
  if (params.last_level_cache_size > 0) m.l3_bytes = params.last_level_cache_size;
  return m;
}

// protuner-measure-child in the bin/ folder beside the lib/ folder this plugin was loaded
// from (the build tree's layout).
std::string measure_child_beside_plugin() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&machine_for), &info) || !info.dli_fname) {
    throw ConfigError("cannot locate the plugin's own file; set HL_PROTUNER_MEASURE_CHILD");
  }
  const std::filesystem::path lib = std::filesystem::absolute(info.dli_fname).parent_path();
  return (lib.parent_path() / "bin" / "protuner-measure-child").string();
}

// Real measurement for searches that ask for it: the app named by the settings, measured
// on this machine in child processes, each candidate within the compile limit `protuner
// tune` gives one of an app with this budget, so a slow candidate cannot eat the budget.
struct PluginMeasurer {
  PluginMeasurer(const PluginSettings &settings, const Halide::Target &target)
      : isolated(options(settings)),
        candidates(isolated, *settings.app, target.to_string(),
                   with_candidate_compile_limit(
                       search_measure_settings(), static_cast<double>(settings.budget_seconds),
                       kDefaultCandidateCompileShare, kDefaultCandidateCompileMinSeconds)) {}
  static IsolatedMeasurerOptions options(const PluginSettings &settings) {
    IsolatedMeasurerOptions o;
    o.child_executable = settings.measure_child.value_or(measure_child_beside_plugin());
    return o;
  }
  IsolatedMeasurer isolated;
  BackendCandidateMeasurer candidates;
};

void autoschedule(const Halide::Pipeline &pipeline_in, const Halide::Target &target,
                  const Halide::MachineParams &params, Halide::AutoSchedulerResults *results) {
  const auto start = std::chrono::steady_clock::now();
  const PluginSettings settings = plugin_settings_from_environment();
  std::cerr << "ProTuner: " << settings.describe() << ", target=" << target.to_string()
            << ", machine_params=" << params.to_string() << "\n";

  if (settings.cost_model.learned()) predict_on_the_calling_thread_only();

  // A Pipeline is a handle: scheduling this copy schedules the caller's Funcs.
  Halide::Pipeline pipeline = pipeline_in;
  require_unscheduled(pipeline);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(pipeline));
  const SearchSpaceOptions space_options = space_options_for(target, params);
  const auto space = std::make_shared<const SearchSpace>(space_options);
  const MachineModel machine = machine_for(space_options, params);
  std::unique_ptr<PluginMeasurer> measurer;
  if (make_search(settings.algorithm)->needs_measurer()) {
    if (!settings.app) {
      throw ConfigError("HL_PROTUNER_ALGORITHM=" + settings.algorithm +
                        " measures candidates: set HL_PROTUNER_APP_LIBRARY and "
                        "HL_PROTUNER_APP_GENERATOR to the generator being scheduled");
    }
    measurer = std::make_unique<PluginMeasurer>(settings, target);
  }

  // The tuning job `protuner tune` runs (tuning_job.h): with a measurer, the seeds, the
  // search, and the analytic model calibrated on the measurements; without one, the search
  // by the cost model alone.
  TuningJob job;
  job.label = settings.app ? settings.app->generator : std::string("ProTuner");
  job.graph = graph;
  job.space = space;
  job.machine = machine;
  job.cost_model = [graph, machine, &choice = settings.cost_model](
                       std::shared_ptr<const AnalyticCalibration> calibration) {
    return choice.make(graph, machine, std::move(calibration));
  };
  job.algorithm = settings.algorithm;
  job.seed = settings.seed;
  job.threads = space_options.cores;
  job.start = start;
  job.deadline = start + std::chrono::seconds(settings.budget_seconds);
  job.iterations = settings.iterations;
  job.measurer = measurer ? &measurer->candidates : nullptr;
  job.baseline_compile_seconds = search_measure_settings().compile_timeout_seconds;
  if (measurer && !settings.cost_model.learned()) {
    job.calibration = std::make_shared<AnalyticCalibration>(graph, machine);
  }
  const SearchOutcome outcome = run_tuning_job(job);
  if (!outcome.best && !outcome.last_run_best) {
    std::string why = "no schedule found";
    for (const std::string &e : outcome.errors) why += "; " + e;
    throw ConfigError(why);
  }
  const ScheduleState &best = outcome.best ? *outcome.best : *outcome.last_run_best;
  // A measuring search whose measurements mostly failed has not tuned anything.
  std::optional<std::string> unmeasured;
  if (measurer) unmeasured = measurement_failure(measurer->candidates.tally());
  if (unmeasured && !settings.allow_unmeasured) {
    throw ConfigError("the candidates of " + settings.app->generator +
                      " did not measure (" + *unmeasured +
                      "); fix the cause, or set HL_PROTUNER_ALLOW_UNMEASURED=1 to accept the "
                      "cost model's choice unmeasured");
  }

  apply_schedule(best, pipeline);
  if (settings.schedule_json_path) write_schedule_json(best, *settings.schedule_json_path);
  // Halide 14 fills in the target and machine_params but not the name (the .schedule.h
  // header says which autoscheduler wrote it).
  results->scheduler_name = kAutoschedulerName;
  results->schedule_source = halide_schedule_body(best);
  if (unmeasured) {
    results->schedule_source =
        "// UNMEASURED: the cost model's choice; measuring failed: " + *unmeasured + "\n" +
        results->schedule_source;
    std::cerr << "ProTuner: UNMEASURED schedule returned (HL_PROTUNER_ALLOW_UNMEASURED=1): "
              << *unmeasured << "\n";
  }

  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::cerr << "ProTuner: " << graph->funcs.size() << " Funcs, " << settings.algorithm << ": "
            << outcome.rollouts << " complete schedules, " << outcome.evaluations
            << " cost-model evaluations, "
            << (measurer ? measurer->candidates.measurements() : 0) << " measurements in "
            << took.count() << " s, " << outcome.seeds.size() << " search runs; best predicted "
            << outcome.best_cost_seconds * 1e3 << " ms";
  if (outcome.best_result) std::cerr << ", measured " << outcome.best_result->timing.min_ms << " ms";
  if (measurer) {
    const CandidateTally t = measurer->candidates.tally();
    std::cerr << "; " << t.ok << " of " << t.ok + t.failed << " schedules measured ok";
  }
  if (job.calibration) {
    std::cerr << "; model calibrated on " << outcome.calibration_samples << " measurements";
  }
  if (outcome.best_seed) {
    const bool kept = outcome.best_result && outcome.best_seed->measured_seconds * 1e3 <=
                                                 outcome.best_result->timing.min_ms;
    std::cerr << "; best seed measured " << outcome.best_seed->measured_seconds * 1e3 << " ms"
              << (kept ? " (kept)" : "");
  }
  std::cerr << "\n";
}

// Halide reports user errors as CompileError; ours become that too, so the driver prints
// them like any other bad generator argument.
void autoschedule_reporting_errors(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                   const Halide::MachineParams &params,
                                   Halide::AutoSchedulerResults *results) {
  try {
    autoschedule(pipeline, target, params, results);
  } catch (const Halide::Error &) {
    throw;
  } catch (const std::exception &e) {
    // What Halide's user_error macro expands to (Halide.h undefines the macro at its end).
    Halide::Internal::ErrorReport(__FILE__, __LINE__, nullptr,
                                  Halide::Internal::ErrorReport::User)
        << kAutoschedulerName << " autoscheduler: " << e.what() << "\n";
  }
}

struct Registration {
  Registration() {
    Halide::Pipeline::add_autoscheduler(kAutoschedulerName, autoschedule_reporting_errors);
  }
};
const Registration registration;

}  // namespace
}  // namespace protuner
