// The measurer daemon, in process on loopback with a fake backend: it answers requests,
// runs them one at a time whoever sends them, stays responsive (heartbeats) while
// measuring, refuses malformed messages with an error and keeps serving, exports its
// metrics, and tells waiting clients to go elsewhere when it stops.
#include "measurer/measurer_daemon.h"

#include <gtest/gtest.h>

#include <functional>
#include <prometheus/registry.h>

#include "common/metrics_server.h"
#include "tests/measurer/service_test_support.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

using namespace std::chrono_literals;
using testing::DaemonThread;
using testing::RawPeer;
using wire::MessageType;

TEST(MeasurerDaemon, AnswersAMeasureRequestWithTheBackendResult) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send(wire::measure_message("r-1", testing::fake_request(42)));
  const auto reply = peer.expect(MessageType::kResult);
  ASSERT_TRUE(reply) << "no result within 5 s";
  EXPECT_EQ(reply->id, "r-1");
  const MeasureResult result = wire::read_result(*reply);
  EXPECT_EQ(result.status, MeasureStatus::kOk);
  EXPECT_DOUBLE_EQ(result.compile_seconds, 42);
  EXPECT_EQ(d.daemon().stats().measured, 1);
}

TEST(MeasurerDaemon, GreetsANewClientWithReady) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send(wire::Message{MessageType::kHeartbeat, "", "{}"});
  const auto ready = peer.expect(MessageType::kReady);
  ASSERT_TRUE(ready);
  EXPECT_EQ(wire::read_ready(*ready).heartbeat_ms, 100);
  ASSERT_TRUE(peer.expect(MessageType::kHeartbeat)) << "the ping was not answered";
}

TEST(MeasurerDaemon, RunsRequestsFromManyClientsOneAtATime) {
  DaemonThread d;
  constexpr int kClients = 3, kEach = 3;
  std::vector<std::unique_ptr<RawPeer>> peers;
  for (int c = 0; c < kClients; ++c) {
    peers.push_back(std::make_unique<RawPeer>(d.endpoint()));
    for (int i = 0; i < kEach; ++i) {
      peers[c]->send(wire::measure_message("c" + std::to_string(c) + "-" + std::to_string(i),
                                           testing::fake_request(c * 10 + i, 30)));
    }
  }
  for (int c = 0; c < kClients; ++c) {
    for (int i = 0; i < kEach; ++i) {
      const auto reply = peers[c]->expect(MessageType::kResult);
      ASSERT_TRUE(reply) << "client " << c << " got only " << i << " results";
      // Each client gets its own results, in the order it sent them.
      EXPECT_EQ(reply->id, "c" + std::to_string(c) + "-" + std::to_string(i));
      EXPECT_DOUBLE_EQ(wire::read_result(*reply).compile_seconds, c * 10 + i);
    }
  }
  EXPECT_EQ(d.state().max_active.load(), 1) << "two measurements ran at once";
  EXPECT_EQ(d.state().started.load(), kClients * kEach);
  EXPECT_GE(d.daemon().stats().max_queue_length, 2);
}

TEST(MeasurerDaemon, AnswersHeartbeatsWhileMeasuring) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send(wire::measure_message("slow", testing::fake_request(1, 1500)));
  // Pings during the measurement are answered, and say the daemon is busy with our request.
  std::this_thread::sleep_for(200ms);
  for (int i = 0; i < 3; ++i) {
    peer.send(wire::Message{MessageType::kHeartbeat, "", "{}"});
    const auto hb = peer.expect(MessageType::kHeartbeat, 500ms);
    ASSERT_TRUE(hb) << "no heartbeat while measuring (ping " << i << ")";
    const auto body = wire::read_heartbeat(*hb);
    EXPECT_TRUE(body.busy);
    EXPECT_EQ(body.running, "slow");
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_TRUE(peer.expect(MessageType::kResult, 3000ms));
}

TEST(MeasurerDaemon, SendsPeriodicHeartbeatsToAClientThatIsWaiting) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send(wire::measure_message("slow", testing::fake_request(1, 800)));
  // The client never pings; heartbeats (interval 100 ms) still arrive while it waits.
  int heartbeats = 0;
  while (peer.expect(MessageType::kHeartbeat, 300ms)) {
    if (++heartbeats == 4) break;
  }
  EXPECT_EQ(heartbeats, 4);
}

