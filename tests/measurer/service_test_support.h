// Shared pieces of the measurer service tests: a fake measurement backend that sleeps and
// returns canned results (so daemon and client behaviour is tested without compiling
// anything), a daemon serving on a thread, and a raw DEALER peer that speaks the wire
// protocol by hand (so tests can send what a well-behaved client never would).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "measurer/measurer_daemon.h"
#include "measurer/wire.h"

namespace protuner::testing {

using namespace std::chrono_literals;

// A request the fake understands: params say which result to return and how long to take.
//   index     copied into the result's compile_seconds, so tests can match replies
//   delay_ms  how long measure() sleeps
//   throw     "1": measure() throws
//   hang      "1": measure() blocks until FakeState::release() (or the test ends)
inline MeasureRequest fake_request(int index, int delay_ms = 20) {
  MeasureRequest r;
  r.app = {"fake", "/nonexistent/libfake.so", "fake",
           {{"index", std::to_string(index)}, {"delay_ms", std::to_string(delay_ms)}}};
  r.schedule.kind = ScheduleKind::kRoot;
  r.target = "host";
  return r;
}

// What every fake backend of a test shares with the test, which keeps a pointer to it
// after handing the backend to a daemon.
struct FakeState {
  std::mutex mutex;
  std::condition_variable cv;
  bool released = false;
  std::atomic<bool> hang_every_request{false};  // a measurer stuck in its backend
  // Every request answered measurer_error, as a measurer whose helper cannot start would.
  std::atomic<bool> broken_every_request{false};
  std::atomic<int> active{0};
  std::atomic<int> max_active{0};  // > 1 would mean two measurements at once
  std::atomic<int> started{0};
  std::vector<MeasureRequest> seen;

  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    cv.notify_all();
  }
};

class FakeBackend : public MeasurementBackend {
 public:
  explicit FakeBackend(std::shared_ptr<FakeState> state) : state_(std::move(state)) {}
  ~FakeBackend() override { state_->release(); }

  MeasureResult measure(const MeasureRequest &request) override {
    const int now_active = ++state_->active;
    int seen_max = state_->max_active.load();
    while (now_active > seen_max && !state_->max_active.compare_exchange_weak(seen_max, now_active)) {
    }
    ++state_->started;
    {
      std::unique_lock<std::mutex> lock(state_->mutex);
      state_->seen.push_back(request);
    }
    const auto param = [&](const char *key) {
      auto it = request.app.params.find(key);
      return it == request.app.params.end() ? std::string() : it->second;
    };
    struct Leave {
      FakeState &s;
      ~Leave() { --s.active; }
    } leave{*state_};
    if (!param("delay_ms").empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(param("delay_ms"))));
    }
    if (param("hang") == "1" || state_->hang_every_request) {
      std::unique_lock<std::mutex> lock(state_->mutex);
      state_->cv.wait(lock, [&] { return state_->released; });
    }
    if (param("throw") == "1") throw std::runtime_error("fake backend exploded");
    MeasureResult result;
    if (state_->broken_every_request) {
      result.status = MeasureStatus::kMeasurerError;
      result.error = "the measurement helper did not start (exit code 127)";
      return result;
    }
    result.status = MeasureStatus::kOk;
    result.compile_seconds = param("index").empty() ? -1 : std::stod(param("index"));
    result.timing.samples_ms = {1.5, 1.0, 1.25};
    result.timing.min_ms = 1.0;
    result.timing.median_ms = 1.25;
    result.host.cpu_model = "fake cpu";
    // Echoes the setting, so tests see what the daemon passed on.
    result.host.smt = request.settings.require_smt_off ? "required off" : "not required";
    return result;
  }

 private:
  std::shared_ptr<FakeState> state_;
};

// A MeasurerDaemon with a fake backend, serving on a loopback port on its own thread.
class DaemonThread {
 public:
  explicit DaemonThread(std::shared_ptr<FakeState> state = std::make_shared<FakeState>(),
                        MeasurerDaemonOptions options = fast_options(),
                        prometheus::Registry *metrics = nullptr)
      : state_(state),
        daemon_(std::move(options), std::make_unique<FakeBackend>(state), metrics),
        thread_([this] { daemon_.run(); }) {}
  ~DaemonThread() { stop(); }

  static MeasurerDaemonOptions fast_options() {
    MeasurerDaemonOptions o;
    o.bind = "tcp://127.0.0.1:*";
    o.heartbeat_interval = 100ms;
    // RawPeers do not ping while a test waits on other peers: only the tests of
    // abandonment make the daemon drop a silent client's requests.
    o.abandon_after = 10s;
    return o;
  }

  void stop() {
    state_->release();
    daemon_.stop();
    if (thread_.joinable()) thread_.join();
  }
  const std::string &endpoint() const { return daemon_.endpoint(); }
  MeasurerDaemon &daemon() { return daemon_; }
  FakeState &state() { return *state_; }

 private:
  std::shared_ptr<FakeState> state_;
  MeasurerDaemon daemon_;
  std::thread thread_;
};

// A hand-driven client: a DEALER socket and helpers to send frames and wait for replies.
class RawPeer {
 public:
  explicit RawPeer(const std::string &endpoint, zmq::socket_type type = zmq::socket_type::dealer,
                   const std::string &routing_id = "")
      : socket_(context_, type) {
    socket_.set(zmq::sockopt::linger, 0);
    if (!routing_id.empty()) socket_.set(zmq::sockopt::routing_id, routing_id);
    socket_.connect(endpoint);
  }

  void send_frame(const std::string &frame) {
    ASSERT_TRUE(socket_.send(zmq::buffer(frame), zmq::send_flags::none).has_value());
  }
  void send(const wire::Message &message) { send_frame(wire::format_message(message)); }
  void send_frames(const std::vector<std::string> &frames) {
    std::vector<zmq::const_buffer> buffers;
    for (const auto &f : frames) buffers.push_back(zmq::buffer(f));
    ASSERT_TRUE(zmq::send_multipart(socket_, buffers).has_value());
  }

  // The next message of `type` within `timeout` (others are skipped), or nullopt.
  std::optional<wire::Message> expect(wire::MessageType type,
                                      std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, left);
      if (!(item.revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> frames;
      if (!zmq::recv_multipart(socket_, std::back_inserter(frames))) continue;
      wire::Message m = wire::parse_message(frames.back().to_string_view());
      received.push_back(m);
      if (m.type == type) return m;
    }
  }

  zmq::socket_t &socket() { return socket_; }
  std::vector<wire::Message> received;  // everything expect() read, in order

 private:
  zmq::context_t context_;
  zmq::socket_t socket_;
};

}  // namespace protuner::testing
