// Every measured search candidate is a training sample. `protuner tune` and `protuner
// compare` measure hundreds of real schedules of real apps per night; RecordingBackend
// sits between a search and its measurer and appends each successful measurement of a
// protuner schedule to a dataset file (searcher/cost/dataset.h), so the learned cost
// models train on exactly the schedules the search proposes, and `protuner evaluate`
// can score any model against them. The dataset builder stores its samples the same way
// (sample_of).
#pragma once

#include <Halide.h>

#include <filesystem>
#include <mutex>
#include <string>

#include "measurer/measurement.h"
#include "searcher/cost/dataset.h"

namespace protuner {

// A dataset sample of one ok measurement of `schedule_json`. `stored` is the app as
// samples name it (a bare library name, resolved by readers like a suite's libraries);
// `target` is the target it was compiled for.
DatasetSample sample_of(const std::string &pipeline_id, const AppSpec &stored,
                        const std::string &schedule_json, const MeasureResult &result,
                        const Halide::Target &target);

// A failed schedule is not a sample, but it is a bug to chase (a schedule the space should
// not hold, or a measurer fault): it goes to a file of its own beside the dataset,
// `<dataset>.failed/<pipeline id>.<index + 1>.json`, which `protuner measure --schedule`
// takes as is. keep_failed_schedule writes it there and returns the path; IoError when it
// cannot.
std::filesystem::path failed_schedule_path(const std::string &dataset,
                                           const std::string &pipeline_id, size_t index);
std::string keep_failed_schedule(const std::string &dataset, const std::string &pipeline_id,
                                 size_t index, const std::string &schedule);

// "AMD EPYC x2, avx512, smt off": the CPU model, the CPUs measured on, the widest SIMD
// of the target and SMT: what a runtime measured on one host says about another.
std::string host_class(const MeasureResult &result, const Halide::Target &target);

// Forwards every request to `inner` and records the ok results of protuner schedules
// (baselines are not samples of our space). A protuner schedule that fails to compile,
// crashes or computes a wrong output is kept by keep_failed_schedule, at the first index
// not yet taken (timeouts and out-of-memory are the budget's verdict, not bugs). A sample
// or schedule that cannot be written is logged and dropped: losing training data must not
// stop a tuning run. Thread-safe when `inner` is.
class RecordingBackend : public MeasurementBackend {
 public:
  // Samples name the app by its name (pipeline_id) and its library's file name. `inner`
  // must outlive this object.
  RecordingBackend(MeasurementBackend &inner, const std::string &dataset_path);

  MeasureResult measure(const MeasureRequest &request) override;
  int64_t recorded() const;
  int64_t kept_failures() const;
  const std::string &path() const { return writer_.path(); }

 private:
  void keep_failure(const MeasureRequest &request, const MeasureResult &result);

  MeasurementBackend &inner_;
  mutable std::mutex mutex_;
  DatasetWriter writer_;
  int64_t recorded_ = 0;
  int64_t kept_failures_ = 0;
  size_t next_failure_index_ = 0;
};

}  // namespace protuner
