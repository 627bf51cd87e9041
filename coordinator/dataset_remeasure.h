// `protuner dataset remeasure` and `protuner dataset agreement`. A cost model's ranking
// accuracy is scored against the order in which a dataset's measurements put a pipeline's
// schedules, so that order has to be one a host reproduces. Samples gathered from several
// tune runs, on several hosts of a class or beside other work, need not agree: measured
// again, two schedules a few percent apart may swap. `remeasure` measures every stored
// schedule again on this host, in one run, into a new dataset; `agreement` compares two
// measurements of the same schedules: the share `a` of pairs both order the same says how
// reproducible the order is. Were the two measurements' errors independent, each ordering
// a pair right with probability p, they would agree on a = p^2 + (1 - p)^2 of the pairs,
// and a model that knew the true order would score about p = (1 + sqrt(2a - 1)) / 2
// against either (87% at a = 77%).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "measurer/timing.h"
#include "searcher/cost/dataset.h"

namespace protuner {

class MeasurementBackend;

// What a remeasure does. The defaults are the command line's.
struct DatasetRemeasureOptions {
  std::string data;  // the dataset whose schedules are measured again
  std::string out;   // the new dataset: created, or appended to and resumed
  // Only the samples of these pipeline ids (all when empty); an id the data does not hold
  // is an error, not an empty run.
  std::vector<std::string> pipelines;
  // The measurer's own timing (the minimum confirmed by repeated samples, up to 40), as a
  // tune measures its candidates: the point is an order that holds.
  TimingSettings timing;
  // Measurer caches (reference outputs); results are never taken from the cache, which
  // would return the stored measurement again.
  std::string cache_dir;
};

struct DatasetRemeasureSummary {
  int stored = 0;   // samples appended to out
  int skipped = 0;  // schedules out already held
  int failed = 0;   // measurements that failed (their schedules kept in <out>.failed/)
};

// Measures each selected sample's schedule of `data` on this host (host target), in the
// file's order, appending the ok ones to `out`; one progress line per schedule. Throws
// ConfigError for an unknown pipeline id or a sample whose app library cannot be found
// (before measuring anything), and the errors of read_dataset and DatasetWriter.
DatasetRemeasureSummary remeasure_dataset(const DatasetRemeasureOptions &options,
                                          MeasurementBackend &measurer, std::ostream &progress);

struct PipelineAgreement {
  std::string pipeline_id;
  size_t schedules = 0;  // schedules measured in both
  size_t pairs = 0;      // pairs of them the first measurement orders (runtimes differ)
  double agreement = 0;  // share of those the second orders the same (a tie: one half)
};

struct DatasetAgreement {
  std::vector<PipelineAgreement> pipelines;  // sorted by id; only pipelines with a pair
  size_t pairs = 0;
  double agreement = 0;                          // over all pairs; NaN without one
  size_t only_in_first = 0, only_in_second = 0;  // samples without a match in the other
};

// Matches samples by (pipeline id, schedule) and compares their min_ms orders.
DatasetAgreement dataset_agreement(const std::vector<DatasetSample> &first,
                                   const std::vector<DatasetSample> &second);
void print_dataset_agreement(const DatasetAgreement &agreement, std::ostream &out);

}  // namespace protuner
