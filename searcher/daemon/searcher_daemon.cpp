// The searcher daemon's loop and its two kinds of jobs (searcher_daemon.h).
#include "searcher/daemon/searcher_daemon.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/errors.h"
#include "common/farm/app_state.h"
#include "common/farm/job_progress.h"
#include "common/farm/library_store.h"
#include "common/farm/measurer_registry.h"
#include "common/farm/redis_schema.h"
#include "common/host_facts.h"
#include "common/redis_client.h"
#include "measurer/cache_key.h"
#include "measurer/measure_json.h"
#include "searcher/daemon/farm_backend.h"
#include "searcher/daemon/searcher_metrics.h"
#include "searcher/search/search_registry.h"

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After a Redis failure in the take loop, wait this long before asking again (the client
// itself reconnects with backoff within one call).
constexpr milliseconds kOutageRetry{1000};

std::string job_label(const farm::Delivery &d) {
  return fmt::format("{}/{} {} job (seed {}, entry {}, delivery {})", d.job.suite, d.job.app,
                     farm::job_kind_name(d.job.kind), d.job.seed, d.entry_id, d.deliveries);
}

// Why a job stopped before its end, as its watcher saw it.
enum class Interruption { kNone, kLost, kAppFinished, kStopping };

// Heartbeats one job to the queue and watches its app, on its own thread with its own
// Redis connection, until the job ends. Sets `stop` (the search's) and cancels the
// measurements when the job must end early. With a `host_class`, it also gives the client
// the live registered measurers of that class at every heartbeat, so a measurer that
// joins is used and one that died is dropped within a heartbeat. The job's latest
// progress (set_progress) goes to Redis with the next heartbeat (job_progress.h).
class JobWatcher {
 public:
  JobWatcher(const RedisOptions &redis, const farm::JobQueueSettings &queue,
             const farm::Delivery &delivery, std::string consumer, milliseconds interval,
             MeasurerClient &client, const std::atomic<bool> &daemon_stopping, bool watch_app,
             std::string host_class)
      : delivery_(delivery),
        consumer_(std::move(consumer)),
        interval_(interval),
        client_(client),
        daemon_stopping_(daemon_stopping),
        watch_app_(watch_app),
        host_class_(std::move(host_class)) {
    thread_ = std::thread([this, redis, queue] { loop(redis, queue); });
  }
  ~JobWatcher() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  const std::atomic<bool> &stop_flag() const { return stop_; }
  Interruption interruption() const { return interruption_.load(); }
  // Any thread.
  void set_progress(const farm::JobProgress &progress) {
    std::lock_guard<std::mutex> lock(progress_mutex_);
    progress_ = progress;
  }

 private:
  void interrupt(Interruption why) {
    Interruption none = Interruption::kNone;
    interruption_.compare_exchange_strong(none, why);
    stop_.store(true);
    client_.cancel_all();
  }

  void loop(const RedisOptions &options, const farm::JobQueueSettings &settings) {
    std::unique_ptr<RedisClient> redis;
    std::unique_ptr<farm::JobQueue> queue;
    auto next_beat = Clock::now() + interval_;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        // Wakes every 100 ms to see a stopping daemon promptly.
        cv_.wait_for(lock, milliseconds(100), [this] { return done_; });
        if (done_) return;
      }
      if (daemon_stopping_.load() && !stop_.load()) interrupt(Interruption::kStopping);
      if (Clock::now() < next_beat) continue;
      next_beat = Clock::now() + interval_;
      try {
        if (!redis) {
          redis = std::make_unique<RedisClient>(options);
          queue = std::make_unique<farm::JobQueue>(*redis, settings);
        }
        if (!queue->heartbeat(delivery_, consumer_)) {
          spdlog::warn("searcher {}: {} was handed to another searcher; stopping it", consumer_,
                       job_label(delivery_));
          interrupt(Interruption::kLost);
          continue;
        }
        write_progress(*redis);
        if (!host_class_.empty()) {
          // None live: the client keeps the ones it has and waits for them to come back,
          // rather than have no measurer at all.
          auto endpoints = farm::endpoints_of_class(farm::live_measurers(*redis), host_class_);
          if (!endpoints.empty()) client_.set_endpoints(std::move(endpoints));
        }
        if (!watch_app_) continue;
        const auto app = farm::read_app(*redis, delivery_.job.suite, delivery_.job.app);
        if (app && farm::is_final(app->phase) && !stop_.load()) {
          spdlog::info("searcher {}: {}/{} is {}; stopping its job", consumer_,
                       delivery_.job.suite, delivery_.job.app, farm::app_phase_name(app->phase));
          interrupt(Interruption::kAppFinished);
        }
      } catch (const Error &e) {
        // Redis is away: the job goes on, its results wait in the client's retries; the
        // queue hands it to another searcher only after reclaim_after without a heartbeat.
        spdlog::warn("searcher {}: cannot heartbeat {}: {}", consumer_, job_label(delivery_),
                     e.what());
        redis.reset();
        queue.reset();
      }
    }
  }

  // Writes the progress set since the last write, if any.
  void write_progress(RedisClient &redis) {
    std::optional<farm::JobProgress> progress;
    {
      std::lock_guard<std::mutex> lock(progress_mutex_);
      progress.swap(progress_);
    }
    if (progress)
      farm::record_job_progress(redis, delivery_.job.suite, delivery_.job.app, *progress);
  }

  const farm::Delivery &delivery_;
  std::string consumer_;
  milliseconds interval_;
  MeasurerClient &client_;
  const std::atomic<bool> &daemon_stopping_;
  const bool watch_app_;  // search jobs end with their app; baselines are measured anyway
  const std::string host_class_;  // of the registered measurers to use; "": fixed ones
  std::atomic<bool> stop_{false};
  std::atomic<Interruption> interruption_{Interruption::kNone};
  std::mutex progress_mutex_;
  std::optional<farm::JobProgress> progress_;  // set, not yet written
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// What a job ended with, for the loop to acknowledge or give back.
struct JobEnd {
  bool finished = false;  // acknowledge; otherwise give back with `reason`
  std::string reason;
};

}  // namespace

