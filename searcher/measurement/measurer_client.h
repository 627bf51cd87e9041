// The searcher's side of the measurer service: sends a batch of candidates to one or more
// measurer daemons (wire.h) and returns every reply, in request order. Measurers are serial,
// so each gets at most one request at a time from this client; the rest wait here and go
// to whichever measurer frees up first, the least loaded first when several are free
// (measurers are shared: their heartbeats give their queue over all clients). A measurer
// that stops answering heartbeats, that sits on a request past its deadline, or whose
// heartbeats show it does not hold a request it was sent, loses that request to another
// live measurer.
//
// Thread safety: measure_batch() and measure() may be called from any thread, but calls
// are serialized (one batch at a time per client; use one client per searcher thread for
// parallel batches). set_deadline(), clear_deadline() and cancel_all() may be called from
// any thread, also while a batch runs. Not copyable or movable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "measurer/measurement.h"
#include "measurer/wire.h"

namespace protuner {

// Every tunable of the client, with its default, in one place.
struct ClientOptions {
  // Pings to each measurer; a live measurer silent for `liveness` intervals is dead.
  // The daemon's own interval (announced in its ready message) wins when it is longer.
  std::chrono::milliseconds heartbeat_interval = wire::kDefaultHeartbeatInterval;
  int liveness = wire::kLiveness;
  // How long a measurer may hold a request once it has started on it (the clock restarts
  // while heartbeats say it is still queued behind other clients' requests). Zero derives it
  // from the request: 2 x compile timeout (the first request of an app also compiles the
  // reference) + run timeout + `request_timeout_slack`.
  std::chrono::milliseconds request_timeout{0};
  std::chrono::milliseconds request_timeout_slack{30000};
  // Attempts per request, counting the first; a request whose measurer died or timed out
  // this many times is returned with status timeout.
  int max_attempts = 3;
  // A batch fails what it has left when no measurer has been usable for this long
  // (covers a wrong endpoint list and a farm with every measurer down).
  std::chrono::milliseconds no_measurer_timeout{30000};
  // A dead measurer is reconnected after a backoff that doubles from the heartbeat
  // interval up to this.
  std::chrono::milliseconds max_reconnect_backoff{32000};
  // At a batch's start, how long the choice among several idle measurers waits for their
  // answers to the batch's first ping, which carry their current load (other searchers'
  // requests). One round trip normally; the cap covers a measurer slow to answer.
  std::chrono::milliseconds load_probe_wait{100};
};

class MeasurerClient : public MeasurementBackend {
 public:
  // Counters since construction, for logs and tests.
  struct Stats {
    int64_t sent = 0;        // measure messages sent, retries included
    int64_t retried = 0;     // attempts that failed and were sent again
    int64_t gave_up = 0;     // requests returned as timeout by the client itself
    int64_t deaths = 0;      // times a measurer was declared dead
    int64_t lost = 0;        // attempts retried because a measurer's heartbeat lacked them
    int64_t cancelled = 0;   // requests returned cancelled (deadline or cancel_all)
    int64_t moved = 0;       // queued requests moved to a measurer that went idle
    std::vector<int64_t> answered;  // results received, per endpoint in use (list order)
  };

  // `endpoints` like "tcp://host:5555". Connects at once, in the background (ZeroMQ
  // reconnects on its own). The list may be empty, for a client that learns its measurers
  // later (set_endpoints); a batch without any waits `no_measurer_timeout` for one. Throws
  // ConfigError for a malformed endpoint or a bad option.
  MeasurerClient(std::vector<std::string> endpoints, ClientOptions options = {});
  ~MeasurerClient() override;
  MeasurerClient(const MeasurerClient &) = delete;
  MeasurerClient &operator=(const MeasurerClient &) = delete;

  // One result per request, in request order. Never throws for a measurer problem: a
  // request no measurer answered is a result with status timeout and an error saying why
  // (each attempt: which measurer, what happened).
  std::vector<MeasureResult> measure_batch(const std::vector<MeasureRequest> &requests);

  // MeasurementBackend: a batch of one.
  MeasureResult measure(const MeasureRequest &request) override;

  // From `deadline` on, requests not yet answered come back with status cancelled, and
  // the measurers holding them are told to drop them (one already running finishes there,
  // unseen). It holds for every later batch too, until clear_deadline() or another
  // set_deadline(): a tuning job sets its own deadline so that no measurer works for it
  // after it has ended.
  void set_deadline(std::chrono::steady_clock::time_point deadline);
  void clear_deadline();
  // set_deadline(now): the running batch returns within a poll interval (100 ms).
  void cancel_all();

  // The measurers to use from the next batch on (a batch running now keeps its own): new
  // endpoints are connected, dropped ones closed, kept ones keep their state. For a farm
  // whose measurers come and go (registered in Redis). Any thread.
  void set_endpoints(std::vector<std::string> endpoints);

  Stats stats() const;

 private:
  struct Impl;
  class Batch;  // the state of one measure_batch call
  std::unique_ptr<Impl> impl_;
  mutable std::mutex mutex_;
  std::mutex pending_mutex_;
  std::optional<std::vector<std::string>> pending_endpoints_;
  // steady_clock ticks of the deadline; max(): none.
  std::atomic<std::chrono::steady_clock::rep> deadline_;
};

}  // namespace protuner
