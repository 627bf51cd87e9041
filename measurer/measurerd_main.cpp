// `protuner-measurerd`: one measurer daemon per measuring host (or per set of cores). Thin:
// it parses options, builds the isolated measurer, and serves it (measurer_service.h: the
// metrics endpoint, the registration in the farm's Redis when given one) until SIGINT or
// SIGTERM.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "common/errors.h"
#include "common/log.h"
#include "measurer/isolated_measurer.h"
#include "measurer/measurer_service.h"

namespace {

std::string join(const std::vector<int> &v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out.empty() ? "all of this process's" : out;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace protuner;
  CLI::App cli{"protuner-measurerd: measures candidate schedules for searchers, one at a time"};
  MeasurerServiceOptions service;
  IsolatedMeasurerOptions measurer_options;
  int heartbeat_ms = 0;
  add_measurer_service_options(cli, service, heartbeat_ms);
  cli.add_option("--cache-dir", measurer_options.cache_dir,
                 "reference outputs and cached results (default: protuner's cache folder)");
  cli.add_option("--cpus", measurer_options.cpus,
                 "CPUs to pin measurements to, e.g. 2,3 (default: this process's affinity)")
      ->delimiter(',');
  cli.add_flag(
      "--no-cache", [&](int64_t) { measurer_options.use_result_cache = false; },
      "measure even when a cached result exists (repeatability runs, tests)");
  CLI11_PARSE(cli, argc, argv);

  try {
    init_logging(service.log_level);
    auto backend = std::make_unique<IsolatedMeasurer>(measurer_options);
    spdlog::info("measurer: CPUs {}, cache {}{}, host {} (SMT {})", join(backend->cpus()),
                 backend->cache_dir(),
                 measurer_options.use_result_cache ? "" : " (results not cached)",
                 backend->host().cpu_model, backend->host().smt);
    const MeasuringHost host{backend->host(), backend->cpus(), backend->cache_dir()};
    return serve_measurer(service, heartbeat_ms, std::move(backend), host);
  } catch (const protuner::Error &e) {
    std::cerr << "protuner-measurerd: " << e.what() << "\n";
    return 2;
  }
}
