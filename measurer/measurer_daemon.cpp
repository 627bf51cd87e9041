// The measurer daemon's two loops (measurer_daemon.h): the I/O loop that owns the ROUTER
// socket, the queue and the peers, and the worker that runs one measurement at a time.
// Everything a peer sends is untrusted: a bad message costs it an error reply, never the
// daemon.
#include "measurer/measurer_daemon.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <nlohmann/json.hpp>

#include "common/host_facts.h"
#include "measurer/measure_json.h"

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;

// How often the I/O loop checks for stop() when nothing else wakes it.
constexpr std::chrono::milliseconds kStopCheckInterval{100};

// Measurement durations span a trivial pipeline (tens of ms) to a compile near its timeout.
const prometheus::Histogram::BucketBoundaries kSecondsBuckets{0.1, 0.25, 0.5, 1,  2.5, 5,
                                                              10,  30,   60,  120, 300, 600};

// Routing ids are binary; logs show them as hex.
std::string peer_name(const std::string &identity) {
  static const char *kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : identity) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// The frames a reply must start with to reach a peer: its routing id, plus the empty
// delimiter a REQ-style peer sent.
using Route = std::vector<std::string>;

void send_to(zmq::socket_t &router, const Route &route, const wire::Message &message) {
  std::vector<zmq::const_buffer> frames;
  for (const auto &r : route) frames.push_back(zmq::buffer(r));
  const std::string payload = wire::format_message(message);
  frames.push_back(zmq::buffer(payload));
  // A ROUTER drops what it cannot route (peer gone, peer's queue full); it never blocks.
  zmq::send_multipart(router, frames, zmq::send_flags::dontwait);
}

struct Job {
  uint64_t seq = 0;  // daemon-wide, so a late worker result is matched to its job
  Route route;
  std::string id;
  MeasureRequest request;
  std::string app_name;
};

// Runs the backend, never letting an exception escape: a backend is not supposed to throw
// for a bad candidate, but one that does must not take the daemon down.
MeasureResult measure_safely(MeasurementBackend &backend, const MeasureRequest &request) {
  MeasureResult result;
  try {
    return backend.measure(request);
  } catch (const ConfigError &e) {
    result.status = MeasureStatus::kBadRequest;
    result.error = std::string("the measurer refused the request: ") + e.what();
  } catch (const std::exception &e) {
    result.status = MeasureStatus::kRuntimeCrash;
    result.error = std::string("the measurer backend failed: ") + e.what();
  } catch (...) {
    result.status = MeasureStatus::kRuntimeCrash;
    result.error = "the measurer backend failed with an unknown exception";
  }
  return result;
}

// The measuring thread. It holds at most one job (the I/O loop gives it the next only when
// it reported the last), and reports over its own PAIR socket as four frames: the job's
// seq, the status name, the seconds it took and the result JSON.
class Worker {
 public:
  Worker(zmq::context_t &context, std::string endpoint, MeasurementBackend &backend)
      : context_(context), endpoint_(std::move(endpoint)), backend_(backend) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Worker() { stop(); }

  void start(Job job) {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = std::move(job);
    cv_.notify_one();
  }

  // Returns after the running measurement, if any, has finished.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    zmq::socket_t pair(context_, zmq::socket_type::pair);
    pair.set(zmq::sockopt::linger, 0);
    pair.connect(endpoint_);
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stopping_ || job_.has_value(); });
        if (!job_) return;
        job = std::move(*job_);
        job_.reset();
      }
      const auto start = Clock::now();
      const MeasureResult result = measure_safely(backend_, job.request);
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      const std::string seq = std::to_string(job.seq);
      const std::string status = status_name(result.status);
      const std::string secs = std::to_string(seconds);
      const std::string body = result_to_json(result);
      std::array<zmq::const_buffer, 4> frames{zmq::buffer(seq), zmq::buffer(status),
                                              zmq::buffer(secs), zmq::buffer(body)};
      zmq::send_multipart(pair, frames);
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
    }
  }

  zmq::context_t &context_;
  std::string endpoint_;
  MeasurementBackend &backend_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<Job> job_;
  bool stopping_ = false;
  std::thread thread_;
};