TEST(MeasurerDaemon, HeartbeatTellsWhichOfMyRequestsAreQueued) {
  DaemonThread d;
  RawPeer mine(d.endpoint()), other(d.endpoint());
  other.send(wire::measure_message("theirs", testing::fake_request(1, 700)));
  ASSERT_TRUE(other.expect(MessageType::kReady));
  mine.send(wire::measure_message("mine", testing::fake_request(2, 10)));
  std::this_thread::sleep_for(100ms);
  mine.send(wire::Message{MessageType::kHeartbeat, "", "{}"});
  const auto hb = mine.expect(MessageType::kHeartbeat);
  ASSERT_TRUE(hb);
  const auto body = wire::read_heartbeat(*hb);
  EXPECT_TRUE(body.busy);
  EXPECT_EQ(body.running, "");  // running someone else's
  EXPECT_EQ(body.queue_length, 1);
  EXPECT_EQ(body.pending, std::vector<std::string>{"mine"});
}

// After each malformed message, the daemon answers with an error and still serves.
struct MalformedCase {
  std::string name;
  std::string frame;
  std::string expected;  // in the error text
};

class MalformedMessage : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedMessage, GetsAnErrorReplyAndTheDaemonKeepsServing) {
  const MalformedCase &c = GetParam();
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send_frame(c.frame);
  const auto error = peer.expect(MessageType::kError);
  ASSERT_TRUE(error) << "no error reply to: " << c.frame;
  const auto body = wire::read_error(*error);
  EXPECT_NE(body.error.find(c.expected), std::string::npos) << body.error;
  EXPECT_FALSE(body.retry);
  EXPECT_EQ(d.daemon().stats().wire_errors, 1);

  peer.send(wire::measure_message("after", testing::fake_request(5)));
  const auto reply = peer.expect(MessageType::kResult);
  ASSERT_TRUE(reply) << "the daemon stopped serving after: " << c.frame;
  EXPECT_EQ(wire::read_result(*reply).status, MeasureStatus::kOk);
}

INSTANTIATE_TEST_SUITE_P(
    MeasurerDaemon, MalformedMessage,
    ::testing::Values(
        MalformedCase{"GarbageBytes", std::string("\x00\xff\x13garbage", 10), "not JSON"},
        MalformedCase{"WrongVersion",
                      R"({"protocol": "protuner-measure", "version": 1, "type": "measure", "id": "a"})",
                      "version 1 is not supported"},
        MalformedCase{"UnknownType",
                      R"({"protocol": "protuner-measure", "version": 2, "type": "launch", "id": "a"})",
                      "unknown message type 'launch'"},
        MalformedCase{"WrongProtocol", R"({"protocol": "carrier-pigeon", "version": 1, "type": "measure"})",
                      "unknown protocol"},
        MalformedCase{"DaemonOnlyType",
                      R"({"protocol": "protuner-measure", "version": 2, "type": "result", "id": "a"})",
                      "not result"}),
    [](const ::testing::TestParamInfo<MalformedCase> &info) { return info.param.name; });

TEST(MeasurerDaemon, ErrorForAWrongVersionNamesTheRequestId) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send_frame(R"({"protocol": "protuner-measure", "version": 7, "type": "measure", "id": "r-7"})");
  const auto error = peer.expect(MessageType::kError);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, "r-7");
}

TEST(MeasurerDaemon, BadRequestBodyGetsABadRequestResult) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send_frame(R"({"protocol": "protuner-measure", "version": 2, "type": "measure", "id": "b-1",)"
                  R"( "body": {"app": {"name": "x"}, "schedule": {"kind": "root"}, "target": "host"}})");
  const auto reply = peer.expect(MessageType::kResult);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->id, "b-1");
  const MeasureResult result = wire::read_result(*reply);
  EXPECT_EQ(result.status, MeasureStatus::kBadRequest);
  EXPECT_NE(result.error.find("request.app"), std::string::npos) << result.error;
  EXPECT_EQ(d.state().started.load(), 0) << "a refused request reached the backend";
  EXPECT_EQ(d.daemon().stats().bad_requests, 1);
}

TEST(MeasurerDaemon, ExtraFramesAreRefused) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  const std::string ping = wire::format_message({MessageType::kHeartbeat, "", "{}"});
  peer.send_frames({ping, ping});
  const auto error = peer.expect(MessageType::kError);
  ASSERT_TRUE(error);
  EXPECT_NE(wire::read_error(*error).error.find("expected one message frame"), std::string::npos);
}

TEST(MeasurerDaemon, ServesReqStylePeersOneReplyPerRequest) {
  DaemonThread d;
  RawPeer peer(d.endpoint(), zmq::socket_type::req);
  // A REQ socket takes only the first reply to each request: no greeting, no heartbeats.
  peer.send(wire::measure_message("req-1", testing::fake_request(3)));
  const auto reply = peer.expect(MessageType::kResult);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->id, "req-1");
  peer.send(wire::Message{MessageType::kHeartbeat, "", "{}"});
  EXPECT_TRUE(peer.expect(MessageType::kHeartbeat));
  for (const auto &m : peer.received) EXPECT_NE(m.type, MessageType::kReady);
}