struct SearcherDaemon::Impl {
  Impl(RedisOptions redis_options, SearcherDaemonOptions opts, prometheus::Registry *registry)
      : options(std::move(opts)),
        redis_options(std::move(redis_options)),
        redis(this->redis_options),
        client(options.measurers, options.client) {
    if (registry) metrics = std::make_unique<SearcherMetrics>(*registry);
    discover = options.measurers.empty();
    if (options.name.empty()) options.name = unique_process_name();
    if (options.algorithm.empty()) options.algorithm = kDefaultSearch;
    if (options.library_cache_dir.empty()) {
      options.library_cache_dir = default_library_cache_dir();
    }
    if (options.cores <= 0) {
      options.cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    }
    make_search(options.algorithm);  // throws ConfigError for an unknown name, now
    if (options.heartbeat_interval.count() <= 0 ||
        options.heartbeat_interval * 2 > options.queue.reclaim_after) {
      throw ConfigError("searcher: the heartbeat interval (" +
                        std::to_string(options.heartbeat_interval.count()) +
                        " ms) must be positive and at most half of reclaim_after (" +
                        std::to_string(options.queue.reclaim_after.count()) +
                        " ms), or a live searcher's jobs are taken from it");
    }
    farm::check_layout(redis);
    queue = std::make_unique<farm::JobQueue>(redis, options.queue);
  }

