// The measurer client against in-process daemons with fake backends (and one hand-made
// measurer that freezes): results come back in request order, load is spread with one
// request per measurer at a time, to the measurer other clients leave idle, a queued
// request moves to a measurer that went idle, the measurer list can change between
// batches, and a measurer that dies, freezes, hangs or shuts down loses its request to
// another; what cannot be answered anywhere is a timeout result that says why.
#include "searcher/measurement/measurer_client.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/measurer/service_test_support.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

using namespace std::chrono_literals;
using testing::DaemonThread;

ClientOptions fast_client() {
  ClientOptions o;
  o.heartbeat_interval = 100ms;
  o.liveness = 5;  // 500 ms: tolerant of a loaded 2-core test machine
  o.no_measurer_timeout = 2000ms;
  return o;
}

std::vector<MeasureRequest> fake_batch(int n, int delay_ms) {
  std::vector<MeasureRequest> batch;
  for (int i = 0; i < n; ++i) batch.push_back(testing::fake_request(i, delay_ms));
  return batch;
}

void expect_in_order(const std::vector<MeasureResult> &results, size_t n) {
  ASSERT_EQ(results.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(results[i].status, MeasureStatus::kOk) << i << ": " << results[i].error;
    EXPECT_DOUBLE_EQ(results[i].compile_seconds, static_cast<double>(i)) << "result " << i;
  }
}

// A hand-made measurer that misbehaves on its first measure request: it either freezes
// (as a SIGSTOPped or swapping daemon would: no reply, no heartbeat, ever), forgets the
// request the way a daemon restarted within one heartbeat interval would (a new instance
// greets the client and never answers it), or never gets it, as when a reply or request
// is lost with a broken connection (kDrop: every measure request vanishes, and its
// heartbeats acknowledge the client's pings without listing it).
class BrokenMeasurer {
 public:
  enum class Mode { kFreeze, kForget, kDrop };
  explicit BrokenMeasurer(Mode mode) : mode_(mode), socket_(context_, zmq::socket_type::router) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { loop(); });
  }
  ~BrokenMeasurer() {
    stop_ = true;
    thread_.join();
  }
  const std::string &endpoint() const { return endpoint_; }
  int measures() const { return measures_; }

 private:
  void loop() {
    std::set<std::string> greeted;
    std::string instance = "first";
    while (!stop_) {
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 20ms);
      if (!(item.revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> frames;
      if (!zmq::recv_multipart(socket_, std::back_inserter(frames))) continue;
      if (mode_ == Mode::kFreeze && measures_ > 0) continue;
      const wire::Message m = wire::parse_message(frames.back().to_string_view());
      const std::string peer = frames.front().to_string();
      if (greeted.insert(peer).second) reply(peer, wire::ready_message({100, "broken", instance}));
      if (m.type == wire::MessageType::kMeasure) {
        ++measures_;
        if (mode_ == Mode::kForget) {
          instance = "restarted-" + std::to_string(measures_);
          reply(peer, wire::ready_message({100, "broken", instance}));
        }
      } else if (mode_ == Mode::kDrop && m.type == wire::MessageType::kHeartbeat) {
        wire::HeartbeatBody hb;
        hb.seq = wire::read_heartbeat(m).seq;
        reply(peer, wire::heartbeat_message(hb));
      } else {
        reply(peer, wire::heartbeat_message({}));
      }
    }
  }
  void reply(const std::string &peer, const wire::Message &m) {
    const std::string payload = wire::format_message(m);
    std::array<zmq::const_buffer, 2> frames{zmq::buffer(peer), zmq::buffer(payload)};
    zmq::send_multipart(socket_, frames);
  }

  Mode mode_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::atomic<int> measures_{0};
  std::thread thread_;
};

