// RedisClient against a real redis-server the test starts on a free loopback port.
#include "common/redis_client.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

TEST(RedisClient, SetThenGetRoundTripsBinarySafeValues) {
  testing::RedisServer server;
  RedisClient client("127.0.0.1", server.port());
  EXPECT_TRUE(client.ping());
  const std::string value("a\0b\nc", 5);
  client.set("protuner:test", value);
  EXPECT_EQ(client.get("protuner:test"), value);
}

TEST(RedisClient, MissingKeyIsEmpty) {
  testing::RedisServer server;
  RedisClient client("127.0.0.1", server.port());
  EXPECT_FALSE(client.get("no-such-key").has_value());
}

TEST(RedisClient, ArraysAndIntegersConvert) {
  testing::RedisServer server;
  RedisClient client("127.0.0.1", server.port());
  EXPECT_EQ(client.command({"RPUSH", "l", "x", "y"}).integer, 2);
  RedisReply r = client.command({"LRANGE", "l", "0", "-1"});
  ASSERT_EQ(r.kind, RedisReply::Kind::kArray);
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[1].str, "y");
}

TEST(RedisClient, ErrorReplyThrowsReplyErrorAndConnectionStaysUsable) {
  testing::RedisServer server;
  RedisClient client("127.0.0.1", server.port());
  client.set("s", "not a number");
  EXPECT_THROW(client.command({"INCR", "s"}), ReplyError);
  EXPECT_TRUE(client.ping());
}

TEST(RedisClient, UnreachableServerThrowsIoErrorNamingTheEndpoint) {
  const int port = testing::free_loopback_port();
  try {
    RedisClient client("127.0.0.1", port);
    FAIL() << "connected to a closed port";
  } catch (const IoError &e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos);
  }
}

}  // namespace
}  // namespace protuner