  std::string use_app_measurers(const farm::Job &job, const std::atomic<bool> &stopping);
  // `host_class`: of the app's registered measurers; "" for fixed ones.
  JobEnd run_search(const farm::Delivery &delivery, JobWatcher &watcher,
                    const std::string &host_class);
  JobEnd run_baselines(const farm::Delivery &delivery, JobWatcher &watcher,
                       const std::string &host_class);
  AppSpec fetch_app(const farm::Job &job);
  // With the queue empty: adds a job to the app `options.join` chooses, if any.
  void join_an_app();
  void finish(const farm::Delivery &delivery, const JobEnd &end, Interruption interruption);

  SearcherDaemonOptions options;
  RedisOptions redis_options;
  RedisClient redis;
  MeasurerClient client;
  std::unique_ptr<farm::JobQueue> queue;
  std::unique_ptr<SearcherMetrics> metrics;  // when the daemon was given a registry
  // No endpoints given: the measurers are the ones registered in Redis.
  bool discover = false;
  std::string join_error;  // why the last join failed, or ""

  mutable std::mutex stats_mutex;
  Stats stats;
};

SearcherDaemon::SearcherDaemon(RedisOptions redis, SearcherDaemonOptions options,
                               prometheus::Registry *metrics)
    : impl_(std::make_unique<Impl>(std::move(redis), std::move(options), metrics)) {}

SearcherDaemon::~SearcherDaemon() = default;

const std::string &SearcherDaemon::name() const { return impl_->options.name; }

SearcherDaemon::Stats SearcherDaemon::stats() const {
  std::lock_guard<std::mutex> lock(impl_->stats_mutex);
  return impl_->stats;
}

void SearcherDaemon::run() {
  Impl &d = *impl_;
  spdlog::info("searcher {}: serving jobs from {} with {} measurer(s), {}, {} cores", d.options.name,
               d.redis.endpoint(), d.options.measurers.size(), d.options.algorithm,
               d.options.cores);
  bool outage = false, no_measurer = false;
  while (!stop_requested_.load()) {
    std::optional<farm::Delivery> delivery;
    try {
      // With measurers from the registry, a job is taken only when one is there to take it.
      if (d.discover && farm::live_measurers(d.redis).empty()) {
        if (!no_measurer) {
          spdlog::info("searcher {}: waiting for a measurer to register in {}", d.options.name,
                       d.redis.endpoint());
        }
        no_measurer = true;
        std::this_thread::sleep_for(kOutageRetry);
        continue;
      }
      no_measurer = false;
      delivery = d.queue->take(d.options.name, d.options.take_block);
      if (outage) spdlog::info("searcher {}: Redis is back", d.options.name);
      outage = false;
    } catch (const Error &e) {
      if (!outage) spdlog::warn("searcher {}: cannot take a job: {}", d.options.name, e.what());
      outage = true;
      std::this_thread::sleep_for(kOutageRetry);
      continue;
    }
    if (!delivery) {
      d.join_an_app();
      continue;
    }
    spdlog::info("searcher {}: took {}", d.options.name, job_label(*delivery));
    if (d.metrics) d.metrics->job_started();
    JobEnd end;
    Interruption interruption = Interruption::kNone;
    std::string host_class;
    try {
      if (d.discover) host_class = d.use_app_measurers(delivery->job, stop_requested_);
    } catch (const std::exception &e) {
      end = {false, e.what()};
    }
    if (d.discover && host_class.empty() && end.reason.empty()) {
      end = {false, "no live measurer of the app's host class is registered"};
    }
    if (!d.discover || !host_class.empty()) {
      JobWatcher watcher(d.redis_options, d.options.queue, *delivery, d.options.name,
                         d.options.heartbeat_interval, d.client, stop_requested_,
                         delivery->job.kind == farm::JobKind::kSearch, host_class);
      try {
        end = delivery->job.kind == farm::JobKind::kBaselines
                  ? d.run_baselines(*delivery, watcher, host_class)
                  : d.run_search(*delivery, watcher, host_class);
      } catch (const std::exception &e) {
        end = {false, e.what()};
      }
      interruption = watcher.interruption();
    }
    d.finish(*delivery, end, interruption);
  }
  const Stats s = stats();
  spdlog::info("searcher {}: stopped after {} jobs done, {} given back, {} lost", d.options.name,
               s.jobs_done, s.jobs_given_back, s.jobs_lost);
}