TEST(MeasurerClient, BatchOverTwoMeasurersReturnsResultsInRequestOrder) {
  DaemonThread a, b;
  MeasurerClient client({a.endpoint(), b.endpoint()}, fast_client());
  // Uneven delays, so replies arrive out of request order.
  std::vector<MeasureRequest> batch;
  for (int i = 0; i < 8; ++i) batch.push_back(testing::fake_request(i, i % 3 == 0 ? 120 : 20));
  expect_in_order(client.measure_batch(batch), batch.size());

  const auto stats = client.stats();
  EXPECT_EQ(stats.sent, 8);
  EXPECT_EQ(stats.retried, 0);
  EXPECT_GT(stats.answered[0], 0) << "measurer a got no work";
  EXPECT_GT(stats.answered[1], 0) << "measurer b got no work";
  // One request at a time per measurer: a daemon never had more than the one it was given.
  EXPECT_LE(a.daemon().stats().max_queue_length, 1);
  EXPECT_LE(b.daemon().stats().max_queue_length, 1);
  EXPECT_EQ(a.state().max_active.load(), 1);
}

// Measurers are shared by searchers: a measurer another client keeps busy is idle from this
// client's side, and its heartbeat says it is not. One request at a time (as the search
// sends them) goes to the measurer with no queue, every time.
TEST(MeasurerClient, OneRequestAtATimeGoesToTheMeasurerOtherClientsLeaveIdle) {
  DaemonThread busy, idle;
  std::thread other([&] {
    MeasurerClient hog({busy.endpoint()}, fast_client());
    expect_in_order(hog.measure_batch(fake_batch(1, 1500)), 1);
  });
  while (busy.state().started.load() == 0) std::this_thread::sleep_for(5ms);
  MeasurerClient client({busy.endpoint(), idle.endpoint()}, fast_client());
  for (int i = 0; i < 3; ++i) {
    const MeasureResult r = client.measure(testing::fake_request(i, 50));
    EXPECT_EQ(r.status, MeasureStatus::kOk) << r.error;
  }
  other.join();
  const auto stats = client.stats();
  EXPECT_EQ(stats.answered[0], 0) << "a request queued behind the other client's";
  EXPECT_EQ(stats.answered[1], 3);
  EXPECT_EQ(stats.retried, 0);
}

// Loads change between heartbeats: a request sent to the least loaded measurer can find
// itself queued behind another searcher's long measurement while a measurer that looked
// busier goes idle. It moves there, and the measurer it leaves drops it unmeasured.
TEST(MeasurerClient, AQueuedRequestMovesToAMeasurerThatWentIdle) {
  DaemonThread slow, quick;
  std::thread hog([&] {
    MeasurerClient c({slow.endpoint()}, fast_client());
    expect_in_order(c.measure_batch(fake_batch(1, 2500)), 1);
  });
  std::vector<std::thread> shorts;
  for (int i = 0; i < 2; ++i) {
    shorts.emplace_back([&] {
      MeasurerClient c({quick.endpoint()}, fast_client());
      expect_in_order(c.measure_batch(fake_batch(1, 400)), 1);
    });
  }
  // slow runs one request; quick runs one and has one queued: a load of 1 against 2.
  while (slow.state().started.load() == 0 || quick.state().started.load() == 0) {
    std::this_thread::sleep_for(5ms);
  }
  MeasurerClient client({slow.endpoint(), quick.endpoint()}, fast_client());
  const auto start = std::chrono::steady_clock::now();
  const MeasureResult r = client.measure(testing::fake_request(0, 50));
  const auto took = std::chrono::steady_clock::now() - start;
  hog.join();
  for (std::thread &t : shorts) t.join();
  EXPECT_EQ(r.status, MeasureStatus::kOk) << r.error;
  const auto stats = client.stats();
  EXPECT_EQ(stats.moved, 1);
  EXPECT_EQ(stats.answered[0], 0);
  EXPECT_EQ(stats.answered[1], 1);
  EXPECT_EQ(stats.retried, 0);
  EXPECT_EQ(slow.state().started.load(), 1) << "the request left slow's queue unmeasured";
  // quick's two short requests (800 ms) and this one, not the 2.5 s behind the hog.
  EXPECT_LT(took, 2000ms);
}

