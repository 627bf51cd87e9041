// The coordinator's lease and its tick: queue new suites, finish due apps, finish suites,
// count dead-lettered search jobs as done (coordinator_daemon.h).
#include "coordinator/coordinator_daemon.h"

#include <spdlog/spdlog.h>

#include <mutex>
#include <thread>

#include "common/errors.h"
#include "common/host_facts.h"
#include "common/farm/app_state.h"
#include "common/farm/job_queue.h"
#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/farm/server_time.h"
#include "common/farm/suite_record.h"
#include "common/redis_client.h"
#include "coordinator/coordinator_metrics.h"

namespace protuner {
namespace {

using std::chrono::milliseconds;

// Dead letters are read every this many ticks: they are rare, and reading them is a scan.
constexpr int kDeadLetterEveryTicks = 10;

// KEYS: lease. ARGV: name, lease ms. 1 when `name` holds the lease after the call.
constexpr const char *kAcquireLease = R"(
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
)";

// KEYS: lease. ARGV: name.
constexpr const char *kReleaseLease = R"(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
)";

// The jobs of one app: its baselines, then one search per seed.
std::vector<farm::Job> jobs_of(const std::string &suite, const farm::AppRecord &app) {
  std::vector<farm::Job> jobs{farm::job_of(suite, app, farm::JobKind::kBaselines)};
  for (int seed = 0; seed < app.seeds; ++seed) {
    jobs.push_back(farm::job_of(suite, app, farm::JobKind::kSearch, seed));
  }
  return jobs;
}

}  // namespace

struct CoordinatorDaemon::Impl {
  Impl(RedisOptions redis_options, CoordinatorOptions opts, prometheus::Registry *registry)
      : options(std::move(opts)), redis(std::move(redis_options)) {
    if (registry) metrics = std::make_unique<CoordinatorMetrics>(*registry);
    if (options.name.empty()) options.name = unique_process_name();
    if (options.lease.count() <= 0 || options.tick.count() <= 0 || options.tick * 2 > options.lease) {
      throw ConfigError("coordinator: the tick (" + std::to_string(options.tick.count()) +
                        " ms) must be positive and at most half the lease (" +
                        std::to_string(options.lease.count()) + " ms)");
    }
    farm::check_layout(redis);
    queue = std::make_unique<farm::JobQueue>(redis);
  }

  bool hold_lease() {
    return redis.eval(acquire, {farm::coordinator_lease_key()},
                      {options.name, std::to_string(options.lease.count())})
               .integer == 1;
  }
  void release_lease() {
    redis.eval(release, {farm::coordinator_lease_key()}, {options.name});
  }

  void tick(int64_t n);
  void coordinate_suite(const std::string &id);
  void settle_dead_letters();

  CoordinatorOptions options;
  RedisClient redis;
  std::unique_ptr<farm::JobQueue> queue;
  RedisScript acquire{"coordinator lease", kAcquireLease};
  RedisScript release{"coordinator lease release", kReleaseLease};
  // The last dead-letter entry settled by this process, so each is read once (a restarted
  // coordinator reads them all again, which is harmless: record_job_done counts once).
  std::string dead_letter_cursor;
  std::unique_ptr<CoordinatorMetrics> metrics;  // when the daemon was given a registry

  mutable std::mutex stats_mutex;
  Stats stats;
};

CoordinatorDaemon::CoordinatorDaemon(RedisOptions redis, CoordinatorOptions options,
                                     prometheus::Registry *metrics)
    : impl_(std::make_unique<Impl>(std::move(redis), std::move(options), metrics)) {}

CoordinatorDaemon::~CoordinatorDaemon() = default;

const std::string &CoordinatorDaemon::name() const { return impl_->options.name; }

CoordinatorDaemon::Stats CoordinatorDaemon::stats() const {
  std::lock_guard<std::mutex> lock(impl_->stats_mutex);
  return impl_->stats;
}

void CoordinatorDaemon::run() {
  Impl &d = *impl_;
  spdlog::info("coordinator {}: coordinating suites in {}", d.options.name, d.redis.endpoint());
  bool holding = false, outage = false;
  for (int64_t n = 0; !stop_requested_.load(); ++n) {
    try {
      const bool held = d.hold_lease();
      if (held && !holding) {
        spdlog::info("coordinator {}: holding the lease", d.options.name);
        std::lock_guard<std::mutex> lock(d.stats_mutex);
        ++d.stats.takeovers;
        if (d.metrics) d.metrics->takeover();
      } else if (!held && holding) {
        spdlog::warn("coordinator {}: lost the lease to another coordinator", d.options.name);
      }
      holding = held;
      if (d.metrics) d.metrics->lease(holding);
      if (outage) spdlog::info("coordinator {}: Redis is back", d.options.name);
      outage = false;
      if (holding) d.tick(n);
    } catch (const Error &e) {
      // Redis is away, or a record is unreadable: every step is repeated on the next tick.
      if (!outage) spdlog::warn("coordinator {}: {}", d.options.name, e.what());
      outage = true;
      if (d.metrics) d.metrics->tick_error();
    }
    // Sleeps in short steps to see stop() promptly.
    const auto wake = std::chrono::steady_clock::now() + d.options.tick;
    while (!stop_requested_.load() && std::chrono::steady_clock::now() < wake) {
      std::this_thread::sleep_for(std::min(d.options.tick, milliseconds(50)));
    }
  }
  if (holding) {
    try {
      d.release_lease();
    } catch (const Error &e) {
      spdlog::warn("coordinator {}: cannot release the lease (it lapses by itself): {}",
                   d.options.name, e.what());
    }
  }
  spdlog::info("coordinator {}: stopped", d.options.name);
}

