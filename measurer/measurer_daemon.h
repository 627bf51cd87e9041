// The measurer daemon: serves measurement requests from any number of searchers over
// ZeroMQ (wire.h) and runs them strictly one at a time on a MeasurementBackend, because
// two measurements on one machine disturb each other's timings.
//
// Two threads. The I/O thread owns the ROUTER socket: it queues requests, answers and
// sends heartbeats, drops the queued requests a client cancels or leaves behind when it
// goes silent, and refuses malformed messages, so a client sees the daemon alive even
// while a measurement takes minutes. A running measurement is never interrupted: its
// result is sent even when nobody waits for it any more. The worker thread runs the backend, one request at a
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

// The most any one request may ask for. A request asking more is measured at these limits
// (and says so in the daemon's log), so one client cannot hold a shared measurer for hours
// or make its child reserve the host's memory.
struct MeasureLimits {
  double max_compile_seconds = 900;
  double max_run_seconds = 600;
  int64_t max_memory_mb = 65536;
  int max_samples = 200;  // caps both TimingSettings::samples and max_samples
};

// Clamps `settings` to `limits`; returns what was lowered ("compile timeout 3600 s -> 900 s,
// ..."), empty when nothing was.
std::string clamp_to_limits(MeasureSettings &settings, const MeasureLimits &limits);

// Whether the daemon may bind `endpoint` without authentication: tcp on a loopback address
// (127.0.0.0/8, [::1], localhost), ipc:// or inproc://.
bool is_loopback_endpoint(const std::string &endpoint);

struct MeasurerDaemonOptions {
  // ZeroMQ endpoint to bind; "tcp://127.0.0.1:*" picks a free port (see endpoint()). Only
  // loopback endpoints (is_loopback_endpoint): the daemon loads and runs what requests
  // name, and has no authentication.
  std::string bind = "tcp://127.0.0.1:5555";
  // Heartbeats to every client heard within kLiveness intervals.
  std::chrono::milliseconds heartbeat_interval = wire::kDefaultHeartbeatInterval;
  // The queued requests of a client silent this long are dropped (a client pings while it
  // waits, so it is gone); zero: wire::kLiveness heartbeat intervals. A REQ-style peer,
  // which cannot ping while it waits, keeps its request.
  std::chrono::milliseconds abandon_after{0};
  // Forces require_smt_off on every request (the farm's policy), whatever the client asked.
  bool require_smt_off = false;
  MeasureLimits limits;
};

class MeasurerDaemon {
 public:
  // Counters for logs and tests; the same numbers are exported as Prometheus metrics.
  struct Stats {
    int64_t measured = 0;     // results of the backend sent back
    int64_t bad_requests = 0;  // measure messages whose body was refused
    int64_t wire_errors = 0;  // malformed messages answered with an error
    int64_t max_queue_length = 0;
    int64_t cancelled = 0;  // queued requests dropped because their client cancelled them
    int64_t abandoned = 0;  // queued requests dropped because their client went silent
  };

  // Binds the socket now, so endpoint() is known before run(). Registers metrics on
  // `metrics` when given (it must outlive the daemon). Throws IoError naming the endpoint
  // when it cannot be bound, ConfigError for a bad option or an endpoint that is not
  // loopback.
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