void SearcherDaemon::Impl::finish(const farm::Delivery &delivery, const JobEnd &end,
                                  Interruption interruption) {
  std::lock_guard<std::mutex> lock(stats_mutex);
  const auto ended = [&](JobOutcome outcome) {
    if (metrics) metrics->job_ended(delivery.job.kind, outcome);
  };
  try {
    if (interruption == Interruption::kLost) {
      ++stats.jobs_lost;  // its new holder acknowledges it
      ended(JobOutcome::kLost);
      return;
    }
    if (end.finished) {
      if (queue->ack(delivery, options.name)) {
        ++stats.jobs_done;
        ended(JobOutcome::kDone);
        spdlog::info("searcher {}: finished {}", options.name, job_label(delivery));
      } else {
        ++stats.jobs_lost;
        ended(JobOutcome::kLost);
      }
      return;
    }
    const std::string reason =
        interruption == Interruption::kStopping ? "the searcher was stopped" : end.reason;
    spdlog::warn("searcher {}: giving back {}: {}", options.name, job_label(delivery), reason);
    queue->give_up(delivery, options.name, options.name + ": " + reason);
    ++stats.jobs_given_back;
    ended(JobOutcome::kGivenBack);
  } catch (const Error &e) {
    ended(JobOutcome::kGivenBack);
    // Redis is away: the job is reclaimed once its heartbeats are missed.
    spdlog::error("searcher {}: cannot settle {}: {}", options.name, job_label(delivery), e.what());
  }
}

// Every job of an app measures on one host class, the first that any of its jobs found
// registered (the class with the most live measurers then), kept in the app's record:
// timings of different machines do not compare. Gives the client that class's live
// measurers and returns the class. When none of that class is live it waits for one, up
// to half of reclaim_after (the job is not heartbeaten meanwhile, so no other searcher
// takes it), which covers a measurer restarting; then returns "" (with a log line) and the
// job is given back.
std::string SearcherDaemon::Impl::use_app_measurers(const farm::Job &job,
                                                    const std::atomic<bool> &stopping) {
  const auto give_up_at = Clock::now() + options.queue.reclaim_after / 2;
  std::string host_class;
  for (;;) {
    const auto live = farm::live_measurers(redis);
    if (host_class.empty()) {
      host_class =
          farm::pin_host_class(redis, job.suite, job.app, farm::most_common_host_class(live));
    }
    const auto endpoints = farm::endpoints_of_class(live, host_class);
    if (!endpoints.empty()) {
      client.set_endpoints(endpoints);
      return host_class;
    }
    if (Clock::now() >= give_up_at || stopping.load()) break;
    std::this_thread::sleep_for(kOutageRetry);
  }
  spdlog::warn("searcher {}: no live measurer of {}/{}'s host class {}", options.name, job.suite,
               job.app, host_class);
  return "";
}

void SearcherDaemon::Impl::join_an_app() {
  std::optional<farm::Joined> joined;
  try {
    joined = farm::join_an_app(redis, options.join);
  } catch (const Error &e) {
    // Redis is away or a record is unreadable: the next empty take tries again; the same
    // reason is logged once.
    if (e.what() != join_error) {
      spdlog::warn("searcher {}: cannot join an app: {}", options.name, e.what());
    }
    join_error = e.what();
    return;
  }
  join_error.clear();
  if (!joined) return;
  {
    std::lock_guard<std::mutex> lock(stats_mutex);
    ++stats.joins;
  }
  if (metrics) metrics->joined();
  spdlog::info("searcher {}: the queue is empty; joining {}/{} with seed {} ({}: its best "
               "{:.3f}x faster per minute lately, {} job(s) unfinished)",
               options.name, joined->app.suite, joined->app.app, joined->seed,
               farm::join_policy_name(options.join.policy),
               std::exp(joined->app.improvement_per_minute), joined->app.unfinished_jobs);
}