// The daemon's Prometheus families; references kept, so updates are cheap.
struct Metrics {
  explicit Metrics(prometheus::Registry &registry) {
    auto &requests = prometheus::BuildCounter()
                         .Name("protuner_measurer_requests_total")
                         .Help("Measurement requests answered, by result status")
                         .Register(registry);
    for (MeasureStatus s : all_statuses()) {
      by_status[static_cast<int>(s)] = &requests.Add({{"status", status_name(s)}});
    }
    wire_errors = &prometheus::BuildCounter()
                       .Name("protuner_measurer_wire_errors_total")
                       .Help("Malformed or unexpected messages answered with an error")
                       .Register(registry)
                       .Add({});
    abandoned = &prometheus::BuildCounter()
                     .Name("protuner_measurer_abandoned_total")
                     .Help("Queued requests dropped because their client went silent")
                     .Register(registry)
                     .Add({});
    queue_length = &prometheus::BuildGauge()
                        .Name("protuner_measurer_queue_length")
                        .Help("Requests waiting for the measurer, not counting the running one")
                        .Register(registry)
                        .Add({});
    busy = &prometheus::BuildGauge()
                .Name("protuner_measurer_busy")
                .Help("1 while a measurement runs")
                .Register(registry)
                .Add({});
    seconds = &prometheus::BuildHistogram()
                   .Name("protuner_measurer_measurement_seconds")
                   .Help("Wall-clock time of one measurement (compile, check, timing)")
                   .Register(registry)
                   .Add({}, kSecondsBuckets);
    busy_seconds = &prometheus::BuildCounter()
                        .Name("protuner_measurer_busy_seconds_total")
                        .Help("Wall-clock seconds spent measuring, per app (compile, check, "
                              "timing)")
                        .Register(registry);
    compile_seconds = &prometheus::BuildCounter()
                           .Name("protuner_measurer_compile_seconds_total")
                           .Help("Of those, seconds spent compiling the candidate, per app: "
                                 "whether compiling belongs on the measurers")
                           .Register(registry);
  }
  // Indexed by MeasureStatus.
  prometheus::Counter *by_status[kMeasureStatusCount] = {};
  prometheus::Counter *wire_errors = nullptr;
  prometheus::Counter *abandoned = nullptr;
  prometheus::Gauge *queue_length = nullptr;
  prometheus::Gauge *busy = nullptr;
  prometheus::Histogram *seconds = nullptr;
  prometheus::Family<prometheus::Counter> *busy_seconds = nullptr;     // {app}
  prometheus::Family<prometheus::Counter> *compile_seconds = nullptr;  // {app}
};

struct Peer {
  Route route;
  Clock::time_point last_heard;
  int64_t acked_seq = 0;  // the highest ping sequence number read from this peer
};

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

// "lowered" += "what from -> to" when `value` is above `max`, and `value` = max.
template <typename T>
void clamp_one(T &value, T max, const char *what, const char *unit, std::string &lowered) {
  if (!(value > max)) return;
  lowered += fmt::format("{}{} {}{} -> {}{}", lowered.empty() ? "" : ", ", what, value, unit,
                         max, unit);
  value = max;
}

}  // namespace

std::string clamp_to_limits(MeasureSettings &settings, const MeasureLimits &limits) {
  std::string lowered;
  clamp_one(settings.compile_timeout_seconds, limits.max_compile_seconds, "compile timeout", " s",
            lowered);
  clamp_one(settings.run_timeout_seconds, limits.max_run_seconds, "run timeout", " s", lowered);
  clamp_one(settings.memory_limit_mb, limits.max_memory_mb, "memory limit", " MB", lowered);
  clamp_one(settings.timing.samples, limits.max_samples, "samples", "", lowered);
  clamp_one(settings.timing.max_samples, limits.max_samples, "max samples", "", lowered);
  return lowered;
}

bool is_loopback_endpoint(const std::string &endpoint) {
  if (starts_with(endpoint, "ipc://") || starts_with(endpoint, "inproc://")) return true;
  if (!starts_with(endpoint, "tcp://")) return false;
  const std::string rest = endpoint.substr(6);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string host = rest.substr(0, colon);
  if (host == "localhost" || host == "[::1]") return true;
  // 127.0.0.0/8, written as four decimal octets.
  if (!starts_with(host, "127.")) return false;
  int octets = 0;
  size_t i = 0;
  while (i <= host.size()) {
    const size_t dot = std::min(host.find('.', i), host.size());
    const std::string octet = host.substr(i, dot - i);
    if (octet.empty() || octet.size() > 3 ||
        octet.find_first_not_of("0123456789") != std::string::npos || std::stoi(octet) > 255) {
      return false;
    }
    ++octets;
    i = dot + 1;
  }
  return octets == 4;
}

