// The measurer daemon, in process on loopback with a fake backend: it answers requests,
// runs them one at a time whoever sends them, stays responsive (heartbeats) while
// measuring, refuses malformed messages with an error and keeps serving, exports its
// metrics, and tells waiting clients to go elsewhere when it stops.
#include "measurer/measurer_daemon.h"

#include <gtest/gtest.h>
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
                      R"({"protocol": "protuner-measure", "version": 2, "type": "measure", "id": "a"})",
                      "version 2 is not supported"},
        MalformedCase{"UnknownType",
                      R"({"protocol": "protuner-measure", "version": 1, "type": "launch", "id": "a"})",
                      "unknown message type 'launch'"},
        MalformedCase{"WrongProtocol", R"({"protocol": "carrier-pigeon", "version": 1, "type": "measure"})",
                      "unknown protocol"},
        MalformedCase{"DaemonOnlyType",
                      R"({"protocol": "protuner-measure", "version": 1, "type": "result", "id": "a"})",
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
  peer.send_frame(R"({"protocol": "protuner-measure", "version": 1, "type": "measure", "id": "b-1",)"
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
