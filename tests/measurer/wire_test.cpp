// The measurer wire protocol: every message type round-trips, and every malformed envelope
// or body is refused with a WireError naming what is wrong (never a crash, never a
// silently misread message).
#include "measurer/wire.h"

#include <gtest/gtest.h>

#include "tests/measurer/service_test_support.h"

namespace protuner {
namespace {

using wire::MessageType;

std::string envelope(const std::string &fields) { return "{" + fields + "}"; }
const std::string kHead = R"("protocol": "protuner-measure", "version": 2, )";

// The WireError text parse_message throws for `frame`, or "" when it parses.
std::string parse_error(const std::string &frame) {
  try {
    wire::parse_message(frame);
  } catch (const wire::WireError &e) {
    return e.what();
  }
  return "";
}

TEST(Wire, MeasureMessageRoundTrips) {
  MeasureRequest r = testing::fake_request(7, 30);
  r.settings.timing.samples = 4;
  const std::string frame = wire::format_message(wire::measure_message("c-1", r));
  const wire::Message m = wire::parse_message(frame);
  EXPECT_EQ(m.type, MessageType::kMeasure);
  EXPECT_EQ(m.id, "c-1");
  const MeasureRequest back = wire::read_measure(m);
  EXPECT_EQ(back.app.params, r.app.params);
  EXPECT_EQ(back.app.generator, "fake");
  EXPECT_EQ(back.schedule.kind, ScheduleKind::kRoot);
  EXPECT_EQ(back.settings.timing.samples, 4);
}

TEST(Wire, ResultMessageRoundTrips) {
  MeasureResult r;
  r.status = MeasureStatus::kWrongOutput;
  r.error = "3 of 100 values differ";
  r.compile_seconds = 1.5;
  const wire::Message m = wire::parse_message(wire::format_message(wire::result_message("x", r)));
  EXPECT_EQ(m.type, MessageType::kResult);
  const MeasureResult back = wire::read_result(m);
  EXPECT_EQ(back.status, MeasureStatus::kWrongOutput);
  EXPECT_EQ(back.error, r.error);
  EXPECT_DOUBLE_EQ(back.compile_seconds, 1.5);
}

TEST(Wire, HeartbeatReadyAndErrorRoundTrip) {
  wire::HeartbeatBody hb{true, 3, "c-2", {"c-2", "c-5"}};
  const auto hb2 = wire::read_heartbeat(
      wire::parse_message(wire::format_message(wire::heartbeat_message(hb))));
  EXPECT_TRUE(hb2.busy);
  EXPECT_EQ(hb2.queue_length, 3);
  EXPECT_EQ(hb2.running, "c-2");
  EXPECT_EQ(hb2.pending, hb.pending);

  const auto ready = wire::read_ready(
      wire::parse_message(wire::format_message(wire::ready_message({250, "some cpu", "ab12"}))));
  EXPECT_EQ(ready.heartbeat_ms, 250);
  EXPECT_EQ(ready.host, "some cpu");
  EXPECT_EQ(ready.instance, "ab12");

  const wire::Message em =
      wire::parse_message(wire::format_message(wire::error_message("c-9", {"going away", true})));
  EXPECT_EQ(em.id, "c-9");
  const auto error = wire::read_error(em);
  EXPECT_EQ(error.error, "going away");
  EXPECT_TRUE(error.retry);
}

TEST(Wire, ClientPingIsAnEmptyHeartbeat) {
  const wire::Message m = wire::parse_message(envelope(kHead + R"("type": "heartbeat")"));
  EXPECT_EQ(m.type, MessageType::kHeartbeat);
  EXPECT_EQ(m.id, "");
  const auto hb = wire::read_heartbeat(m);
  EXPECT_FALSE(hb.busy);
  EXPECT_TRUE(hb.pending.empty());
}

TEST(Wire, PingCarriesItsSequenceAndHeartbeatsAcknowledgeOne) {
  const auto ping =
      wire::read_heartbeat(wire::parse_message(wire::format_message(wire::ping_message(41))));
  EXPECT_EQ(ping.seq, 41);
  EXPECT_TRUE(ping.pending.empty());
  wire::HeartbeatBody hb{false, 0, "", {"a-1"}, 41};
  EXPECT_EQ(wire::read_heartbeat(
                wire::parse_message(wire::format_message(wire::heartbeat_message(hb))))
                .seq,
            41);
  for (const char *seq : {"-3", "\"x\"", "1.5"}) {
    const wire::Message bad = wire::parse_message(
        envelope(kHead + R"("type": "heartbeat", "body": {"seq": )" + seq + "}"));
    EXPECT_THROW(wire::read_heartbeat(bad), wire::WireError) << seq;
  }
}

TEST(Wire, CancelNamesTheRequestItCancels) {
  const wire::Message m =
      wire::parse_message(wire::format_message(wire::cancel_message("c-7")));
  EXPECT_EQ(m.type, MessageType::kCancel);
  EXPECT_EQ(m.id, "c-7");
  EXPECT_NE(parse_error(envelope(kHead + R"("type": "cancel")")).find("without an 'id'"),
            std::string::npos);
}

TEST(Wire, ClientRoutingIdsAreStablePerLinkAndDistinctAcrossClientsAndLinks) {
  EXPECT_EQ(wire::client_routing_id("00ff00ff00ff00ff", 1),
            wire::client_routing_id("00ff00ff00ff00ff", 1));
  EXPECT_NE(wire::client_routing_id("00ff00ff00ff00ff", 1),
            wire::client_routing_id("00ff00ff00ff00ff", 0));
  EXPECT_NE(wire::client_routing_id("00ff00ff00ff00ff", 1),
            wire::client_routing_id("11ff00ff00ff00ff", 1));
  // ZeroMQ reserves routing ids that start with a zero byte.
  EXPECT_NE(wire::client_routing_id("00", 0).front(), '\0');
}

TEST(Wire, GarbageBytesAreNotJson) {
  const std::string garbage("\x01\x02\xff garbage", 12);
  EXPECT_NE(parse_error(garbage).find("not JSON"), std::string::npos) << parse_error(garbage);
  EXPECT_NE(parse_error("").find("not JSON"), std::string::npos);
}

TEST(Wire, EnvelopeMustBeAnObject) {
  EXPECT_NE(parse_error("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(parse_error("\"measure\"").find("must be a JSON object"), std::string::npos);
}

TEST(Wire, WrongOrMissingProtocolIsNamed) {
  EXPECT_NE(parse_error(envelope(R"("protocol": "other", "version": 1, "type": "heartbeat")"))
                .find("unknown protocol 'other'"),
            std::string::npos);
  EXPECT_NE(parse_error(envelope(R"("version": 1, "type": "heartbeat")")).find("'protocol'"),
            std::string::npos);
}

TEST(Wire, WrongVersionNamesBothVersions) {
  const std::string e = parse_error(
      envelope(R"("protocol": "protuner-measure", "version": 1, "type": "heartbeat", "id": "a")"));
  EXPECT_NE(e.find("version 1 is not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("speaks version 2"), std::string::npos) << e;
  EXPECT_NE(parse_error(envelope(R"("protocol": "protuner-measure", "version": "1", "type": "heartbeat")"))
                .find("'version' must be an integer"),
            std::string::npos);
}

TEST(Wire, WrongVersionErrorKeepsTheRequestId) {
  try {
    wire::parse_message(
        envelope(R"("protocol": "protuner-measure", "version": 9, "type": "measure", "id": "r-4")"));
    FAIL() << "version 9 accepted";
  } catch (const wire::WireError &e) {
    EXPECT_EQ(e.id(), "r-4");
  }
}

TEST(Wire, UnknownOrMissingTypeIsNamed) {
  EXPECT_NE(parse_error(envelope(kHead + R"("type": "measurify")")).find("unknown message type 'measurify'"),
            std::string::npos);
  EXPECT_NE(parse_error(envelope(kHead + R"("id": "a")")).find("'type' must be a string"),
            std::string::npos);
}

TEST(Wire, FieldTypesAreChecked) {
  EXPECT_NE(parse_error(envelope(kHead + R"("type": "heartbeat", "id": 5)")).find("'id' must be a string"),
            std::string::npos);
  EXPECT_NE(parse_error(envelope(kHead + R"("type": "heartbeat", "body": [])")).find("'body' must be an object"),
            std::string::npos);
  EXPECT_NE(parse_error(envelope(kHead + R"("type": "heartbeat", "extra": 1)")).find("'extra' is not part"),
            std::string::npos);
}

TEST(Wire, MeasureAndResultNeedAnId) {
  EXPECT_NE(parse_error(envelope(kHead + R"("type": "measure", "body": {})")).find("without an 'id'"),
            std::string::npos);
  EXPECT_NE(parse_error(envelope(kHead + R"("type": "result", "id": "")")).find("without an 'id'"),
            std::string::npos);
}

TEST(Wire, BadMeasureBodyNamesTheFieldAndKeepsTheId) {
  const wire::Message m = wire::parse_message(
      envelope(kHead + R"("type": "measure", "id": "r-1", "body": {"app": 3})"));
  try {
    wire::read_measure(m);
    FAIL() << "a request with app=3 was accepted";
  } catch (const wire::WireError &e) {
    EXPECT_EQ(e.id(), "r-1");
    EXPECT_NE(std::string(e.what()).find("request.app"), std::string::npos) << e.what();
  }
}

TEST(Wire, BadHeartbeatReadyAndErrorBodiesAreRefused) {
  const auto msg = [](const std::string &type, const std::string &body) {
    return wire::parse_message(envelope(kHead + "\"type\": \"" + type + "\", \"body\": " + body));
  };
  EXPECT_THROW(wire::read_heartbeat(msg("heartbeat", R"({"busy": 1})")), wire::WireError);
  EXPECT_THROW(wire::read_heartbeat(msg("heartbeat",
                                        R"({"busy": true, "queue_length": 0, "running": "", "pending": [1]})")),
               wire::WireError);
  EXPECT_THROW(wire::read_ready(msg("ready", R"({"heartbeat_ms": -5, "host": "", "instance": "a"})")), wire::WireError);
  EXPECT_THROW(wire::read_error(msg("error", R"({"error": "x"})")), wire::WireError);
}

TEST(Wire, ReadingTheWrongTypeIsRefused) {
  const wire::Message hb = wire::heartbeat_message({});
  EXPECT_THROW(wire::read_measure(hb), wire::WireError);
  EXPECT_THROW(wire::read_result(hb), wire::WireError);
}

TEST(Wire, FormatRefusesABodyThatIsNotAnObject) {
  EXPECT_THROW(wire::format_message({MessageType::kResult, "a", "[1]"}), wire::WireError);
  EXPECT_THROW(wire::format_message({MessageType::kResult, "a", "not json"}), wire::WireError);
}

}  // namespace
}  // namespace protuner