struct MeasurerDaemon::Impl {
  Impl(MeasurerDaemonOptions opts, std::unique_ptr<MeasurementBackend> b,
       prometheus::Registry *registry)
      : options(std::move(opts)),
        backend(std::move(b)),
        router(context, zmq::socket_type::router),
        worker_socket(context, zmq::socket_type::pair) {
    if (registry) metrics = std::make_unique<Metrics>(*registry);
    host = detect_host_facts().cpu_model;
    std::random_device random;
    instance = fmt::format("{:08x}{:08x}", random(), random());
  }

  // --- the I/O loop, by phase ---
  void serve(const std::atomic<bool> &stop_requested);
  void receive_all();
  void handle(const std::vector<zmq::message_t> &frames);
  void handle_measure(const Route &route, const wire::Message &message);
  void handle_cancel(const Route &route, const wire::Message &message);
  void handle_ping(Peer &peer, const Route &route, const wire::Message &message);
  void drop_queued_of(const std::string &identity);
  void reply_wire_error(const Route &route, const wire::WireError &e);
  void receive_done();
  void dispatch();
  void send_heartbeats(Clock::time_point now);
  void shut_down();

  wire::HeartbeatBody heartbeat_for(const std::string &identity) const;
  void update_queue_gauge();

  MeasurerDaemonOptions options;
  std::unique_ptr<MeasurementBackend> backend;
  std::unique_ptr<Metrics> metrics;
  std::string host;
  std::string instance;  // new per daemon start (wire::ReadyBody)
  zmq::context_t context;
  zmq::socket_t router;
  zmq::socket_t worker_socket;  // the I/O side of the worker's PAIR
  std::string worker_endpoint;
  std::unique_ptr<Worker> worker;

  std::deque<Job> queue;
  std::optional<Job> running;
  uint64_t next_seq = 1;
  std::map<std::string, Peer> peers;  // by routing id

  std::atomic<int64_t> measured{0}, bad_requests{0}, wire_errors{0}, max_queue_length{0},
      cancelled{0}, abandoned{0};
};

MeasurerDaemon::MeasurerDaemon(MeasurerDaemonOptions options,
                               std::unique_ptr<MeasurementBackend> backend,
                               prometheus::Registry *metrics) {
  if (!backend) throw ConfigError("measurer daemon: no measurement backend");
  if (options.abandon_after.count() < 0) {
    throw ConfigError("measurer daemon: abandon_after must not be negative");
  }
  if (options.heartbeat_interval.count() <= 0) {
    throw ConfigError("measurer daemon: heartbeat interval must be positive, got " +
                      std::to_string(options.heartbeat_interval.count()) + " ms");
  }
  if (!is_loopback_endpoint(options.bind)) {
    throw ConfigError("measurer daemon: will not bind '" + options.bind +
                      "': it is not a loopback endpoint (tcp://127.0.0.1:PORT, ipc://PATH), and "
                      "the daemon has no authentication to serve other hosts with");
  }
  const MeasureLimits &l = options.limits;
  if (!(l.max_compile_seconds > 0) || !(l.max_run_seconds > 0) || l.max_memory_mb <= 0 ||
      l.max_samples <= 0) {
    throw ConfigError("measurer daemon: every measurement limit must be positive");
  }
  impl_ = std::make_unique<Impl>(std::move(options), std::move(backend), metrics);
  Impl &d = *impl_;
  d.router.set(zmq::sockopt::linger, 0);
  d.router.set(zmq::sockopt::maxmsgsize, wire::kMaxMessageBytes);
  // A client that reconnects under its routing id takes its replies over to the new
  // connection (wire.h).
  d.router.set(zmq::sockopt::router_handover, true);
  try {
    d.router.bind(d.options.bind);
  } catch (const zmq::error_t &e) {
    throw IoError("measurer daemon: cannot bind " + d.options.bind + ": " + e.what());
  }
  endpoint_ = d.router.get(zmq::sockopt::last_endpoint);
  // Messages name the endpoint bound (a port the system picked for "tcp://127.0.0.1:*").
  d.options.bind = endpoint_;
  d.worker_endpoint = "inproc://protuner-measurer-worker-" + std::to_string(
      reinterpret_cast<uintptr_t>(this));
  d.worker_socket.set(zmq::sockopt::linger, 0);
  d.worker_socket.bind(d.worker_endpoint);
}

MeasurerDaemon::~MeasurerDaemon() = default;

