#include "searcher/cost/learned/dataset_loader.h"

#include <spdlog/spdlog.h>

#include <Halide.h>

#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "common/app.h"
#include "common/errors.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/schedule/schedule_json.h"
#include "common/suite.h"
#include "searcher/cost/featurizer.h"

namespace protuner {
namespace {

// What identifies an app's algorithm: two records with the same key share one rebuilt
// pipeline (the suite's display name does not matter).
using AppKey = std::tuple<std::string, std::string, std::map<std::string, std::string>>;

AppKey key_of(const AppSpec &app) { return {app.library, app.generator, app.params}; }

std::string sample_name(const DatasetSample &r, size_t index) {
  return "dataset sample " + std::to_string(index) + " (pipeline '" + r.pipeline_id + "', app '" +
         r.app.name + "')";
}

// One app's pipeline, rebuilt once, and its featurizer.
struct Rebuilt {
  std::shared_ptr<const PipelineGraph> graph;
  std::unique_ptr<Featurizer> featurizer;
};

ScheduleState read_schedule(const DatasetSample &r, size_t index, const Rebuilt &app) {
  try {
    return schedule_from_json(r.schedule_json, app.graph);
  } catch (const IllegalScheduleError &e) {
    throw IllegalScheduleError(sample_name(r, index) + ": " + e.what());
  } catch (const ConfigError &e) {
    throw ConfigError(sample_name(r, index) + ": " + e.what());
  }
}

TrainingSample featurize_record(const DatasetSample &r, size_t index, const Rebuilt &app) {
  if (!(r.min_ms > 0) || !(r.stddev_ms >= 0)) {
    throw ConfigError(sample_name(r, index) + ": runtime " + std::to_string(r.min_ms) +
                      " ms and stddev " + std::to_string(r.stddev_ms) +
                      " ms; a training sample needs a positive runtime");
  }
  TrainingSample s;
  s.app = r.app.name;
  s.pipeline_id = r.pipeline_id;
  s.features = app.featurizer->featurize(read_schedule(r, index, app));
  s.runtime_s = r.min_ms * 1e-3;
  s.stddev_s = r.stddev_ms * 1e-3;
  s.record = index;
  return s;
}

}  // namespace

std::vector<TrainingSample> featurize_dataset(const std::vector<DatasetSample> &records,
                                              const MachineModel &machine) {
  const Halide::Target target = host_target();
  std::map<AppKey, Rebuilt> apps;
  std::vector<TrainingSample> out;
  out.reserve(records.size());
  size_t outgrown = 0;
  std::string first_outgrown;
  for (size_t i = 0; i < records.size(); ++i) {
    Rebuilt &app = apps[key_of(records[i].app)];
    if (!app.graph) {
      // The graph is self-contained once analyzed: the instance need not outlive it.
      AppInstance instance = AppInstance::create(records[i].app, target);
      app.graph = std::make_shared<const PipelineGraph>(analyze_pipeline(instance.pipeline()));
      app.featurizer = std::make_unique<Featurizer>(app.graph, machine);
    }
    try {
      out.push_back(featurize_record(records[i], i, app));
    } catch (const IllegalScheduleError &e) {
      if (outgrown++ == 0) first_outgrown = e.what();
    }
  }
  if (outgrown > 0) {
    spdlog::warn(
        "skipped {} of {} dataset samples whose schedules this build's schedule space refuses "
        "(measured before a rule that now excludes them); the first: {}",
        outgrown, records.size(), first_outgrown);
  }
  return out;
}

std::vector<TrainingSample> load_training_samples(const std::vector<std::string> &paths,
                                                  const MachineModel &machine) {
  std::vector<DatasetSample> records;
  for (const std::string &path : paths) {
    std::vector<DatasetSample> file = read_dataset(path);
    // Records name libraries as suites do; a bare name is found like a suite's
    // (resolve_library), with the dataset file's folder in the suite folder's place.
    const std::string folder = std::filesystem::path(path).parent_path().string();
    for (DatasetSample &r : file) r.app.library = resolve_library(r.app.library, folder);
    records.insert(records.end(), std::make_move_iterator(file.begin()),
                   std::make_move_iterator(file.end()));
  }
  return featurize_dataset(records, machine);
}

}  // namespace protuner