void CoordinatorDaemon::Impl::tick(int64_t n) {
  for (const std::string &id : farm::suite_ids(redis)) {
    try {
      coordinate_suite(id);
    } catch (const farm::RecordFormatError &e) {
      // One unreadable suite must not hold up the others; it is reported every tick.
      spdlog::error("coordinator {}: suite {}: {}", options.name, id, e.what());
    }
  }
  if (n % kDeadLetterEveryTicks == 0) settle_dead_letters();
  if (metrics) metrics->queue_depths(queue->depths());
}

void CoordinatorDaemon::Impl::coordinate_suite(const std::string &id) {
  const std::optional<std::string> phase = farm::suite_phase(redis, id);
  if (phase == "done" || phase == "cancelled") return;
  const std::optional<farm::SuiteRecord> found = farm::find_suite(redis, id);
  if (!found) throw farm::RecordFormatError(farm::suite_key(id) + " is indexed but missing");
  const farm::SuiteRecord &suite = *found;
  if (!phase) {
    int queued = 0;
    for (const farm::AppRecord &app : suite.apps) {
      queued += farm::queue_app(redis, id, app.name, app.budget_ms, jobs_of(id, app)) ? 1 : 0;
    }
    redis.command({"HSET", farm::suite_state_key(id), "schema",
                   std::to_string(farm::kLayoutVersion), "phase", "queued"});
    spdlog::info("coordinator {}: queued suite {} ({} apps, {} new)", options.name, id,
                 suite.apps.size(), queued);
    std::lock_guard<std::mutex> lock(stats_mutex);
    ++stats.suites_queued;
    if (metrics) metrics->suite_queued();
    return;
  }
  bool all_final = true;
  const int64_t now_ms = metrics ? farm::server_now_ms(redis) : 0;
  for (const farm::AppRecord &app : suite.apps) {
    const auto state = farm::read_app(redis, id, app.name);
    if (state && farm::is_final(state->phase)) continue;
    const auto finished = farm::finish_app_if_due(redis, id, app.name);
    // Read again once finished, for the log line and the app's final series.
    const auto final_state = finished ? farm::read_app(redis, id, app.name) : state;
    if (metrics && final_state) {
      metrics->app_progress(id, app.name, *final_state, farm::read_baselines(redis, id, app.name),
                            now_ms);
    }
    if (!finished) {
      all_final = false;
      continue;
    }
    spdlog::info("coordinator {}: {}/{} is {}{}", options.name, id, app.name,
                 farm::app_phase_name(*finished),
                 final_state && final_state->best_ms
                     ? fmt::format(", best {:.3f} ms", *final_state->best_ms)
                 : final_state && !final_state->error.empty() ? ": " + final_state->error
                                                              : std::string());
    std::lock_guard<std::mutex> lock(stats_mutex);
    ++stats.apps_finished;
    if (metrics) metrics->app_finished(*finished);
  }
  if (!all_final) return;
  redis.command({"EVAL",
                 std::string(farm::kServerNowLua) +
                     "redis.call('HSET', KEYS[1], 'phase', 'done', 'finished_ms', now) return 1",
                 "1", farm::suite_state_key(id)});
  spdlog::info("coordinator {}: suite {} is done", options.name, id);
  std::lock_guard<std::mutex> lock(stats_mutex);
  ++stats.suites_finished;
  if (metrics) metrics->suite_finished();
}

void CoordinatorDaemon::Impl::settle_dead_letters() {
  for (const farm::DeadLetter &dead : queue->dead_letters(100, dead_letter_cursor)) {
    dead_letter_cursor = dead.entry_id;
    farm::Job job;
    try {
      job = farm::job_from_json(dead.job, farm::jobs_dead_letter_stream() + " " + dead.entry_id);
    } catch (const Error &) {
      continue;  // unreadable: no app to count it against
    }
    if (job.kind != farm::JobKind::kSearch) continue;
    farm::JobSummary summary;
    summary.seed = job.seed;
    summary.searcher = dead.consumer;
    summary.errors = dead.reasons;
    summary.errors.insert(summary.errors.begin(),
                          "dead-lettered after " + std::to_string(dead.deliveries) + " deliveries");
    if (farm::record_job_done(redis, job.suite, job.app, summary)) {
      spdlog::warn("coordinator {}: {}/{} seed {} was dead-lettered; counted as done", options.name,
                   job.suite, job.app, job.seed);
    }
  }
}

}  // namespace protuner