AppSpec SearcherDaemon::Impl::fetch_app(const farm::Job &job) {
  AppSpec spec;
  spec.name = job.app;
  spec.library = farm::fetch_library(redis, job.library_sha256, options.library_cache_dir);
  spec.generator = job.generator;
  spec.params = job.params;
  return spec;
}

JobEnd SearcherDaemon::Impl::run_search(const farm::Delivery &delivery, JobWatcher &watcher,
                                        const std::string &host_class) {
  const farm::Job &job = delivery.job;
  const farm::AppStart start = farm::start_app(redis, job.suite, job.app);
  const farm::AppState &app = start.state;
  if (farm::is_final(app.phase)) {
    spdlog::info("searcher {}: {}/{} is already {}", options.name, job.suite, job.app,
                 farm::app_phase_name(app.phase));
    // Counted done like every other job of the app (a job joined just before the app
    // finished), so a final app's record says all of its jobs ended.
    farm::JobSummary summary;
    summary.seed = job.seed;
    summary.searcher = options.name;
    summary.errors = {std::string("not run: the app was already ") +
                      farm::app_phase_name(app.phase)};
    farm::record_job_done(redis, job.suite, job.app, summary);
    return {true, ""};
  }
  // The app's clock on this host: the server said `now_ms` a moment ago.
  const auto now = Clock::now();
  const auto app_start = now - milliseconds(start.now_ms - app.started_ms.value_or(start.now_ms));
  const auto app_deadline =
      now + milliseconds(app.deadline_ms.value_or(start.now_ms + app.budget_ms) - start.now_ms);
  const double budget_seconds = static_cast<double>(app.budget_ms) / 1000.0;

  const AppSpec spec = fetch_app(job);
  const PreparedApp prepared = prepare_app(spec, options.cores);
  client.clear_deadline();
  client.set_deadline(app_deadline);
  FarmBackend backend(client, redis, job.suite, job.app, job.library_sha256, host_class,
                      options.name, job.seed, metrics.get());
  BackendCandidateMeasurer measurer(
      backend, spec, "host",
      candidate_measure_settings(options.tune.measure, budget_seconds, options.tune));
  // Unlike tune_app, the first candidates get no stop line from the own and default
  // baselines: a suite measures its baselines anew, and a stop line is part of a
  // measurement's cache key, so one drawn from them would make every candidate of a
  // resubmitted app miss the farm-wide cache.
  farm::JobProgress progress;
  progress.seed = job.seed;
  progress.searcher = options.name;
  LoopProgress last;  // the latest report: the metrics count what each one adds
  const auto on_progress = [&](const LoopProgress &p) {
    if (metrics) metrics->searched(p.rollouts - last.rollouts, p.decisions - last.decisions);
    last = p;
    progress.rollouts = p.rollouts;
    progress.decisions = p.decisions;
    progress.measurements = p.measurements;
    progress.best_ms = p.best_ms;
    progress.elapsed_s = p.elapsed_seconds;
    watcher.set_progress(progress);
  };
  const SearchOutcome outcome =
      search_until(prepared, options.algorithm, options.base_seed + static_cast<uint64_t>(job.seed),
                   app_start, search_deadline(app_start, budget_seconds, options.tune), measurer,
                   options.tune, on_progress, &watcher.stop_flag());
  client.clear_deadline();
  {
    std::lock_guard<std::mutex> lock(stats_mutex);
    stats.measured += backend.stats().measured;
    stats.cache_hits += backend.stats().cache_hits;
  }
  if (watcher.interruption() != Interruption::kNone &&
      watcher.interruption() != Interruption::kAppFinished) {
    return {false, "interrupted"};
  }
  if (backend.write_failed()) {
    return {false, std::to_string(backend.stats().write_errors) +
                       " measurements could not be written to Redis"};
  }
  if (const auto failure = measurement_failure(measurer.tally())) {
    farm::note_app_error(redis, job.suite, job.app, *failure);
  }
  farm::JobSummary summary;
  summary.seed = job.seed;
  summary.searcher = options.name;
  if (outcome.best_result && outcome.best_result->ok()) {
    summary.best_ms = outcome.best_result->timing.min_ms;
  }
  summary.measurements = measurer.measurements();
  summary.errors = outcome.errors;
  progress.rollouts = std::max(progress.rollouts, outcome.rollouts);
  progress.measurements = summary.measurements;
  progress.best_ms = summary.best_ms;
  progress.elapsed_s = seconds_between(app_start, Clock::now());
  farm::record_job_progress(redis, job.suite, job.app, progress);
  farm::record_job_done(redis, job.suite, job.app, summary);
  spdlog::info("searcher {}: {}/{} seed {}: best {} ms after {} measurements and {} answers "
               "from the farm's caches",
               options.name, job.suite, job.app, job.seed,
               summary.best_ms ? fmt::format("{:.3f}", *summary.best_ms) : std::string("-"),
               backend.stats().measured, backend.stats().cache_hits);
  return {true, ""};
}