MeasurerDaemon::Stats MeasurerDaemon::stats() const {
  return {impl_->measured.load(),         impl_->bad_requests.load(),
          impl_->wire_errors.load(),      impl_->max_queue_length.load(),
          impl_->cancelled.load(),        impl_->abandoned.load()};
}

void MeasurerDaemon::run() {
  const MeasureLimits &l = impl_->options.limits;
  spdlog::info("measurer daemon: serving on {} (heartbeat {} ms{}; at most {} s compile, {} s "
               "run, {} MB, {} samples per request)",
               endpoint_, impl_->options.heartbeat_interval.count(),
               impl_->options.require_smt_off ? ", SMT must be off" : "", l.max_compile_seconds,
               l.max_run_seconds, l.max_memory_mb, l.max_samples);
  impl_->serve(stop_requested_);
  const Stats s = stats();
  spdlog::info("measurer daemon: stopped after {} measurements, {} bad requests, {} wire errors, "
               "{} cancelled, {} abandoned",
               s.measured, s.bad_requests, s.wire_errors, s.cancelled, s.abandoned);
}

void MeasurerDaemon::Impl::serve(const std::atomic<bool> &stop_requested) {
  worker = std::make_unique<Worker>(context, worker_endpoint, *backend);
  auto next_heartbeat = Clock::now() + options.heartbeat_interval;
  bool idle = true;
  while (!stop_requested.load()) {
    const auto now = Clock::now();
    const auto wait = std::min(
        std::chrono::duration_cast<std::chrono::milliseconds>(next_heartbeat - now),
        kStopCheckInterval);
    zmq::pollitem_t items[] = {{router.handle(), 0, ZMQ_POLLIN, 0},
                               {worker_socket.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, std::max(wait, std::chrono::milliseconds(0)));
    } catch (const zmq::error_t &e) {
      if (e.num() != EINTR) throw;  // a signal: loop round to check stop_requested
    }
    if (items[1].revents & ZMQ_POLLIN) receive_done();
    if (items[0].revents & ZMQ_POLLIN) receive_all();
    dispatch();
    // Going idle is told at once, not at the next interval: clients choose where to send
    // (and whether to move a queued request) by the loads heartbeats report, so a measurer
    // whose idleness is a heartbeat old would stay idle that long while others have queues.
    const bool now_idle = !running && queue.empty();
    if (Clock::now() >= next_heartbeat || (now_idle && !idle)) {
      send_heartbeats(Clock::now());
      next_heartbeat = Clock::now() + options.heartbeat_interval;
    }
    idle = now_idle;
  }
  shut_down();
}

