// `protuner dataset export --redis URL`: every measurement the farm kept becomes training
// data. Searchers store each measured candidate in Redis with its full result
// (common/farm/app_state.h); this writes the ok ones of protuner schedules as dataset
// samples (searcher/cost/dataset.h), so `protuner train` and `protuner evaluate` read a
// night of farm measurements exactly as they read a `tune` run's measurements.jsonl.
//
// A sample names its generator library by path, and the farm knows libraries only by
// hash: each app's library is fetched from Redis into `library_dir`, checked against its
// hash, and samples name that file. The pipeline id is the app's name and a hash of what
// makes its pipeline (library, generator, params), so one app submitted in many suites is
// one pipeline, and two apps that share a name but not a pipeline are two.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/farm/suite_record.h"

namespace protuner {

class RedisClient;

struct DatasetExportOptions {
  std::string out;                  // dataset file: created, or appended to
  std::vector<std::string> suites;  // suite ids; empty: every submitted suite, oldest first
  std::string library_dir;          // where libraries are fetched; empty: "<out>.libraries"
};

struct DatasetExportSummary {
  size_t suites = 0;
  size_t apps = 0;
  size_t exported = 0;      // samples appended
  size_t already = 0;       // schedules the file held (an earlier export, or another suite)
  size_t not_samples = 0;   // candidates that did not measure ok (no timing to learn from)
};

// "<app name>@<12 hex digits>": the pipeline id of an app's samples.
std::string farm_pipeline_id(const farm::AppRecord &app);

// Appends the ok candidates of the suites' apps to `options.out`, each schedule of a
// pipeline once. Nothing is written for a suite or app that cannot be read: every record
// is read and every library fetched before the first sample is appended. Throws
// ConfigError for an unknown suite, SchemaError or RecordFormatError for records this build
// cannot read, IoError for a library Redis lacks or a file that cannot be written.
DatasetExportSummary export_farm_dataset(RedisClient &redis, const DatasetExportOptions &options);

}  // namespace protuner
