// Training data for the learned cost models: measured schedules, stored durably as JSON
// Lines (one sample per line, appended and flushed one at a time, so a builder killed
// mid-run loses at most the line it was writing, and a reader skips a truncated last line
// with a warning). The farm's measurements in Redis export to this format
// (`protuner dataset export`, coordinator/dataset_export.h).
//
// One line:
//   {"format": "protuner-sample", "version": 1,
//    "app": {"name": "random_17", "library": "libprotuner_random_pipeline.so",
//            "generator": "random_pipeline", "params": {"seed": "17"}},
//    "pipeline_id": "random_17",       // samples with one id are schedules of one pipeline
//    "schedule": {...},                // schedule_json.h form (an object, not a string)
//    "samples_ms": [..10 values..], "min_ms": 1.23, "median_ms": 1.25, "stddev_ms": 0.01,
//    "host_class": "AMD EPYC 9R14 x2, avx512, smt off",
//    "target": "x86-64-linux-avx2-..."}
//
// Features are not stored: a reader rebuilds each pipeline (common/app.h) and featurizes
// the schedule, so a dataset outlives changes to the feature layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/app.h"

namespace protuner {

constexpr int kDatasetFormatVersion = 1;

struct DatasetSample {
  AppSpec app;
  std::string pipeline_id;
  std::string schedule_json;  // schedule_json.h text
  std::vector<double> samples_ms;
  double min_ms = 0;
  double median_ms = 0;
  double stddev_ms = 0;
  std::string host_class;
  std::string target;
};

// One sample as one line of JSON (no newline).
std::string sample_to_json_line(const DatasetSample &sample);
// Throws ConfigError naming what is wrong (malformed JSON, other format or version, a
// missing or mistyped field).
DatasetSample sample_from_json_line(const std::string &line);

// Appends samples to a dataset file, creating it; each append is flushed. Throws IoError
// naming the path when it cannot be opened or written.
class DatasetWriter {
 public:
  explicit DatasetWriter(std::string path);
  void append(const DatasetSample &sample);
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// Every sample of a dataset file. A malformed line other than a truncated last line is an
// error (ConfigError naming the file and line number); IoError when the file cannot be read.
std::vector<DatasetSample> read_dataset(const std::string &path);

// Gathers measurements from several files into one dataset (the candidates `protuner tune`
// records per run, `<out>/measurements.jsonl`, become training data this way). A schedule
// of a pipeline is kept once, at its first measurement (`out`'s own samples first, then the
// inputs in order): the same schedule measured again, in another run, would make a pair
// whose order is noise. Every input is read before anything is written, so a malformed
// input leaves `out` as it was; `out` is only appended to. Errors as read_dataset's and
// DatasetWriter's.
struct DatasetMergeSummary {
  size_t appended = 0;    // samples written to out
  size_t duplicates = 0;  // input samples whose schedule out already held (or an earlier input)
};
DatasetMergeSummary merge_datasets(const std::vector<std::string> &inputs, const std::string &out);

}  // namespace protuner
