// The measurer daemon: serves measurement requests from any number of searchers over
// ZeroMQ (wire.h) and runs them strictly one at a time on a MeasurementBackend, because
// two measurements on one machine disturb each other's timings.
//
// Two threads. The I/O thread owns the ROUTER socket: it queues requests, answers and
// sends heartbeats, and refuses malformed messages, so a client sees the daemon alive even
// while a measurement takes minutes. The worker thread runs the backend, one request at a
// time, and hands each result back over an inproc PAIR socket (ZeroMQ sockets are not
// thread-safe, so neither thread touches the other's socket).
//
// Thread safety: construct on one thread, call run() on one thread; stop() and stats() may
// be called from any thread, stop() also from a signal handler. Not copyable or movable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "measurer/measurement.h"
#include "measurer/wire.h"

namespace prometheus {
class Registry;
}

namespace protuner {

struct MeasurerDaemonOptions {
  // ZeroMQ endpoint to bind; "tcp://127.0.0.1:*" picks a free port (see endpoint()).
  std::string bind = "tcp://*:5555";
  // Heartbeats to every client heard within kLiveness intervals.
  std::chrono::milliseconds heartbeat_interval = wire::kDefaultHeartbeatInterval;
  // Forces require_smt_off on every request (the farm's policy), whatever the client asked.
  bool require_smt_off = false;
};

class MeasurerDaemon {
 public:
  // Counters for logs and tests; the same numbers are exported as Prometheus metrics.
  struct Stats {
    int64_t measured = 0;     // results of the backend sent back
    int64_t bad_requests = 0;  // measure messages whose body was refused
    int64_t wire_errors = 0;  // malformed messages answered with an error
    int64_t max_queue_length = 0;
  };

  // Binds the socket now, so endpoint() is known before run(). Registers metrics on
  // `metrics` when given (it must outlive the daemon). Throws IoError naming the endpoint
  // when it cannot be bound, ConfigError for a bad option.
  MeasurerDaemon(MeasurerDaemonOptions options, std::unique_ptr<MeasurementBackend> backend,
                 prometheus::Registry *metrics = nullptr);
  ~MeasurerDaemon();
  MeasurerDaemon(const MeasurerDaemon &) = delete;
  MeasurerDaemon &operator=(const MeasurerDaemon &) = delete;

  // The endpoint actually bound, e.g. "tcp://127.0.0.1:40123".
  const std::string &endpoint() const { return endpoint_; }

  // Serves until stop(). On stop, queued and running requests get a retryable error reply
  // (clients retry them elsewhere at once); run() returns once the running measurement ends.
  void run();
  // Async-signal-safe (one lock-free atomic store); run() notices within 100 ms.
  void stop() { stop_requested_.store(true); }

  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string endpoint_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace protuner
