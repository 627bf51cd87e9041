// What a measurer daemon process runs around its measurement backend: the command-line
// flags of the service, the /metrics endpoint, the ZeroMQ daemon (measurer_daemon.h), and,
// serving a farm, the backend that loads only libraries fetched by hash
// (library_fetching_backend.h) and the registration in Redis (measurer_registration.h).
// `protuner-measurerd` serves the isolated measurer with it; the farm benchmarks serve a
// measurer whose measurement is a sleep (tests/bench/simulated_measurerd.cpp), so that
// everything but the measurement itself is the product's own code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/host_facts.h"
#include "measurer/measurement.h"
#include "measurer/measurer_daemon.h"

namespace CLI {
class App;
}  // namespace CLI

namespace protuner {

struct MeasurerServiceOptions {
  MeasurerDaemonOptions daemon;
  // Port for Prometheus /metrics on 127.0.0.1; 0: any free port; negative: no endpoint.
  int metrics_port = -1;
  // The farm's Redis (redis://...): register there and load only libraries stored there.
  // Empty: not registered, and requests' library paths are loaded (local use).
  std::string redis_url;
  std::string name;       // in the registry; empty: unique_process_name()
  std::string advertise;  // the endpoint searchers connect to; empty: the one bound
  std::string log_level = "info";
};

// What the backend measures on, for the registry record and the start line.
struct MeasuringHost {
  HostFacts facts;
  std::vector<int> cpus;  // the CPUs measurements are pinned to
  std::string cache_dir;  // the backend's cache; fetched libraries go to <cache_dir>/libraries
};

// Adds the service's flags to `cli` (--bind, --metrics-port, --redis, --name, --advertise,
// --require-smt-off, the request limits, --heartbeat-ms, --log-level), writing `options`.
// `heartbeat_ms` receives --heartbeat-ms; pass it to serve_measurer.
void add_measurer_service_options(CLI::App &cli, MeasurerServiceOptions &options,
                                  int &heartbeat_ms);

// Serves `backend` on `host` until SIGINT or SIGTERM; returns the process's exit code (0
// after a clean stop). Throws protuner::Error (ConfigError, IoError, SchemaError) when the
// endpoint, the metrics port or Redis cannot be used.
int serve_measurer(MeasurerServiceOptions options, int heartbeat_ms,
                   std::unique_ptr<MeasurementBackend> backend, const MeasuringHost &host);

}  // namespace protuner