TEST(MeasurerDaemon, BackendThatThrowsBecomesAFailureResult) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  MeasureRequest bomb = testing::fake_request(1);
  bomb.app.params["throw"] = "1";
  peer.send(wire::measure_message("bomb", bomb));
  const auto reply = peer.expect(MessageType::kResult);
  ASSERT_TRUE(reply);
  const MeasureResult result = wire::read_result(*reply);
  EXPECT_EQ(result.status, MeasureStatus::kRuntimeCrash);
  EXPECT_NE(result.error.find("fake backend exploded"), std::string::npos) << result.error;
  peer.send(wire::measure_message("next", testing::fake_request(2)));
  EXPECT_TRUE(peer.expect(MessageType::kResult));
}

TEST(MeasurerDaemon, RequireSmtOffIsForcedOnEveryRequest) {
  auto options = DaemonThread::fast_options();
  options.require_smt_off = true;
  DaemonThread d(std::make_shared<testing::FakeState>(), options);
  RawPeer peer(d.endpoint());
  peer.send(wire::measure_message("r", testing::fake_request(1)));
  const auto reply = peer.expect(MessageType::kResult);
  ASSERT_TRUE(reply);
  EXPECT_EQ(wire::read_result(*reply).host.smt, "required off");
}

TEST(MeasurerDaemon, ExportsPrometheusMetrics) {
  MetricsServer metrics("127.0.0.1:0");
  DaemonThread d(std::make_shared<testing::FakeState>(), DaemonThread::fast_options(),
                 &metrics.registry());
  RawPeer peer(d.endpoint());
  peer.send(wire::measure_message("r1", testing::fake_request(1)));
  peer.send(wire::measure_message("r2", testing::fake_request(2)));
  peer.send_frame("garbage");
  ASSERT_TRUE(peer.expect(MessageType::kResult));
  ASSERT_TRUE(peer.expect(MessageType::kResult));
  const std::string page = testing::http_get(metrics.port(), "/metrics");
  EXPECT_NE(page.find("protuner_measurer_requests_total{status=\"ok\"} 2"), std::string::npos)
      << page;
  EXPECT_NE(page.find("protuner_measurer_requests_total{status=\"timeout\"} 0"), std::string::npos);
  EXPECT_NE(page.find("protuner_measurer_wire_errors_total 1"), std::string::npos);
  EXPECT_NE(page.find("protuner_measurer_queue_length 0"), std::string::npos);
  EXPECT_NE(page.find("protuner_measurer_busy 0"), std::string::npos);
  EXPECT_NE(page.find("protuner_measurer_measurement_seconds_count 2"), std::string::npos);
  // The fake's compile_seconds is the request's index: 1 + 2.
  EXPECT_NE(page.find("protuner_measurer_compile_seconds_total{app=\"fake\"} 3"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("protuner_measurer_busy_seconds_total{app=\"fake\"} "), std::string::npos);
}

TEST(MeasurerDaemon, StopTellsWaitingClientsToRetryElsewhere) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  MeasureRequest hang = testing::fake_request(1, 0);
  hang.app.params["hang"] = "1";
  peer.send(wire::measure_message("running", hang));
  peer.send(wire::measure_message("queued", testing::fake_request(2)));
  ASSERT_TRUE(peer.expect(MessageType::kReady));
  while (d.state().started.load() == 0) std::this_thread::sleep_for(10ms);

  // Stop while the fake hangs: the daemon answers both at once, then waits for the worker.
  d.daemon().stop();
  std::vector<std::string> told;
  for (int i = 0; i < 2; ++i) {
    const auto error = peer.expect(MessageType::kError);
    ASSERT_TRUE(error) << "a waiting client was not told";
    EXPECT_TRUE(wire::read_error(*error).retry);
    told.push_back(error->id);
  }
  d.stop();  // releases the fake; run() returns
  std::sort(told.begin(), told.end());
  EXPECT_EQ(told, (std::vector<std::string>{"queued", "running"}));
  EXPECT_EQ(d.state().started.load(), 1) << "a queued request ran after stop";
}

