// Measuring a dataset's schedules again, and comparing two measurements of them
// (dataset_remeasure.h).
#include "coordinator/dataset_remeasure.h"

#include <Halide.h>

#include <limits>
#include <map>
#include <ostream>
#include <set>

#include "common/errors.h"
#include "common/host_target.h"
#include "common/suite.h"
#include "coordinator/dataset_build.h"
#include "coordinator/text_table.h"
#include "searcher/cost/learned/trainer.h"

namespace protuner {
namespace {

// The samples to measure (their line numbers in the file, from 0), after checking that
// every requested pipeline id is there.
std::vector<size_t> selected_samples(const std::vector<DatasetSample> &samples,
                                     const DatasetRemeasureOptions &options) {
  const std::set<std::string> wanted(options.pipelines.begin(), options.pipelines.end());
  std::set<std::string> present;
  std::vector<size_t> selected;
  for (size_t i = 0; i < samples.size(); ++i) {
    present.insert(samples[i].pipeline_id);
    if (wanted.empty() || wanted.count(samples[i].pipeline_id)) selected.push_back(i);
  }
  for (const std::string &id : wanted) {
    if (!present.count(id)) {
      throw ConfigError(options.data + ": no samples of pipeline '" + id + "'");
    }
  }
  return selected;
}

// Each stored library name (bare, as samples keep it) resolved to a path, so a missing
// library stops the run before the first measurement rather than failing every sample.
std::map<std::string, std::string> resolved_libraries(const std::vector<DatasetSample> &samples,
                                                      const std::vector<size_t> &selected,
                                                      const std::string &data) {
  std::map<std::string, std::string> libraries;
  for (size_t i : selected) {
    const std::string &name = samples[i].app.library;
    if (libraries.count(name)) continue;
    try {
      libraries[name] = resolve_library(name, ".");
    } catch (const ConfigError &e) {
      throw ConfigError(data + ": sample " + std::to_string(i + 1) + " (pipeline '" +
                        samples[i].pipeline_id + "'): " + e.what());
    }
  }
  return libraries;
}

}  // namespace

DatasetRemeasureSummary remeasure_dataset(const DatasetRemeasureOptions &options,
                                          MeasurementBackend &measurer, std::ostream &progress) {
  const std::vector<DatasetSample> samples = read_dataset(options.data);
  const std::vector<size_t> selected = selected_samples(samples, options);
  const std::map<std::string, std::string> libraries =
      resolved_libraries(samples, selected, options.data);
  std::set<DatasetKey> stored = dataset_keys(options.out);
  DatasetWriter writer(options.out);
  const Halide::Target target = host_target();
  progress << "dataset " << options.out << ": " << stored.size() << " samples already, "
           << selected.size() << " schedules of " << options.data << " to measure" << std::endl;
  DatasetRemeasureSummary summary;
  for (size_t k = 0; k < selected.size(); ++k) {
    const DatasetSample &sample = samples[selected[k]];
    const DatasetKey key = dataset_key(sample.pipeline_id, sample.schedule_json);
    if (stored.count(key)) {
      ++summary.skipped;
      continue;
    }
    DatasetApp app{sample.pipeline_id, sample.app, sample.app};
    app.resolved.library = libraries.at(sample.app.library);
    const std::string label = sample.pipeline_id + " sample " + std::to_string(selected[k] + 1) +
                              " (" + std::to_string(k + 1) + "/" + std::to_string(selected.size()) +
                              ")";
    const DatasetMeasurement m = measure_into_dataset(
        measurer, app, sample.schedule_json, selected[k], options.timing, target, writer, label);
    progress << label << ": " << m.note;
    if (m.result.ok()) {
      stored.insert(key);
      ++summary.stored;
      progress << " (stored " << format_fixed(sample.min_ms, 3) << " ms)";
    } else {
      ++summary.failed;
    }
    progress << std::endl;
  }
  return summary;
}

DatasetAgreement dataset_agreement(const std::vector<DatasetSample> &first,
                                   const std::vector<DatasetSample> &second) {
  std::map<DatasetKey, double> second_ms;
  for (const DatasetSample &s : second) {
    second_ms.emplace(dataset_key(s.pipeline_id, s.schedule_json), s.min_ms);
  }
  std::map<std::string, std::vector<std::pair<double, double>>> matched;  // id -> (first, second)
  std::set<DatasetKey> used;
  DatasetAgreement agreement;
  for (const DatasetSample &s : first) {
    const DatasetKey key = dataset_key(s.pipeline_id, s.schedule_json);
    auto it = second_ms.find(key);
    if (it == second_ms.end() || !used.insert(key).second) {
      ++agreement.only_in_first;
      continue;
    }
    matched[s.pipeline_id].emplace_back(s.min_ms, it->second);
  }
  agreement.only_in_second = second_ms.size() - used.size();
  // Pairs ordered the same, summed over pipelines: the overall share weighs each
  // pipeline's share by its pairs, and counts no pair across two pipelines.
  double agreeing_pairs = 0;
  for (const auto &[id, pairs] : matched) {
    std::vector<double> a, b;
    for (const auto &[x, y] : pairs) {
      a.push_back(x);
      b.push_back(y);
    }
    PipelineAgreement p{id, pairs.size(), 0, 0};
    p.agreement =
        pairwise_ranking_accuracy(b, a, std::vector<std::string>(pairs.size(), id), &p.pairs);
    if (p.pairs == 0) continue;
    agreement.pipelines.push_back(p);
    agreement.pairs += p.pairs;
    agreeing_pairs += p.agreement * static_cast<double>(p.pairs);
  }
  agreement.agreement = agreement.pairs > 0 ? agreeing_pairs / static_cast<double>(agreement.pairs)
                                            : std::numeric_limits<double>::quiet_NaN();
  return agreement;
}

void print_dataset_agreement(const DatasetAgreement &agreement, std::ostream &out) {
  TextTable table({"pipeline", "schedules", "pairs", "same order %"});
  for (const PipelineAgreement &p : agreement.pipelines) {
    table.add_row({p.pipeline_id, std::to_string(p.schedules), std::to_string(p.pairs),
                   format_fixed(100 * p.agreement, 1)});
  }
  table.add_row({"overall", "", std::to_string(agreement.pairs),
                 agreement.pairs > 0 ? format_fixed(100 * agreement.agreement, 1) : "-"});
  table.print(out);
  out << "unmatched samples: " << agreement.only_in_first << " only in the first, "
      << agreement.only_in_second << " only in the second\n";
}

}  // namespace protuner
