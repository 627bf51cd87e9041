// A measurer daemon whose measurement is a sleep, for the simulated-farm benchmark
// (tests/bench/simulated_farm.sh): many measurers on one machine, each costing no CPU while
// it "measures", so the farm's own costs (coordinator, Redis, searchers' requests, the
// measurer service's queueing and heartbeats) and the measurers' utilisation can be seen at
// sizes this machine cannot measure for real. Everything but the measurement is the
// product's: the service (measurer_service.h) with its ZeroMQ daemon, its registration in
// Redis, and the fetching and hash check of the app's library.
//
// Each request sleeps a duration drawn uniformly from --sleep-seconds MIN,MAX and answers
// ok with a runtime that is a fixed function of the schedule (the same schedule always
// "runs" the same time, so the farm's caches and bests behave as with real measurements).
//
// Usage: simulated_measurerd --redis URL [--sleep-seconds 2.5,7.5] [--seed N]
//                            [every protuner-measurerd service flag]
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "common/errors.h"
#include "common/log.h"
#include "common/stable_hash.h"
#include "measurer/cache_key.h"
#include "measurer/measurer_service.h"

namespace protuner {
namespace {


class SleepingBackend : public MeasurementBackend {
 public:
  SleepingBackend(double min_seconds, double max_seconds, uint64_t seed, HostFacts host,
                  std::vector<int> cpus)
      : sleep_(min_seconds, max_seconds),
        rng_(seed),
        host_(std::move(host)),
        cpus_(std::move(cpus)) {}

  MeasureResult measure(const MeasureRequest &request) override {
    double seconds;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seconds = sleep_(rng_);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    // 1 to 10 ms, by the schedule (or the baseline's kind).
    const std::string what = request.schedule.kind == ScheduleKind::kProtuner
                                 ? request.schedule.schedule_json
                                 : std::to_string(static_cast<int>(request.schedule.kind)) +
                                       request.schedule.autoscheduler;
    const double ms = 1.0 + static_cast<double>(stable_hash(what) % 9000) / 1000.0;
    MeasureResult result;
    result.status = MeasureStatus::kOk;
    // The demo suite's measurers compile for 37% of their busy time (docs/RESULTS.md,
    // tests/bench/measurer_time.sh).
    result.compile_seconds = 0.37 * seconds;
    result.timing.samples_ms.assign(10, ms);
    result.timing.min_ms = result.timing.median_ms = ms;
    result.timing.confirmed = true;
    result.host = host_;
    result.cpus = cpus_;
    result.allocator = request.settings.allocator;
    return result;
  }

 private:
  std::mutex mutex_;
  std::uniform_real_distribution<double> sleep_;
  std::mt19937_64 rng_;
  HostFacts host_;
  std::vector<int> cpus_;
};

}  // namespace
}  // namespace protuner

int main(int argc, char **argv) {
  using namespace protuner;
  CLI::App cli{"simulated_measurerd: a farm measurer whose measurement is a sleep (benchmarks)"};
  MeasurerServiceOptions service;
  int heartbeat_ms = 0;
  add_measurer_service_options(cli, service, heartbeat_ms);
  // 2.5 to 7.5 s: a mean of 5 s, the demo suite's measurer busy seconds per request
  // (docs/RESULTS.md, tests/bench/measurer_time.sh).
  std::vector<double> sleep_seconds{2.5, 7.5};
  uint64_t seed = static_cast<uint64_t>(getpid());
  std::string cache_dir;
  cli.add_option("--sleep-seconds", sleep_seconds, "MIN,MAX: each measurement sleeps uniformly")
      ->delimiter(',')
      ->expected(2)
      ->capture_default_str();
  cli.add_option("--seed", seed, "the sleeps' random seed (default: the process id)");
  cli.add_option("--cache-dir", cache_dir, "where fetched libraries go (default: protuner's)");
  CLI11_PARSE(cli, argc, argv);
  if (sleep_seconds[0] < 0 || sleep_seconds[1] < sleep_seconds[0]) {
    std::cerr << "simulated_measurerd: --sleep-seconds wants 0 <= MIN <= MAX\n";
    return 64;
  }
  try {
    init_logging(service.log_level);
    MeasuringHost host{
        detect_host_facts(), {0}, cache_dir.empty() ? default_cache_dir() : cache_dir};
    spdlog::info("simulated measurer: each measurement sleeps {} to {} s", sleep_seconds[0],
                 sleep_seconds[1]);
    auto backend = std::make_unique<SleepingBackend>(sleep_seconds[0], sleep_seconds[1], seed,
                                                     host.facts, host.cpus);
    return serve_measurer(service, heartbeat_ms, std::move(backend), host);
  } catch (const Error &e) {
    std::cerr << "simulated_measurerd: " << e.what() << "\n";
    return 2;
  }
}