void MeasurerDaemon::Impl::receive_all() {
  for (;;) {
    std::vector<zmq::message_t> frames;
    std::optional<size_t> n;
    try {
      n = zmq::recv_multipart(router, std::back_inserter(frames), zmq::recv_flags::dontwait);
    } catch (const zmq::error_t &e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    if (!n) return;
    handle(frames);
  }
}

void MeasurerDaemon::Impl::handle(const std::vector<zmq::message_t> &frames) {
  if (frames.size() < 2) return;  // a ROUTER always prefixes the routing id; nothing to answer
  const std::string identity = frames.front().to_string();
  const auto now = Clock::now();
  // The reply route: the routing id plus any empty delimiter frames (REQ-style peers).
  Route route{identity};
  size_t payload = 1;
  while (payload + 1 < frames.size() && frames[payload].size() == 0) {
    route.emplace_back();
    ++payload;
  }

  auto [peer, is_new] = peers.try_emplace(identity);
  peer->second.route = route;
  peer->second.last_heard = now;
  // A REQ-style peer (one with a delimiter frame) can take exactly one reply per request,
  // so it gets no greeting and no unsolicited heartbeats.
  const bool lockstep = route.size() > 1;
  if (is_new && !lockstep) {
    spdlog::debug("measurer daemon: new client {}", peer_name(identity));
    send_to(router, route,
            wire::ready_message(
                {static_cast<int>(options.heartbeat_interval.count()), host, instance}));
  }

  if (payload + 1 != frames.size()) {
    reply_wire_error(route, wire::WireError("expected one message frame after the routing "
                                            "frames, got " +
                                            std::to_string(frames.size() - payload)));
    return;
  }
  wire::Message message;
  try {
    message = wire::parse_message(frames[payload].to_string_view());
  } catch (const wire::WireError &e) {
    reply_wire_error(route, e);
    return;
  }
  switch (message.type) {
    case wire::MessageType::kMeasure:
      handle_measure(route, message);
      return;
    case wire::MessageType::kHeartbeat:
      handle_ping(peer->second, route, message);
      return;
    case wire::MessageType::kCancel:
      handle_cancel(route, message);
      return;
    default:
      reply_wire_error(route, wire::WireError(std::string("a measurer accepts measure, "
                                                          "heartbeat and cancel messages, not ") +
                                                  wire::type_name(message.type),
                                              message.id));
  }
}

void MeasurerDaemon::Impl::handle_measure(const Route &route, const wire::Message &message) {
  Job job;
  try {
    job.request = wire::read_measure(message);
  } catch (const wire::WireError &e) {
    // The envelope is fine, so the client is waiting for a result for this id.
    MeasureResult refused;
    refused.status = MeasureStatus::kBadRequest;
    refused.error = e.what();
    spdlog::warn("measurer daemon: refused request '{}': {}", message.id, e.what());
    // Counted before the reply, so whoever got the reply sees the count.
    ++bad_requests;
    if (metrics) metrics->by_status[static_cast<int>(MeasureStatus::kBadRequest)]->Increment();
    send_to(router, route, wire::result_message(message.id, refused));
    return;
  }
  if (options.require_smt_off) job.request.settings.require_smt_off = true;
  const std::string lowered = clamp_to_limits(job.request.settings, options.limits);
  if (!lowered.empty()) {
    spdlog::info("measurer daemon: request '{}' ({}) asked above this measurer's limits: {}",
                 message.id, job.request.app.name, lowered);
  }
  job.seq = next_seq++;
  job.route = route;
  job.id = message.id;
  job.app_name = job.request.app.name;
  spdlog::debug("measurer daemon: queued '{}' ({}) from {}", job.id, job.app_name,
                peer_name(route.front()));
  queue.push_back(std::move(job));
  max_queue_length = std::max<int64_t>(max_queue_length.load(), queue.size());
  update_queue_gauge();
}

void MeasurerDaemon::Impl::handle_ping(Peer &peer, const Route &route,
                                       const wire::Message &message) {
  try {
    peer.acked_seq = std::max(peer.acked_seq, wire::read_heartbeat(message).seq);
  } catch (const wire::WireError &e) {
    reply_wire_error(route, e);
    return;
  }
  send_to(router, route, wire::heartbeat_message(heartbeat_for(route.front())));
}

// A queued request leaves the queue and is answered `cancelled`; a running one is not
// interrupted (its result follows as usual); an unknown id (already answered) is ignored.
void MeasurerDaemon::Impl::handle_cancel(const Route &route, const wire::Message &message) {
  const auto it = std::find_if(queue.begin(), queue.end(), [&](const Job &job) {
    return job.route.front() == route.front() && job.id == message.id;
  });
  if (it == queue.end()) {
    spdlog::debug("measurer daemon: cancel of '{}' from {}: {}", message.id,
                  peer_name(route.front()),
                  running && running->id == message.id ? "already running, it finishes"
                                                       : "not queued");
    return;
  }
  spdlog::info("measurer daemon: '{}' ({}) cancelled by its client", it->id, it->app_name);
  queue.erase(it);
  update_queue_gauge();
  ++cancelled;
  if (metrics) metrics->by_status[static_cast<int>(MeasureStatus::kCancelled)]->Increment();
  MeasureResult result;
  result.status = MeasureStatus::kCancelled;
  result.error = "cancelled by the client before it was measured";
  send_to(router, route, wire::result_message(message.id, result));
}

void MeasurerDaemon::Impl::drop_queued_of(const std::string &identity) {
  const size_t before = queue.size();
  queue.erase(std::remove_if(queue.begin(), queue.end(),
                             [&](const Job &job) { return job.route.front() == identity; }),
              queue.end());
  const size_t dropped = before - queue.size();
  if (dropped == 0) return;
  spdlog::warn("measurer daemon: client {} went silent; dropped its {} queued request(s)",
               peer_name(identity), dropped);
  abandoned += static_cast<int64_t>(dropped);
  if (metrics) metrics->abandoned->Increment(static_cast<double>(dropped));
  update_queue_gauge();
}

void MeasurerDaemon::Impl::reply_wire_error(const Route &route, const wire::WireError &e) {
  spdlog::warn("measurer daemon: malformed message from {}: {}", peer_name(route.front()),
               e.what());
  ++wire_errors;
  if (metrics) metrics->wire_errors->Increment();
  send_to(router, route, wire::error_message(e.id(), {e.what(), false}));
}

void MeasurerDaemon::Impl::receive_done() {
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(worker_socket, std::back_inserter(frames), zmq::recv_flags::dontwait) ||
      frames.size() != 4) {
    return;
  }
  const uint64_t seq = std::stoull(frames[0].to_string());
  if (!running || running->seq != seq) return;
  const MeasureStatus status = parse_status(frames[1].to_string());
  const double seconds = std::stod(frames[2].to_string());
  spdlog::info("measurer daemon: '{}' ({}) {} in {:.2f} s", running->id, running->app_name,
               status_name(status), seconds);
  ++measured;
  if (metrics) {
    metrics->by_status[static_cast<int>(status)]->Increment();
    metrics->seconds->Observe(seconds);
    metrics->busy->Set(0);
    metrics->busy_seconds->Add({{"app", running->app_name}}).Increment(std::max(0.0, seconds));
    // The result's own figure; a result too malformed to say counts no compile time.
    const auto result = nlohmann::json::parse(frames[3].to_string(), nullptr, false);
    const double compile = result.is_object() && result.contains("compile_seconds") &&
                                   result["compile_seconds"].is_number()
                               ? result["compile_seconds"].get<double>()
                               : 0.0;
    metrics->compile_seconds->Add({{"app", running->app_name}}).Increment(std::max(0.0, compile));
  }
  send_to(router, running->route, {wire::MessageType::kResult, running->id, frames[3].to_string()});
  running.reset();
}