TEST(MeasurerDaemon, BindsLoopbackOnlyAndSaysWhyOtherwise) {
  for (const char *endpoint :
       {"tcp://*:0", "tcp://0.0.0.0:0", "tcp://eth0:0", "tcp://192.168.1.2:5555"}) {
    auto options = DaemonThread::fast_options();
    options.bind = endpoint;
    try {
      MeasurerDaemon daemon(options, std::make_unique<testing::FakeBackend>(
                                         std::make_shared<testing::FakeState>()));
      ADD_FAILURE() << endpoint << " was bound";
    } catch (const ConfigError &e) {
      EXPECT_NE(std::string(e.what()).find("not a loopback endpoint"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(endpoint), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(MeasurerDaemonOptions{}.bind, "tcp://127.0.0.1:5555");
  for (const char *yes : {"tcp://127.0.0.1:5", "tcp://127.1.2.3:*", "tcp://localhost:5",
                          "tcp://[::1]:5", "ipc:///tmp/protuner.sock", "inproc://x"}) {
    EXPECT_TRUE(is_loopback_endpoint(yes)) << yes;
  }
  for (const char *no : {"tcp://127.0.0.1.example.com:5", "tcp://1270.0.0.1:5",
                         "tcp://127.0.0.256:5", "tcp://127.0.0:5", "tcp://127.0.0.1",
                         "udp://127.0.0.1:5", "tcp://10.0.0.1:5"}) {
    EXPECT_FALSE(is_loopback_endpoint(no)) << no;
  }
}

TEST(MeasurerDaemon, ClampsWhatARequestAsksForToItsLimits) {
  auto options = DaemonThread::fast_options();
  options.limits = {10, 5, 1000, 7};
  DaemonThread d(std::make_shared<testing::FakeState>(), options);
  RawPeer peer(d.endpoint());
  MeasureRequest greedy = testing::fake_request(1);
  greedy.settings.compile_timeout_seconds = 3600;
  greedy.settings.run_timeout_seconds = 1e9;
  greedy.settings.memory_limit_mb = 1 << 20;
  greedy.settings.timing.samples = 500;
  greedy.settings.timing.max_samples = 1000;
  MeasureRequest modest = testing::fake_request(2);
  modest.settings.compile_timeout_seconds = 2;
  modest.settings.run_timeout_seconds = 1;
  modest.settings.memory_limit_mb = 100;
  modest.settings.timing.samples = 3;
  modest.settings.timing.max_samples = 5;
  peer.send(wire::measure_message("greedy", greedy));
  peer.send(wire::measure_message("modest", modest));
  ASSERT_TRUE(peer.expect(MessageType::kResult));
  ASSERT_TRUE(peer.expect(MessageType::kResult));
  std::lock_guard<std::mutex> lock(d.state().mutex);
  ASSERT_EQ(d.state().seen.size(), 2u);
  const MeasureSettings &g = d.state().seen[0].settings;
  EXPECT_DOUBLE_EQ(g.compile_timeout_seconds, 10);
  EXPECT_DOUBLE_EQ(g.run_timeout_seconds, 5);
  EXPECT_EQ(g.memory_limit_mb, 1000);
  EXPECT_EQ(g.timing.samples, 7);
  EXPECT_EQ(g.timing.max_samples, 7);
  const MeasureSettings &m = d.state().seen[1].settings;
  EXPECT_DOUBLE_EQ(m.compile_timeout_seconds, 2);
  EXPECT_DOUBLE_EQ(m.run_timeout_seconds, 1);
  EXPECT_EQ(m.memory_limit_mb, 100);
  EXPECT_EQ(m.timing.samples, 3);
  EXPECT_EQ(m.timing.max_samples, 5);
}

TEST(MeasurerDaemon, ClampToLimitsSaysWhatItLowered) {
  MeasureSettings s;
  s.compile_timeout_seconds = 1000;
  EXPECT_EQ(clamp_to_limits(s, {}), "compile timeout 1000 s -> 900 s");
  EXPECT_EQ(clamp_to_limits(s, {}), "");
}

// A request held by a hanging measurement, so what a test sends next waits in the queue.
MeasureRequest hanging_request() {
  MeasureRequest hang = testing::fake_request(0, 0);
  hang.app.params["hang"] = "1";
  return hang;
}

void wait_until(const std::function<bool()> &done, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
}

TEST(MeasurerDaemon, CancelDropsAQueuedRequestAndAnswersItCancelled) {
  DaemonThread d;
  RawPeer holder(d.endpoint()), peer(d.endpoint());
  holder.send(wire::measure_message("running", hanging_request()));
  wait_until([&] { return d.state().started.load() == 1; });
  peer.send(wire::measure_message("queued", testing::fake_request(2)));
  peer.send(wire::cancel_message("queued"));
  const auto reply = peer.expect(MessageType::kResult);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->id, "queued");
  EXPECT_EQ(wire::read_result(*reply).status, MeasureStatus::kCancelled);
  EXPECT_EQ(d.daemon().stats().cancelled, 1);

  // Cancelling what is running, or what the daemon never had, changes nothing.
  holder.send(wire::cancel_message("running"));
  peer.send(wire::cancel_message("never-sent"));
  peer.send(wire::ping_message(1));
  ASSERT_TRUE(peer.expect(MessageType::kHeartbeat));
  d.state().release();
  const auto running = holder.expect(MessageType::kResult);
  ASSERT_TRUE(running);
  EXPECT_EQ(wire::read_result(*running).status, MeasureStatus::kOk);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(d.state().started.load(), 1) << "the cancelled request was measured";
  EXPECT_EQ(d.daemon().stats().cancelled, 1);
  EXPECT_EQ(d.daemon().stats().wire_errors, 0);
  for (const auto &m : peer.received) EXPECT_NE(m.type, MessageType::kError) << m.body;
}

TEST(MeasurerDaemon, DropsTheQueuedRequestsOfAClientThatWentSilent) {
  auto options = DaemonThread::fast_options();
  options.abandon_after = 300ms;
  DaemonThread d(std::make_shared<testing::FakeState>(), options);
  RawPeer holder(d.endpoint()), silent(d.endpoint()), pinging(d.endpoint());
  holder.send(wire::measure_message("running", hanging_request()));
  wait_until([&] { return d.state().started.load() == 1; });
  silent.send(wire::measure_message("silent", testing::fake_request(1)));
  pinging.send(wire::measure_message("pinging", testing::fake_request(2)));
  // One client keeps pinging, as MeasurerClient does while it waits; the other is gone.
  for (int i = 1; i <= 10; ++i) {
    pinging.send(wire::ping_message(i));
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(d.daemon().stats().abandoned, 1);
  d.state().release();
  const auto reply = pinging.expect(MessageType::kResult);
  ASSERT_TRUE(reply) << "the waiting client's request was dropped";
  EXPECT_EQ(reply->id, "pinging");
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(d.state().started.load(), 2) << "the silent client's request was measured";
}

TEST(MeasurerDaemon, HeartbeatsAcknowledgeTheHighestPingRead) {
  DaemonThread d;
  RawPeer peer(d.endpoint());
  peer.send(wire::ping_message(5));
  auto hb = peer.expect(MessageType::kHeartbeat);
  ASSERT_TRUE(hb);
  EXPECT_EQ(wire::read_heartbeat(*hb).seq, 5);
  peer.send(wire::ping_message(3));  // reordered pings never move the acknowledgement back
  hb = peer.expect(MessageType::kHeartbeat);
  ASSERT_TRUE(hb);
  EXPECT_EQ(wire::read_heartbeat(*hb).seq, 5);
  // The periodic heartbeats to a waiting client carry it too.
  peer.send(wire::measure_message("slow", testing::fake_request(1, 500)));
  hb = peer.expect(MessageType::kHeartbeat);
  ASSERT_TRUE(hb);
  EXPECT_EQ(wire::read_heartbeat(*hb).seq, 5);
  EXPECT_TRUE(peer.expect(MessageType::kResult));
}

TEST(MeasurerDaemon, AClientReturningUnderItsRoutingIdGetsItsReply) {
  DaemonThread d;
  const std::string id = wire::client_routing_id("0123456789abcdef", 0);
  // The first connection stays open, as a half-open TCP connection the daemon has not
  // noticed is gone: the reply must follow the client to its new connection.
  RawPeer before(d.endpoint(), zmq::socket_type::dealer, id);
  before.send(wire::measure_message("slow", testing::fake_request(7, 600)));
  ASSERT_TRUE(before.expect(MessageType::kReady));
  RawPeer after(d.endpoint(), zmq::socket_type::dealer, id);
  after.send(wire::ping_message(1));
  const auto reply = after.expect(MessageType::kResult, 3000ms);
  ASSERT_TRUE(reply) << "the reply went to the old connection";
  EXPECT_EQ(reply->id, "slow");
  EXPECT_DOUBLE_EQ(wire::read_result(*reply).compile_seconds, 7);
}

TEST(MeasurerDaemon, BindingABusyEndpointThrowsIoError) {
  DaemonThread first;
  auto options = DaemonThread::fast_options();
  options.bind = first.endpoint();
  EXPECT_THROW(MeasurerDaemon(options, std::make_unique<testing::FakeBackend>(
                                           std::make_shared<testing::FakeState>())),
               IoError);
}

}  // namespace
}  // namespace protuner