// A farm's measurers come and go (searcher/daemon: registered in Redis): a client starts
// with none, and the list it is given applies from the next batch on.
TEST(MeasurerClient, EndpointsGivenLaterApplyFromTheNextBatch) {
  DaemonThread a, b;
  ClientOptions options = fast_client();
  options.no_measurer_timeout = 300ms;
  MeasurerClient client({}, options);
  const MeasureResult none = client.measure(testing::fake_request(0, 5));
  EXPECT_EQ(none.status, MeasureStatus::kTimeout);
  client.set_endpoints({a.endpoint()});
  EXPECT_EQ(client.measure(testing::fake_request(1, 5)).status, MeasureStatus::kOk);
  client.set_endpoints({b.endpoint()});
  EXPECT_EQ(client.measure(testing::fake_request(2, 5)).status, MeasureStatus::kOk);
  EXPECT_EQ(client.measure(testing::fake_request(3, 5)).status, MeasureStatus::kOk);
  EXPECT_EQ(a.state().started.load(), 1);
  EXPECT_EQ(b.state().started.load(), 2);
  ASSERT_EQ(client.stats().answered.size(), 1u);  // b only
  EXPECT_EQ(client.stats().answered[0], 2);
}

TEST(MeasurerClient, SecondBatchReusesTheConnections) {
  DaemonThread a;
  MeasurerClient client({a.endpoint()}, fast_client());
  expect_in_order(client.measure_batch(fake_batch(2, 5)), 2);
  // No pings between batches: the daemon forgets this client after 300 ms and greets it
  // again, which must not look like a restart while the client still trusts it (500 ms).
  std::this_thread::sleep_for(400ms);
  expect_in_order(client.measure_batch(fake_batch(3, 5)), 3);
  std::this_thread::sleep_for(700ms);  // past the client's liveness window too
  expect_in_order(client.measure_batch(fake_batch(2, 5)), 2);
  EXPECT_EQ(client.stats().deaths, 0);
  EXPECT_EQ(client.stats().retried, 0);
}

TEST(MeasurerClient, IsAMeasurementBackend) {
  DaemonThread a;
  MeasurerClient client({a.endpoint()}, fast_client());
  MeasurementBackend &backend = client;
  const MeasureResult r = backend.measure(testing::fake_request(9));
  EXPECT_EQ(r.status, MeasureStatus::kOk);
  EXPECT_DOUBLE_EQ(r.compile_seconds, 9);
  EXPECT_TRUE(client.measure_batch({}).empty());
}

TEST(MeasurerClient, FrozenMeasurerIsDeclaredDeadAndItsRequestRetriedElsewhere) {
  BrokenMeasurer frozen(BrokenMeasurer::Mode::kFreeze);
  DaemonThread b;
  MeasurerClient client({frozen.endpoint(), b.endpoint()}, fast_client());
  const auto start = std::chrono::steady_clock::now();
  expect_in_order(client.measure_batch(fake_batch(4, 20)), 4);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_EQ(frozen.measures(), 1);
  const auto stats = client.stats();
  EXPECT_GE(stats.deaths, 1);
  EXPECT_EQ(stats.retried, 1);
  EXPECT_EQ(stats.answered[1], 4);
}

TEST(MeasurerClient, RestartedMeasurerThatForgotTheRequestLosesItToAnother) {
  BrokenMeasurer forgetful(BrokenMeasurer::Mode::kForget);
  DaemonThread b;
  MeasurerClient client({forgetful.endpoint(), b.endpoint()}, fast_client());
  expect_in_order(client.measure_batch(fake_batch(3, 50)), 3);
  EXPECT_GE(forgetful.measures(), 1);
  EXPECT_EQ(client.stats().retried, forgetful.measures());
  EXPECT_EQ(client.stats().answered[1], 3);
}