void MeasurerDaemon::Impl::dispatch() {
  if (running || queue.empty()) return;
  running = std::move(queue.front());
  queue.pop_front();
  update_queue_gauge();
  if (metrics) metrics->busy->Set(1);
  Job job = *running;
  worker->start(std::move(job));
}

void MeasurerDaemon::Impl::send_heartbeats(Clock::time_point now) {
  const auto expiry = options.heartbeat_interval * wire::kLiveness;
  const auto abandon = options.abandon_after.count() > 0
                           ? options.abandon_after
                           : std::chrono::milliseconds(expiry);
  for (auto it = peers.begin(); it != peers.end();) {
    const auto silent = now - it->second.last_heard;
    // A client pings while it waits (measurer_client.h), so a silent one is gone and its
    // queued requests would be measured for nobody. A REQ-style peer cannot ping while it
    // waits for its one reply: its request stays.
    const bool lockstep = it->second.route.size() > 1;
    if (silent > abandon && !lockstep) drop_queued_of(it->first);
    // A silent client is forgotten once it waits for nothing here; one waiting for its
    // running request still gets heartbeats, so it knows its measurer is alive.
    if (silent > expiry && heartbeat_for(it->first).pending.empty()) {
      spdlog::debug("measurer daemon: client {} went silent", peer_name(it->first));
      it = peers.erase(it);
      continue;
    }
    if (it->second.route.size() == 1) {
      send_to(router, it->second.route, wire::heartbeat_message(heartbeat_for(it->first)));
    }
    ++it;
  }
}

wire::HeartbeatBody MeasurerDaemon::Impl::heartbeat_for(const std::string &identity) const {
  wire::HeartbeatBody body;
  if (const auto peer = peers.find(identity); peer != peers.end()) body.seq = peer->second.acked_seq;
  body.busy = running.has_value();
  body.queue_length = static_cast<int>(queue.size());
  if (running && running->route.front() == identity) {
    body.running = running->id;
    body.pending.push_back(running->id);
  }
  for (const Job &job : queue) {
    if (job.route.front() == identity) body.pending.push_back(job.id);
  }
  return body;
}

void MeasurerDaemon::Impl::update_queue_gauge() {
  if (metrics) metrics->queue_length->Set(static_cast<double>(queue.size()));
}

void MeasurerDaemon::Impl::shut_down() {
  // Tell every waiting client now, so it retries elsewhere instead of waiting for
  // heartbeats to stop.
  const wire::ErrorBody bye{"measurer daemon at " + options.bind + " is shutting down", true};
  if (running) send_to(router, running->route, wire::error_message(running->id, bye));
  for (const Job &job : queue) send_to(router, job.route, wire::error_message(job.id, bye));
  queue.clear();
  update_queue_gauge();
  if (running) {
    spdlog::info("measurer daemon: waiting for the running measurement '{}' to end",
                 running->id);
  }
  worker.reset();  // joins after the running measurement
  running.reset();
  if (metrics) metrics->busy->Set(0);
}

}  // namespace protuner
