// Every measured search candidate is a training sample. `protuner tune` and `protuner
// compare` measure hundreds of real schedules of real apps per night; RecordingBackend
// sits between a search and its measurer and appends each successful measurement of a
// protuner schedule to a dataset file (searcher/cost/dataset.h), so the learned cost
// models train on exactly the schedules the search proposes, and `protuner evaluate`
// can score any model against them. The dataset builder stores its samples the same way
// (sample_of).
#pragma once

#include <Halide.h>

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

// "AMD EPYC x2, avx512, smt off": the CPU model, the CPUs measured on, the widest SIMD
// of the target and SMT: what a runtime measured on one host says about another.
std::string host_class(const MeasureResult &result, const Halide::Target &target);

// Forwards every request to `inner` and records the ok results of protuner schedules
// (baselines are not samples of our space). A sample that cannot be written is logged
// and dropped: losing training data must not stop a tuning run. Thread-safe when `inner`
// is.
class RecordingBackend : public MeasurementBackend {
 public:
  // Samples name the app by its name (pipeline_id) and its library's file name. `inner`
  // must outlive this object.
  RecordingBackend(MeasurementBackend &inner, const std::string &dataset_path);

  MeasureResult measure(const MeasureRequest &request) override;
  int64_t recorded() const;
  const std::string &path() const { return writer_.path(); }

 private:
  MeasurementBackend &inner_;
  mutable std::mutex mutex_;
  DatasetWriter writer_;
  int64_t recorded_ = 0;
};

}  // namespace protuner
