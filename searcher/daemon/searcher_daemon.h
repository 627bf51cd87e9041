// The farm's searcher daemon (`protuner searcher`): takes jobs from the job queue
// (common/farm/job_queue.h), runs each, and writes what it measures to Redis as it goes.
//
// A search job runs `protuner tune`'s per-app search (searcher/search/app_tuning.h) on the
// app fetched by hash from Redis, from the app's budget clock (common/farm/app_state.h:
// the first search job of an app starts it), measuring through the measurers
// (MeasurerClient) behind the farm's shared cache (farm_backend.h), and stops a reserve
// before the app's deadline; measurements still running at the deadline are cancelled. A
// baselines job measures Halide's default, the generator's own schedule and Adams2019,
// each once per app, outside the budget.
//
// While a job runs, a thread heartbeats it to the queue every `heartbeat_interval` and
// watches the app: when the job has been handed to another searcher (this one was presumed
// dead), or the app is finished or cancelled, the job stops at once. A job is acknowledged
// only after everything it measured is in Redis and its summary is recorded; a job that
// fails, or a searcher that is stopped, gives the job back with the reason.
//
// A searcher that finds the queue empty joins a running app (common/farm/app_join.h: by
// `join`, the one improving fastest) by adding a job with a new seed to the queue, which it
// (or another free searcher) then takes: no searcher idles while an app has budget left.
//
// Thread safety: run() on one thread; stop() from any thread or a signal handler.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/farm/app_join.h"
#include "common/farm/job_queue.h"
#include "common/redis_options.h"
#include "searcher/measurement/measurer_client.h"
#include "searcher/search/app_tuning.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace protuner {

struct SearcherDaemonOptions {
  // The consumer name in the queue's group; empty: <hostname>-<pid>-<random>.
  std::string name;
  // Measurer daemons' endpoints. Empty: the measurers registered in Redis
  // (common/farm/measurer_registry.h); each app measures on one host class, kept in its
  // record, and the list follows the registry at every job heartbeat. A searcher takes no
  // job while no measurer is registered.
  std::vector<std::string> measurers;
  ClientOptions client;
  // Where fetched generator libraries are cached; empty: protuner's cache folder.
  std::string library_cache_dir;
  std::string algorithm;  // a search_registry.h name; empty: kDefaultSearch
  // The CPUs the measurers time schedules on: the parallelism the space plans for; 0:
  // this host's hardware concurrency.
  int cores = 0;
  // A job's first search seed is this plus the job's seed, so (suite, app, seed) always
  // runs the same searches.
  uint64_t base_seed = 1;
  TuneSettings tune;
  farm::JobQueueSettings queue;
  // Heartbeats to the queue (well within queue.reclaim_after) and checks of the app.
  std::chrono::milliseconds heartbeat_interval{3000};
  // How long one take() waits for a job before checking stop(), or joining an app.
  std::chrono::milliseconds take_block{2000};
  // Which app this searcher joins when the queue is empty.
  farm::JoinSettings join;
};

class SearcherDaemon {
 public:
  struct Stats {
    int64_t jobs_done = 0;       // acknowledged
    int64_t jobs_given_back = 0;  // failed or interrupted, handed back with a reason
    int64_t jobs_lost = 0;       // taken over by another searcher while running here
    int64_t measured = 0;        // new measurements written to Redis
    int64_t cache_hits = 0;      // measurements found in Redis
    int64_t joins = 0;           // search jobs added to running apps (app_join.h)
  };

  // Connects to Redis and checks its layout (throws IoError, SchemaError), connects to the
  // measurers (throws ConfigError for a bad endpoint or option). Registers its metrics
  // (searcher_metrics.h) on `metrics` when given; it must outlive the daemon.
  SearcherDaemon(RedisOptions redis, SearcherDaemonOptions options,
                 prometheus::Registry *metrics = nullptr);
  ~SearcherDaemon();
  SearcherDaemon(const SearcherDaemon &) = delete;
  SearcherDaemon &operator=(const SearcherDaemon &) = delete;

  // Takes and runs jobs until stop(); a Redis outage is waited out. A job running at stop()
  // is given back; run() then returns.
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