JobEnd SearcherDaemon::Impl::run_baselines(const farm::Delivery &delivery, JobWatcher &watcher,
                                           const std::string &host_class) {
  const farm::Job &job = delivery.job;
  struct Baseline {
    const char *name;
    ScheduleSpec schedule;
  };
  const std::vector<Baseline> baselines{
      {"default", {ScheduleKind::kDefault}},
      {"own", {ScheduleKind::kOwn}},
      {"Adams2019", {ScheduleKind::kAutoscheduler, "", "Adams2019"}},
  };
  if (const auto app = farm::read_app(redis, job.suite, job.app);
      app && app->phase == farm::AppPhase::kCancelled) {
    spdlog::info("searcher {}: {}/{} is cancelled; its baselines are not measured", options.name,
                 job.suite, job.app);
    return {true, ""};
  }
  const AppSpec spec = fetch_app(job);
  client.clear_deadline();
  // Through the farm's caches: a baseline some suite measured on this host class is not
  // measured again.
  FarmBackend backend(client, redis, job.suite, job.app, job.library_sha256, host_class,
                      options.name, job.seed, metrics.get());
  for (const Baseline &b : baselines) {
    if (watcher.stop_flag().load()) break;
    if (farm::has_baseline(redis, job.suite, job.app, b.name)) continue;
    MeasureRequest request;
    request.app = spec;
    request.schedule = b.schedule;
    request.target = "host";
    request.settings = options.tune.measure;
    const MeasureResult result = backend.measure(request);
    if (result.status == MeasureStatus::kCancelled) break;
    farm::MeasuredCandidate record;
    record.key = b.name;
    record.status = status_name(result.status);
    if (result.ok()) {
      record.min_ms = result.timing.min_ms;
      record.median_ms = result.timing.median_ms;
    }
    record.error = result.error.substr(0, result.error.find('\n'));
    record.searcher = options.name;
    record.result_json = result_to_json(result);
    farm::record_baseline(redis, job.suite, job.app, record);
    spdlog::info("searcher {}: {}/{} baseline {}: {}", options.name, job.suite, job.app, b.name,
                 result.ok() ? fmt::format("{:.3f} ms", result.timing.min_ms)
                             : std::string(status_name(result.status)) + ": " + record.error);
  }
  if (watcher.interruption() != Interruption::kNone &&
      watcher.interruption() != Interruption::kAppFinished) {
    return {false, "interrupted"};
  }
  return {true, ""};
}

}  // namespace protuner
