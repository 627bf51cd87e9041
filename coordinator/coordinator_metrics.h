// The coordinator's Prometheus families, served on `protuner coordinator --metrics-port`:
// whether this coordinator holds the lease, what it has queued and finished, and the job
// queue's depths as the active coordinator reads them each tick (the farm's backlog, for
// dashboards; a standby leaves them as they were when it last held the lease), and each
// unfinished app's progress as read from Redis: best runtime, speedup over each measured
// baseline, measurements, failures and the share of its budget used. An app's series keep
// their last values after it finishes, so a dashboard shows the night's results until the
// coordinator restarts; dashboards/ reads them.
//
// Thread safety: prometheus-cpp metrics may be updated from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/farm/app_state.h"
#include "common/farm/job_queue.h"

namespace prometheus {
class Counter;
class Gauge;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace protuner {

class CoordinatorMetrics {
 public:
  // Registers the families on `registry`, which must outlive this.
  explicit CoordinatorMetrics(prometheus::Registry &registry);

  void lease(bool held);
  void takeover();
  void suite_queued();
  void suite_finished();
  void app_finished(farm::AppPhase phase);
  void queue_depths(const farm::QueueDepths &depths);
  // One app's progress at server time `now_ms`, with its baselines as stored in Redis.
  void app_progress(const std::string &suite, const std::string &app,
                    const farm::AppState &state,
                    const std::map<std::string, farm::MeasuredCandidate> &baselines,
                    int64_t now_ms);
  // A tick that failed (Redis away, an unreadable record); it is repeated.
  void tick_error();

 private:
  prometheus::Gauge *lease_held_ = nullptr;
  prometheus::Counter *takeovers_ = nullptr;
  prometheus::Counter *suites_queued_ = nullptr;
  prometheus::Counter *suites_finished_ = nullptr;
  prometheus::Counter *apps_finished_[5] = {};  // by AppPhase: done and failed only
  prometheus::Counter *tick_errors_ = nullptr;
  prometheus::Gauge *waiting_ = nullptr;
  prometheus::Gauge *running_ = nullptr;
  prometheus::Gauge *dead_ = nullptr;
  prometheus::Family<prometheus::Gauge> *app_best_ = nullptr;
  prometheus::Family<prometheus::Gauge> *app_speedup_ = nullptr;
  prometheus::Family<prometheus::Gauge> *app_measurements_ = nullptr;
  prometheus::Family<prometheus::Gauge> *app_failures_ = nullptr;
  prometheus::Family<prometheus::Gauge> *app_budget_used_ = nullptr;
};

}  // namespace protuner
