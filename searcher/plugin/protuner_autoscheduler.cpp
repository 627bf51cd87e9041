// The entry point of libautoschedule_protuner.so: loading the library registers the
// autoscheduler "ProTuner" with the process's libHalide, so any generator can be scheduled
// by protuner through Halide's own driver:
//   <generator driver> -p libautoschedule_protuner.so -s ProTuner auto_schedule=true ...
// Halide calls it with the pipeline, the target and machine_params; the rest of the
// settings come from the environment (plugin_settings.h). It searches, applies the best
// schedule to the pipeline's Funcs (Halide then compiles them) and returns the schedule as
// the body of the .schedule.h file Halide writes.
#include <Halide.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include "common/errors.h"
#include "searcher/apply_schedule.h"
#include "searcher/pipeline_graph.h"
#include "searcher/plugin/halide_schedule_file.h"
#include "searcher/plugin/interim_cost.h"
#include "searcher/plugin/plugin_settings.h"
#include "searcher/plugin/schedule_search.h"
#include "searcher/schedule_json.h"
#include "searcher/search_space.h"

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

void autoschedule(const Halide::Pipeline &pipeline_in, const Halide::Target &target,
                  const Halide::MachineParams &params, Halide::AutoSchedulerResults *results) {
  const auto start = std::chrono::steady_clock::now();
  const PluginSettings settings = plugin_settings_from_environment();
  std::cerr << "ProTuner: " << settings.describe() << ", target=" << target.to_string()
            << ", machine_params=" << params.to_string() << "\n";

  // A Pipeline is a handle: scheduling this copy schedules the caller's Funcs.
  Halide::Pipeline pipeline = pipeline_in;
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(pipeline));
  const SearchSpaceOptions space_options = space_options_for(target, params);
  const SearchSpace space(space_options);
  const InterimCost cost(InterimCostParams::from(space_options, params.last_level_cache_size));

  ScheduleSearchOptions options;
  options.algorithm = settings.algorithm;
  options.seed = settings.seed;
  options.deadline = start + std::chrono::seconds(settings.budget_seconds);
  options.max_iterations = settings.max_iterations;
  const ScheduleSearchResult found = search_schedule(graph, space, cost, options);

  apply_schedule(found.best, pipeline);
  if (settings.schedule_json_path) write_schedule_json(found.best, *settings.schedule_json_path);
  // Halide 14 fills in the target and machine_params but not the name (the .schedule.h
  // header says which autoscheduler wrote it).
  results->scheduler_name = kAutoschedulerName;
  results->schedule_source = halide_schedule_body(found.best);

  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::cerr << "ProTuner: " << graph->funcs.size() << " Funcs, " << found.iterations
            << " complete schedules (" << found.dead_ends << " dead ends) in " << took.count()
            << " s; best interim cost " << found.best_cost << "\n";
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