TEST(MeasurerClient, ARequestMissingFromAMeasurersHeartbeatIsRetriedAtOnce) {
  BrokenMeasurer dropping(BrokenMeasurer::Mode::kDrop);
  DaemonThread b;
  // The request timeout stays at its default (minutes): only the heartbeats can tell.
  MeasurerClient client({dropping.endpoint(), b.endpoint()}, fast_client());
  const auto start = std::chrono::steady_clock::now();
  expect_in_order(client.measure_batch(fake_batch(3, 20)), 3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_GE(dropping.measures(), 1);
  EXPECT_EQ(client.stats().lost, dropping.measures());
  EXPECT_EQ(client.stats().deaths, 0);
  EXPECT_EQ(client.stats().answered[1], 3);
}

TEST(MeasurerClient, ADeadlineCancelsWhatIsUnansweredAndTheMeasurerDropsIt) {
  DaemonThread shared;
  std::thread holder([&] {
    MeasurerClient other({shared.endpoint()}, fast_client());
    MeasureRequest hang = testing::fake_request(0, 0);
    hang.app.params["hang"] = "1";
    EXPECT_EQ(other.measure(hang).status, MeasureStatus::kOk);
  });
  while (shared.state().started.load() == 0) std::this_thread::sleep_for(5ms);

  MeasurerClient client({shared.endpoint()}, fast_client());
  const auto start = std::chrono::steady_clock::now();
  client.set_deadline(start + 300ms);
  const auto results = client.measure_batch(fake_batch(2, 10));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  ASSERT_EQ(results.size(), 2u);
  for (const auto &r : results) {
    EXPECT_EQ(r.status, MeasureStatus::kCancelled);
    EXPECT_NE(r.error.find("deadline"), std::string::npos) << r.error;
  }
  EXPECT_EQ(client.stats().cancelled, 2);
  // The one request sent was queued behind the hanging one; the measurer drops it.
  for (int i = 0; i < 200 && shared.daemon().stats().cancelled == 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(shared.daemon().stats().cancelled, 1);

  // The deadline holds for later batches, which send nothing, until it is cleared.
  const int64_t sent = client.stats().sent;
  EXPECT_EQ(client.measure(testing::fake_request(5)).status, MeasureStatus::kCancelled);
  EXPECT_EQ(client.stats().sent, sent);
  shared.state().release();
  holder.join();
  client.clear_deadline();
  const MeasureResult after = client.measure(testing::fake_request(5));
  EXPECT_EQ(after.status, MeasureStatus::kOk) << after.error;
  EXPECT_EQ(shared.state().started.load(), 2) << "a cancelled request was measured";
}

TEST(MeasurerClient, CancelAllFromAnotherThreadEndsTheRunningBatch) {
  auto stuck_state = std::make_shared<testing::FakeState>();
  stuck_state->hang_every_request = true;
  DaemonThread stuck(stuck_state);
  MeasurerClient client({stuck.endpoint()}, fast_client());
  std::thread canceller([&] {
    while (stuck_state->started.load() == 0) std::this_thread::sleep_for(5ms);
    client.cancel_all();
  });
  const auto start = std::chrono::steady_clock::now();
  const MeasureResult r = client.measure(testing::fake_request(1));
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(r.status, MeasureStatus::kCancelled);
}

TEST(MeasurerClient, HungMeasurementTimesOutAndIsRetriedElsewhere) {
  auto stuck_state = std::make_shared<testing::FakeState>();
  stuck_state->hang_every_request = true;
  DaemonThread stuck(stuck_state), good;
  ClientOptions options = fast_client();
  options.request_timeout = 400ms;
  MeasurerClient client({stuck.endpoint(), good.endpoint()}, options);
  expect_in_order(client.measure_batch(fake_batch(4, 20)), 4);
  // The stuck measurer still heartbeats, but gets no new work while it holds the old one.
  EXPECT_EQ(stuck_state->started.load(), 1);
  EXPECT_EQ(client.stats().retried, 1);
  EXPECT_EQ(client.stats().deaths, 0);
}

TEST(MeasurerClient, AMeasurerThatCannotMeasureLosesItsRequestsToAnother) {
  auto broken_state = std::make_shared<testing::FakeState>();
  broken_state->broken_every_request = true;
  DaemonThread broken(broken_state), good;
  MeasurerClient client({broken.endpoint(), good.endpoint()}, fast_client());
  expect_in_order(client.measure_batch(fake_batch(4, 20)), 4);
  EXPECT_GE(broken_state->started.load(), 1);
  EXPECT_EQ(client.stats().retried, broken_state->started.load());
}

TEST(MeasurerClient, ShuttingDownMeasurerHandsItsRequestToAnother) {
  auto stuck_state = std::make_shared<testing::FakeState>();
  stuck_state->hang_every_request = true;
  DaemonThread leaving(stuck_state), good;
  MeasurerClient client({leaving.endpoint(), good.endpoint()}, fast_client());
  std::thread stopper([&] {
    while (stuck_state->started.load() == 0) std::this_thread::sleep_for(5ms);
    leaving.daemon().stop();
  });
  expect_in_order(client.measure_batch(fake_batch(3, 100)), 3);
  stopper.join();
  EXPECT_EQ(client.stats().retried, 1);
}

TEST(MeasurerClient, ClientsSharingAMeasurerWaitInItsQueueWithoutTimingOut) {
  DaemonThread shared;
  ClientOptions options = fast_client();
  // Shorter than the time a request waits behind the other clients' (up to 5 x 300 ms),
  // longer than one measurement: the clock runs only once the measurement has started.
  options.request_timeout = 1000ms;
  std::vector<std::thread> clients;
  std::vector<std::vector<MeasureResult>> results(3);
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&, c] {
      MeasurerClient client({shared.endpoint()}, options);
      results[c] = client.measure_batch(fake_batch(2, 300));
    });
  }
  for (auto &t : clients) t.join();
  for (const auto &r : results) expect_in_order(r, 2);
  EXPECT_EQ(shared.state().started.load(), 6) << "a request was sent twice";
  EXPECT_EQ(shared.state().max_active.load(), 1);
}

