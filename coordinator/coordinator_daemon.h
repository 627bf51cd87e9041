// The farm's coordinator (`protuner coordinator`): turns each submitted suite into jobs,
// finishes each app when its budget is spent or its jobs are done, and finishes suites.
// Everything it knows lives in Redis (common/farm/), so a restarted coordinator resumes
// where the last one stopped, and each step is safe to repeat: an app's jobs are queued in
// the same script that creates its record, so they are queued once however often the
// coordinator dies.
//
// At most one coordinator is active: it holds a lease in Redis (redis_schema.h:
// protuner:v1:coordinator, the holder's name with an expiry) and renews it every tick. A
// second one waits, and takes over within a lease period of the first one's death.
//
// Searchers reclaim the jobs of dead searchers themselves (job_queue.h); the coordinator
// counts a dead-lettered search job as done, with its reasons, so its app still finishes.
//
// Thread safety: run() on one thread; stop() from any thread or a signal handler.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "common/redis_options.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace protuner {

struct CoordinatorOptions {
  // The lease holder's name; empty: <hostname>-<pid>-<random>.
  std::string name;
  // The lease lapses this long after the last renewal; a standby takes over then.
  std::chrono::milliseconds lease{10000};
  // How often the coordinator looks at the suites and renews its lease (well within the
  // lease). An app finishes within one tick of its deadline.
  std::chrono::milliseconds tick{500};
};

class CoordinatorDaemon {
 public:
  struct Stats {
    int64_t suites_queued = 0;
    int64_t apps_finished = 0;
    int64_t suites_finished = 0;
    int64_t takeovers = 0;  // times this coordinator acquired the lease
  };

  // Connects to Redis and checks its layout: throws IoError, SchemaError, ConfigError.
  // Registers its metrics (coordinator_metrics.h) on `metrics` when given; it must outlive
  // the daemon.
  CoordinatorDaemon(RedisOptions redis, CoordinatorOptions options,
                    prometheus::Registry *metrics = nullptr);
  ~CoordinatorDaemon();
  CoordinatorDaemon(const CoordinatorDaemon &) = delete;
  CoordinatorDaemon &operator=(const CoordinatorDaemon &) = delete;

  // Coordinates until stop(), waiting out Redis outages; releases the lease on the way out.
  void run();
  // Async-signal-safe.
  void stop() { stop_requested_.store(true); }

  const std::string &name() const;
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace protuner
