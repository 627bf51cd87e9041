// The searcher daemon's Prometheus families, served on `protuner searcher --metrics-port`:
// what a dashboard reads to see a searcher work (jobs by kind and how they ended, whether
// it holds one now, its candidates by how they were answered, its searches' rollouts and
// root decisions, and the jobs it added to running apps), live while a job runs.
//
// Thread safety: prometheus-cpp metrics may be updated from any thread.
#pragma once

#include <cstdint>

#include "common/farm/job_record.h"
#include "measurer/measurement.h"

namespace prometheus {
class Counter;
class Gauge;
class Registry;
}  // namespace prometheus

namespace protuner {

// How a job taken by a searcher ended.
enum class JobOutcome { kDone, kGivenBack, kLost };

class SearcherMetrics {
 public:
  // Registers the families on `registry`, which must outlive this.
  explicit SearcherMetrics(prometheus::Registry &registry);

  void job_started();
  void job_ended(farm::JobKind kind, JobOutcome outcome);
  // A measurer's answer written to Redis.
  void measured(MeasureStatus status);
  // An answer another searcher (or an earlier delivery) had already written.
  void cache_hit();
  // An answer Redis could not take.
  void write_error();
  // A search job this searcher added to a running app, finding the queue empty.
  void joined();
  // Rollouts and root decisions the job's searches made since the last call.
  void searched(int64_t rollouts, int64_t decisions);

 private:
  // Indexed [kind][outcome] and by MeasureStatus.
  prometheus::Counter *jobs_[2][3] = {};
  prometheus::Counter *measured_[kMeasureStatusCount] = {};
  prometheus::Counter *cache_hits_ = nullptr;
  prometheus::Counter *write_errors_ = nullptr;
  prometheus::Counter *joins_ = nullptr;
  prometheus::Counter *rollouts_ = nullptr;
  prometheus::Counter *decisions_ = nullptr;
  prometheus::Gauge *busy_ = nullptr;
};

}  // namespace protuner
