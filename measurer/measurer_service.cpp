// See measurer_service.h.
#include "measurer/measurer_service.h"

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "common/metrics_server.h"
#include "common/redis_options.h"
#include "common/stop_signals.h"
#include "measurer/cache_key.h"
#include "measurer/library_fetching_backend.h"
#include "measurer/measurer_registration.h"

namespace protuner {
namespace {

std::atomic<MeasurerDaemon *> g_daemon{nullptr};

extern "C" void on_stop_signal(int) {
  // MeasurerDaemon::stop() is one lock-free atomic store: safe in a signal handler.
  if (MeasurerDaemon *d = g_daemon.load()) d->stop();
}

int64_t now_epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void add_measurer_service_options(CLI::App &cli, MeasurerServiceOptions &options,
                                  int &heartbeat_ms) {
  heartbeat_ms = static_cast<int>(options.daemon.heartbeat_interval.count());
  cli.add_option("--bind", options.daemon.bind,
                 "ZeroMQ endpoint to serve on; loopback only (tcp://127.0.0.1:PORT, ipc://PATH)")
      ->capture_default_str();
  cli.add_option("--metrics-port", options.metrics_port,
                 "port for Prometheus /metrics on 127.0.0.1 (0: any free port; "
                 "default: no metrics endpoint)");
  cli.add_option("--redis", options.redis_url,
                 "serve the farm whose Redis this is (redis://...): register there so searchers "
                 "find this measurer, and load only libraries stored there, by hash (default: "
                 "not registered; load the library paths requests name)");
  cli.add_option("--name", options.name, "name in the registry (default: host-pid-random)");
  cli.add_option("--advertise", options.advertise,
                 "endpoint searchers connect to (default: the endpoint bound)");
  cli.add_flag("--require-smt-off", options.daemon.require_smt_off,
               "refuse to measure while SMT is on (the farm's policy)");
  MeasureLimits &limits = options.daemon.limits;
  cli.add_option("--max-compile-seconds", limits.max_compile_seconds,
                 "most compile time a request may ask for; more is measured at this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--max-run-seconds", limits.max_run_seconds,
                 "most run time (reference check and timing) a request may ask for")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--max-memory-mb", limits.max_memory_mb,
                 "largest memory limit a request may ask for")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--max-samples", limits.max_samples, "most timed samples a request may ask for")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--heartbeat-ms", heartbeat_ms, "heartbeat interval to clients")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--log-level", options.log_level, "trace, debug, info, warn, error or off");
}

int serve_measurer(MeasurerServiceOptions options, int heartbeat_ms,
                   std::unique_ptr<MeasurementBackend> backend, const MeasuringHost &host) {
  options.daemon.heartbeat_interval = std::chrono::milliseconds(heartbeat_ms);
  std::unique_ptr<MetricsServer> metrics;
  if (options.metrics_port >= 0) {
    metrics = std::make_unique<MetricsServer>("127.0.0.1:" + std::to_string(options.metrics_port));
    spdlog::info("measurer: metrics on port {}", metrics->port());
  }
  // Serving the farm, it loads only libraries submitted to its Redis, fetched by hash.
  if (!options.redis_url.empty()) {
    const std::string libraries = (std::filesystem::path(host.cache_dir) / "libraries").string();
    spdlog::info("measurer: loading only libraries fetched by hash from {} into {}",
                 options.redis_url, libraries);
    backend = std::make_unique<LibraryFetchingBackend>(
        std::move(backend), parse_redis_url(options.redis_url), libraries);
  }
  MeasurerDaemon daemon(options.daemon, std::move(backend),
                        metrics ? &metrics->registry() : nullptr);
  std::unique_ptr<MeasurerRegistration> registration;
  if (!options.redis_url.empty()) {
    farm::MeasurerRecord record;
    record.name = options.name.empty() ? unique_process_name() : options.name;
    record.endpoint = options.advertise.empty() ? daemon.endpoint() : options.advertise;
    record.host_class = host_class_key(host.facts, static_cast<int>(host.cpus.size()));
    record.cpu_model = host.facts.cpu_model;
    record.smt = host.facts.smt;
    record.cpus = static_cast<int>(host.cpus.size());
    record.heartbeat_ms = heartbeat_ms;
    record.started_ms = now_epoch_ms();
    RegistrationOptions registration_options;
    registration_options.interval = options.daemon.heartbeat_interval;
    registration = std::make_unique<MeasurerRegistration>(parse_redis_url(options.redis_url),
                                                          record, registration_options);
  }
  g_daemon.store(&daemon);
  install_stop_handler(on_stop_signal);
  daemon.run();
  g_daemon.store(nullptr);
  return 0;
}

}  // namespace protuner
