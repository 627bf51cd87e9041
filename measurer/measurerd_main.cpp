// `protuner-measurerd`: one measurer daemon per measuring host (or per set of cores). Thin:
// it parses options, builds the isolated measurer and the metrics endpoint, registers in
// the farm's Redis when given one, and runs MeasurerDaemon until SIGINT or SIGTERM.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/errors.h"
#include "common/host_facts.h"
#include "common/log.h"
#include "common/metrics_server.h"
#include "common/redis_options.h"
#include "measurer/cache_key.h"
#include "measurer/isolated_measurer.h"
#include "measurer/library_fetching_backend.h"
#include "measurer/measurer_daemon.h"
#include "measurer/measurer_registration.h"

namespace {

using namespace protuner;

std::atomic<MeasurerDaemon *> g_daemon{nullptr};

extern "C" void on_stop_signal(int) {
  // MeasurerDaemon::stop() is one lock-free atomic store: safe in a signal handler.
  if (MeasurerDaemon *d = g_daemon.load()) d->stop();
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string join(const std::vector<int> &v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out.empty() ? "all of this process's" : out;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App cli{"protuner-measurerd: measures candidate schedules for searchers, one at a time"};
  MeasurerDaemonOptions daemon_options;
  IsolatedMeasurerOptions measurer_options;
  int metrics_port = -1;
  std::string redis_url, name, advertise;
  int heartbeat_ms = static_cast<int>(daemon_options.heartbeat_interval.count());
  std::string log_level = "info";
  cli.add_option("--bind", daemon_options.bind,
                 "ZeroMQ endpoint to serve on; loopback only (tcp://127.0.0.1:PORT, ipc://PATH)")
      ->capture_default_str();
  cli.add_option("--metrics-port", metrics_port,
                 "port for Prometheus /metrics on 127.0.0.1 (0: any free port; "
                 "default: no metrics endpoint)");
  cli.add_option("--redis", redis_url,
                 "serve the farm whose Redis this is (redis://...): register there so searchers "
                 "find this measurer, and load only libraries stored there, by hash (default: "
                 "not registered; load the library paths requests name)");
  cli.add_option("--name", name, "name in the registry (default: host-pid-random)");
  cli.add_option("--advertise", advertise,
                 "endpoint searchers connect to (default: the endpoint bound)");
  cli.add_option("--cache-dir", measurer_options.cache_dir,
                 "reference outputs and cached results (default: protuner's cache folder)");
  cli.add_option("--cpus", measurer_options.cpus,
                 "CPUs to pin measurements to, e.g. 2,3 (default: this process's affinity)")
      ->delimiter(',');
  cli.add_flag("--no-cache", [&](int64_t) { measurer_options.use_result_cache = false; },
               "measure even when a cached result exists (repeatability runs, tests)");
  cli.add_flag("--require-smt-off", daemon_options.require_smt_off,
               "refuse to measure while SMT is on (the farm's policy)");
  MeasureLimits &limits = daemon_options.limits;
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
  cli.add_option("--log-level", log_level, "trace, debug, info, warn, error or off");
  CLI11_PARSE(cli, argc, argv);
  daemon_options.heartbeat_interval = std::chrono::milliseconds(heartbeat_ms);

  try {
    init_logging(log_level);
    auto backend = std::make_unique<IsolatedMeasurer>(measurer_options);
    spdlog::info("measurer: CPUs {}, cache {}{}, host {} (SMT {})", join(backend->cpus()),
                 backend->cache_dir(), measurer_options.use_result_cache ? "" : " (results not cached)",
                 backend->host().cpu_model, backend->host().smt);
    std::unique_ptr<MetricsServer> metrics;
    if (metrics_port >= 0) {
      metrics = std::make_unique<MetricsServer>("127.0.0.1:" + std::to_string(metrics_port));
      spdlog::info("measurer: metrics on port {}", metrics->port());
    }
    farm::MeasurerRecord record;
    record.name = name.empty() ? unique_process_name() : name;
    record.host_class = host_class_key(backend->host(), static_cast<int>(backend->cpus().size()));
    record.cpu_model = backend->host().cpu_model;
    record.smt = backend->host().smt;
    record.cpus = static_cast<int>(backend->cpus().size());
    record.heartbeat_ms = heartbeat_ms;
    record.started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    // Serving the farm, it loads only libraries submitted to its Redis, fetched by hash.
    std::unique_ptr<MeasurementBackend> served;
    if (redis_url.empty()) {
      served = std::move(backend);
    } else {
      const std::string libraries =
          (std::filesystem::path(backend->cache_dir()) / "libraries").string();
      spdlog::info("measurer: loading only libraries fetched by hash from {} into {}", redis_url,
                   libraries);
      served = std::make_unique<LibraryFetchingBackend>(std::move(backend),
                                                        parse_redis_url(redis_url), libraries);
    }
    MeasurerDaemon daemon(daemon_options, std::move(served),
                          metrics ? &metrics->registry() : nullptr);
    record.endpoint = advertise.empty() ? daemon.endpoint() : advertise;
    std::unique_ptr<MeasurerRegistration> registration;
    if (!redis_url.empty()) {
      RegistrationOptions registration_options;
      registration_options.interval = daemon_options.heartbeat_interval;
      registration = std::make_unique<MeasurerRegistration>(parse_redis_url(redis_url), record,
                                                            registration_options);
    }
    g_daemon.store(&daemon);
    install_stop_handlers();
    daemon.run();
    g_daemon.store(nullptr);
  } catch (const protuner::Error &e) {
    std::cerr << "protuner-measurerd: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