TEST(MeasurerClient, UnreachableMeasurersGiveTimeoutResultsNamingThem) {
  const std::string a = "tcp://127.0.0.1:" + std::to_string(testing::free_loopback_port());
  const std::string b = "tcp://127.0.0.1:" + std::to_string(testing::free_loopback_port());
  ClientOptions options = fast_client();
  options.no_measurer_timeout = 500ms;
  MeasurerClient client({a, b}, options);
  const auto start = std::chrono::steady_clock::now();
  const auto results = client.measure_batch(fake_batch(3, 0));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  ASSERT_EQ(results.size(), 3u);
  for (const auto &r : results) {
    EXPECT_EQ(r.status, MeasureStatus::kTimeout);
    EXPECT_NE(r.error.find("no measurer usable"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find(a), std::string::npos) << r.error;
    EXPECT_NE(r.error.find(b), std::string::npos) << r.error;
  }
}

TEST(MeasurerClient, GivesUpAfterMaxAttemptsAndSaysWhatHappenedToEach) {
  auto stuck = std::make_shared<testing::FakeState>();
  stuck->hang_every_request = true;
  DaemonThread a(stuck), b(stuck);
  ClientOptions options = fast_client();
  options.request_timeout = 300ms;
  options.max_attempts = 2;
  MeasurerClient client({a.endpoint(), b.endpoint()}, options);
  const auto results = client.measure_batch(fake_batch(1, 0));
  ASSERT_EQ(results.size(), 1u);
  const MeasureResult &r = results[0];
  EXPECT_EQ(r.status, MeasureStatus::kTimeout);
  EXPECT_NE(r.error.find("after 2 attempts"), std::string::npos) << r.error;
  // One attempt on each (whichever answered its first ping first got attempt 1).
  EXPECT_NE(r.error.find("attempt 1 on "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("attempt 2 on "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(a.endpoint() + ": no result within 0.3 s"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(b.endpoint() + ": no result within 0.3 s"), std::string::npos) << r.error;
  EXPECT_EQ(client.stats().gave_up, 1);
}

TEST(MeasurerClient, RefusedRequestIsAnsweredNotRetried) {
  DaemonThread a, b;
  MeasurerClient client({a.endpoint(), b.endpoint()}, fast_client());
  MeasureRequest bad = testing::fake_request(0);
  bad.schedule.kind = ScheduleKind::kProtuner;  // without its schedule JSON
  const auto results = client.measure_batch({bad, testing::fake_request(1)});
  EXPECT_EQ(results[0].status, MeasureStatus::kBadRequest);
  EXPECT_NE(results[0].error.find("request.schedule.json"), std::string::npos) << results[0].error;
  EXPECT_EQ(results[1].status, MeasureStatus::kOk);
  EXPECT_EQ(client.stats().retried, 0);
}

TEST(MeasurerClient, BadOptionsAreRefused) {
  ClientOptions bad;
  bad.max_attempts = 0;
  EXPECT_THROW(MeasurerClient({"tcp://127.0.0.1:1"}, bad), ConfigError);
  EXPECT_THROW(MeasurerClient({"not an endpoint"}, {}), ConfigError);
}

}  // namespace
}  // namespace protuner
