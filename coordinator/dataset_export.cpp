// See dataset_export.h.
#include "coordinator/dataset_export.h"

#include <Halide.h>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/farm/app_state.h"
#include "common/farm/library_store.h"
#include "common/farm/redis_schema.h"
#include "common/host_target.h"
#include "common/redis_client.h"
#include "coordinator/dataset_build.h"
#include "coordinator/farm_report.h"
#include "coordinator/measurement_recorder.h"
#include "measurer/measure_json.h"

namespace protuner {
std::string farm_pipeline_id(const farm::AppRecord &app) {
  const nlohmann::json what = {
      {"library", app.library_sha256}, {"generator", app.generator}, {"params", app.params}};
  return app.name + "@" + farm::sha256_of_bytes(what.dump()).substr(0, 12);
}

DatasetExportSummary export_farm_dataset(RedisClient &redis, const DatasetExportOptions &options) {
  if (options.out.empty()) throw ConfigError("dataset export: no output file (--out)");
  // Absolute, so that the samples' library paths hold wherever the dataset is read.
  const std::string library_dir = std::filesystem::absolute(
      options.library_dir.empty() ? options.out + ".libraries" : options.library_dir);
  const std::vector<std::string> ids = options.suites.empty() ? farm::suite_ids(redis) : options.suites;
  DatasetExportSummary summary;
  std::vector<DatasetSample> samples;
  for (const std::string &id : ids) {
    const farm::SuiteRecord suite = read_suite(redis, id);
    ++summary.suites;
    for (const farm::AppRecord &app : suite.apps) {
      ++summary.apps;
      const std::vector<farm::MeasuredCandidate> candidates =
          farm::read_candidates(redis, id, app.name);
      if (candidates.empty()) continue;
      AppSpec stored;
      stored.name = app.name;
      stored.library = farm::fetch_library(redis, app.library_sha256, library_dir);
      stored.generator = app.generator;
      stored.params = app.params;
      const std::string pipeline_id = farm_pipeline_id(app);
      for (const farm::MeasuredCandidate &c : candidates) {
        if (c.status != "ok" || c.schedule_json.empty() || c.result_json.empty()) {
          ++summary.not_samples;
          continue;
        }
        const MeasureResult result = result_from_json(c.result_json);
        const Halide::Target target = result.host.halide_target.empty()
                                          ? host_target()
                                          : Halide::Target(result.host.halide_target);
        samples.push_back(sample_of(pipeline_id, stored, c.schedule_json, result, target));
      }
    }
  }
  std::set<DatasetKey> held = dataset_keys(options.out);
  DatasetWriter writer(options.out);
  for (const DatasetSample &s : samples) {
    if (!held.insert(dataset_key(s.pipeline_id, s.schedule_json)).second) {
      ++summary.already;
      continue;
    }
    writer.append(s);
    ++summary.exported;
  }
  return summary;
}

}  // namespace protuner
