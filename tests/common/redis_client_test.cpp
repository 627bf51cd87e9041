// RedisClient against a real redis-server the test starts on a free loopback port: replies
// and error codes, timeouts, pipelines, MULTI/EXEC, Lua scripts and AUTH.
#include "common/redis_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "common/errors.h"
#include "tests/common/redis_test_support.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

using std::chrono::milliseconds;
using testing::elapsed_ms;
using testing::options_for;
using Kind = RedisReply::Kind;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(RedisClient, SetThenGetRoundTripsBinarySafeValues) {
  testing::RedisServer server;
  RedisClient client("127.0.0.1", server.port());
  EXPECT_TRUE(client.ping());
  const std::string value("a\0b\nc\r\n\xff", 8);
  const std::string key("k\0ey", 4);
  client.set(key, value);
  EXPECT_EQ(client.get(key), value);
  EXPECT_FALSE(client.get("k").has_value());
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
  ASSERT_EQ(r.kind, Kind::kArray);
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[1].str, "y");
}

TEST(RedisClient, ErrorReplyThrowsReplyErrorWithItsCodeAndConnectionStaysUsable) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  client.set("s", "not a number");
  const auto code_of = [&](const std::vector<std::string> &args) {
    try {
      client.command(args);
    } catch (const ReplyError &e) {
      EXPECT_TRUE(contains(e.what(), client.endpoint())) << e.what();
      EXPECT_TRUE(contains(e.what(), args[0])) << e.what();
      return e.code();
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(code_of({"INCR", "s"}), "ERR");
  EXPECT_EQ(code_of({"LPUSH", "s", "x"}), "WRONGTYPE");
  EXPECT_EQ(client.command({"XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM"}).str, "OK");
  EXPECT_EQ(code_of({"XGROUP", "CREATE", "jobs", "workers", "$"}), "BUSYGROUP");
  EXPECT_EQ(code_of({"XREADGROUP", "GROUP", "nobody", "c", "STREAMS", "jobs", ">"}), "NOGROUP");
  EXPECT_TRUE(client.connected());
  EXPECT_TRUE(client.ping());
}

TEST(RedisClient, ErrorsNestedInArraysAreErrorElements) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  const RedisReply r =
      client.command({"EVAL", "return {1, redis.error_reply('BOOM it broke'), 'x'}", "0"});
  ASSERT_EQ(r.kind, Kind::kArray);
  ASSERT_EQ(r.elements.size(), 3u);
  EXPECT_EQ(r.elements[0].integer, 1);
  EXPECT_TRUE(r.elements[1].is_error());
  EXPECT_EQ(r.elements[1].str, "BOOM it broke");
  EXPECT_EQ(r.elements[1].error_code(), "BOOM");
  EXPECT_EQ(r.elements[2].kind, Kind::kString);
  EXPECT_EQ(r.elements[2].error_code(), "");
}

TEST(RedisClient, UnreachableServerThrowsIoErrorNamingTheEndpoint) {
  const int port = testing::free_loopback_port();
  try {
    RedisClient client("127.0.0.1", port);
    FAIL() << "connected to a closed port";
  } catch (const IoError &e) {
    EXPECT_TRUE(contains(e.what(), "127.0.0.1:" + std::to_string(port))) << e.what();
  }
}

TEST(RedisClient, OptionsOutOfRangeThrowConfigError) {
  RedisOptions options;
  options.port = 70000;
  EXPECT_THROW(RedisClient client(options), ConfigError);
}

TEST(RedisClient, EmptyCommandIsRefusedBeforeAnythingIsSent) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  EXPECT_THROW(client.command({}), Error);
  EXPECT_THROW(client.pipeline({{"SET", "a", "1"}, {}}), Error);
  EXPECT_TRUE(client.pipeline({}).empty());
  EXPECT_TRUE(client.ping());
  EXPECT_FALSE(client.get("a").has_value());
}

TEST(RedisClient, MovedFromClientThrowsAndTheMovedToOneWorks) {
  testing::RedisServer server;
  RedisClient first(options_for(server));
  RedisClient second = std::move(first);
  EXPECT_TRUE(second.ping());
  EXPECT_FALSE(first.connected());  // NOLINT(bugprone-use-after-move): what the test checks
  try {
    first.ping();  // NOLINT(bugprone-use-after-move)
    FAIL() << "a moved-from client answered";
  } catch (const IoError &) {
    FAIL() << "a moved-from client must not look retryable";
  } catch (const Error &e) {
    EXPECT_TRUE(contains(e.what(), "moved from")) << e.what();
  }
}

TEST(RedisTimeout, BlockingReadLongerThanTheCommandTimeoutReturnsNilWithItsOwnTimeout) {
  testing::RedisServer server;
  RedisOptions options = options_for(server);
  options.command_timeout = milliseconds(300);
  RedisClient client(options);
  client.command({"XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM"});
  const std::vector<std::string> read = {"XREADGROUP", "GROUP", "workers", "w1",   "COUNT", "1",
                                         "BLOCK",      "800",   "STREAMS", "jobs", ">"};
  const auto start = std::chrono::steady_clock::now();
  const RedisReply r = client.command(read, milliseconds(2000));
  EXPECT_TRUE(r.is_nil());
  EXPECT_GE(elapsed_ms(start), 800);
  EXPECT_TRUE(client.connected());
  // Without its own timeout the same read is bounded by command_timeout.
  try {
    client.command(read);
    FAIL() << "XREADGROUP BLOCK 800 outlived a 300 ms command timeout";
  } catch (const TimeoutError &e) {
    EXPECT_TRUE(contains(e.what(), client.endpoint())) << e.what();
    EXPECT_TRUE(contains(e.what(), "XREADGROUP")) << e.what();
    EXPECT_TRUE(contains(e.what(), "300 ms")) << e.what();
  }
}

TEST(RedisTimeout, CommandPastItsTimeoutThrowsAndTheNextCommandUsesAFreshConnection) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  RedisClient observer(options_for(server));
  const long long id_before = client.command({"CLIENT", "ID"}).integer;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client.command({"BLPOP", "queue", "0"}, milliseconds(200)), TimeoutError);
  EXPECT_GE(elapsed_ms(start), 200);
  EXPECT_LT(elapsed_ms(start), 2000);
  EXPECT_FALSE(client.connected());
  // Once the server has seen the old connection close, a job pushed now must not go to it.
  ASSERT_TRUE(testing::eventually([&] { return testing::blocked_clients(observer) == 0; }));
  observer.command({"RPUSH", "queue", "job-1"});
  EXPECT_NE(client.command({"CLIENT", "ID"}).integer, id_before);
  EXPECT_EQ(observer.command({"LLEN", "queue"}).integer, 1);
  EXPECT_EQ(client.command({"LPOP", "queue"}).str, "job-1");
}

TEST(RedisTimeout, ZeroTimeoutWaitsForever) {
  testing::RedisServer server;
  RedisOptions options = options_for(server);
  options.command_timeout = milliseconds(200);
  RedisClient client(options);
  std::thread pusher([&] {
    RedisClient observer(options_for(server));
    testing::eventually([&] { return testing::blocked_clients(observer) == 1; });
    // Past the command timeout on purpose: the blocked read must outlast it.
    std::this_thread::sleep_for(milliseconds(400));
    observer.command({"RPUSH", "queue", "job-1"});
  });
  const auto start = std::chrono::steady_clock::now();
  RedisReply r;
  try {
    r = client.command({"BLPOP", "queue", "0"}, milliseconds(0));
  } catch (...) {
    pusher.join();
    throw;
  }
  pusher.join();
  ASSERT_EQ(r.kind, Kind::kArray);
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[1].str, "job-1");
  EXPECT_GE(elapsed_ms(start), 400);
}

TEST(RedisTimeout, ConnectTimeoutBoundsAConnectNobodyAnswers) {
  // A listener whose accept queue is full: Linux drops further SYNs, so connect hangs.
  testing::LoopbackListener listener(0);
  const int filler = testing::connect_loopback(listener.port());
  ASSERT_GE(filler, 0);

  RedisOptions options;
  options.port = listener.port();
  options.connect_timeout = milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(RedisClient client(options), TimeoutError);
  EXPECT_GE(elapsed_ms(start), 250);
  EXPECT_LT(elapsed_ms(start), 1500);
  close(filler);
}

TEST(RedisPipeline, MixedGoodAndFailingCommandsReplyInOrder) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  const std::string binary("\0\x01\xfe\xff", 4);
  const std::vector<RedisReply> r = client.pipeline({{"SET", "a", "1"},
                                                     {"INCR", "a"},
                                                     {"SET", "s", "text"},
                                                     {"INCR", "s"},
                                                     {"LPUSH", "s", "x"},
                                                     {"GET", "a"},
                                                     {"SET", "bin", binary},
                                                     {"GET", "bin"}});
  ASSERT_EQ(r.size(), 8u);
  EXPECT_EQ(r[0].kind, Kind::kStatus);
  EXPECT_EQ(r[0].str, "OK");
  EXPECT_EQ(r[1].integer, 2);
  EXPECT_EQ(r[2].str, "OK");
  EXPECT_TRUE(r[3].is_error());
  EXPECT_EQ(r[3].error_code(), "ERR");
  EXPECT_TRUE(r[4].is_error());
  EXPECT_EQ(r[4].error_code(), "WRONGTYPE");
  EXPECT_EQ(r[5].str, "2");
  EXPECT_EQ(r[7].str, binary);
  EXPECT_TRUE(client.ping());
}

TEST(RedisPipeline, ManyCommandsReplyInOrder) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  const std::vector<std::vector<std::string>> incrs(2000, {"INCR", "n"});
  const std::vector<RedisReply> r = client.pipeline(incrs);
  ASSERT_EQ(r.size(), incrs.size());
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(r[i].integer, static_cast<long long>(i + 1));
}

TEST(RedisPipeline, IoFailureThrowsIoError) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  server.stop();
  try {
    client.pipeline({{"SET", "a", "1"}, {"GET", "a"}});
    FAIL() << "a pipeline to a stopped server succeeded";
  } catch (const IoError &e) {
    EXPECT_TRUE(contains(e.what(), client.endpoint())) << e.what();
  }
}

TEST(RedisTransaction, RuntimeErrorInsideIsAnErrorElementAndTheOthersRan) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  client.set("s", "text");
  const auto r = client.transaction({{"SET", "a", "1"}, {"INCR", "s"}, {"INCR", "a"}});
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].str, "OK");
  EXPECT_TRUE((*r)[1].is_error());
  EXPECT_EQ((*r)[1].error_code(), "ERR");
  EXPECT_EQ((*r)[2].integer, 2);
  EXPECT_EQ(client.get("a"), "2");
}

TEST(RedisTransaction, ExecAbortedByWatchIsNullopt) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  RedisClient other(options_for(server));
  client.command({"WATCH", "job"});
  other.set("job", "theirs");
  EXPECT_EQ(client.transaction({{"SET", "job", "mine"}}), std::nullopt);
  EXPECT_EQ(client.get("job"), "theirs");
  // Untouched, the watched key lets the transaction through.
  client.command({"WATCH", "job"});
  const auto r = client.transaction({{"SET", "job", "mine"}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(client.get("job"), "mine");
}

TEST(RedisTransaction, QueueTimeSyntaxErrorThrowsNamingTheCommand) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  try {
    client.transaction({{"SET", "a", "1"}, {"SET", "only-a-key"}, {"INCR", "b"}});
    FAIL() << "a transaction with a malformed SET ran";
  } catch (const ReplyError &e) {
    EXPECT_TRUE(contains(e.what(), "SET (command 2 of 3")) << e.what();
    EXPECT_TRUE(contains(e.what(), "nothing ran")) << e.what();
    EXPECT_EQ(e.code(), "ERR");
  }
  EXPECT_FALSE(client.get("a").has_value());
  EXPECT_FALSE(client.get("b").has_value());
}

TEST(RedisTransaction, AWatchLostWithItsConnectionStopsTheTransaction) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  RedisClient other(options_for(server));
  client.command({"WATCH", "job"});
  const long long id = client.command({"CLIENT", "ID"}).integer;
  ASSERT_EQ(other.command({"CLIENT", "KILL", "ID", std::to_string(id)}).integer, 1);
  other.set("job", "theirs");
  try {
    client.transaction({{"SET", "job", "mine"}});
    FAIL() << "the transaction ran without the WATCH it was written under";
  } catch (const IoError &e) {
    EXPECT_TRUE(contains(e.what(), "WATCH")) << e.what();
  }
  EXPECT_EQ(other.get("job"), "theirs");
  // Told once; a transaction written anew (WATCH again) runs.
  client.command({"WATCH", "job"});
  EXPECT_TRUE(client.transaction({{"SET", "job", "mine"}}).has_value());
  EXPECT_EQ(other.get("job"), "mine");
}

// A server, a client and a script that adds ARGV[1] to KEYS[1].
class RedisScriptTest : public ::testing::Test {
 protected:
  testing::RedisServer server;
  RedisClient client{options_for(server)};
  RedisScript add{"add", "return redis.call('INCRBY', KEYS[1], ARGV[1])"};
};

TEST_F(RedisScriptTest, EvalShaRunsAndKeepsTheServersSha) {
  EXPECT_TRUE(add.sha1().empty());
  EXPECT_EQ(client.eval(add, {"n"}, {"5"}).integer, 5);
  ASSERT_EQ(add.sha1().size(), 40u);
  const RedisReply exists = client.command({"SCRIPT", "EXISTS", add.sha1()});
  ASSERT_EQ(exists.elements.size(), 1u);
  EXPECT_EQ(exists.elements[0].integer, 1);
  EXPECT_EQ(client.eval(add, {"n"}, {"5"}).integer, 10);
}

TEST_F(RedisScriptTest, SurvivesScriptFlush) {
  EXPECT_EQ(client.eval(add, {"n"}, {"5"}).integer, 5);
  client.command({"SCRIPT", "FLUSH"});
  EXPECT_EQ(client.command({"SCRIPT", "EXISTS", add.sha1()}).elements.at(0).integer, 0);
  EXPECT_EQ(client.eval(add, {"n"}, {"5"}).integer, 10);
}

TEST_F(RedisScriptTest, SurvivesAServerRestart) {
  EXPECT_EQ(client.eval(add, {"n"}, {"5"}).integer, 5);
  server.stop();
  server.start();
  EXPECT_EQ(client.eval(add, {"n"}, {"7"}).integer, 7);  // a fresh server: no n, no script
}

TEST_F(RedisScriptTest, AnErrorTheScriptRaisesThrowsNamingItAndItRanOnce) {
  RedisScript claim("claim",
                    "redis.call('INCR', KEYS[1]); return redis.error_reply('NOPE not claimable')");
  try {
    client.eval(claim, {"attempts"}, {});
    FAIL() << "the script's error was not thrown";
  } catch (const ReplyError &e) {
    EXPECT_EQ(e.code(), "NOPE");
    EXPECT_TRUE(contains(e.what(), "script 'claim'")) << e.what();
  }
  EXPECT_EQ(client.get("attempts"), "1");
}

TEST_F(RedisScriptTest, BinaryArgumentsRoundTrip) {
  RedisScript echo("echo", "return ARGV[1]");
  const std::string binary("\0\r\n\xff", 4);
  EXPECT_EQ(client.eval(echo, {}, {binary}).str, binary);
}

TEST(RedisAuth, RightPasswordWorks) {
  testing::RedisServerOptions server_options;
  server_options.password = "s3cret-pw";
  testing::RedisServer server(server_options);
  RedisClient client(options_for(server));
  EXPECT_TRUE(client.ping());
}

TEST(RedisAuth, WrongPasswordThrowsAuthErrorThatHidesThePassword) {
  testing::RedisServerOptions server_options;
  server_options.password = "s3cret-pw";
  testing::RedisServer server(server_options);
  RedisOptions options = options_for(server);
  options.password = "wrong-pw-123";
  try {
    RedisClient client(options);
    FAIL() << "connected with a wrong password";
  } catch (const AuthError &e) {
    EXPECT_EQ(e.code(), "WRONGPASS");
    EXPECT_TRUE(contains(e.what(), options.endpoint())) << e.what();
    EXPECT_TRUE(contains(e.what(), "AUTH")) << e.what();
    EXPECT_FALSE(contains(e.what(), "wrong-pw-123")) << e.what();
    EXPECT_FALSE(contains(e.what(), "s3cret-pw")) << e.what();
  }
}

TEST(RedisAuth, NoPasswordGivesNoauth) {
  testing::RedisServerOptions server_options;
  server_options.password = "s3cret-pw";
  testing::RedisServer server(server_options);
  RedisOptions options = options_for(server);
  options.password.clear();
  RedisClient client(options);
  try {
    client.ping();
    FAIL() << "a server with requirepass answered without AUTH";
  } catch (const AuthError &e) {
    EXPECT_EQ(e.code(), "NOAUTH");
  }
}

TEST(RedisAuth, AclUserAuthenticatesByName) {
  testing::RedisServer server;
  RedisClient admin(options_for(server));
  admin.command({"ACL", "SETUSER", "worker", "on", ">worker-pw", "~*", "+@all"});
  RedisOptions options = options_for(server);
  options.username = "worker";
  options.password = "worker-pw";
  RedisClient worker(options);
  EXPECT_EQ(worker.command({"ACL", "WHOAMI"}).str, "worker");
  options.username = "someone-else";
  EXPECT_THROW(RedisClient stranger(options), AuthError);
}

TEST(RedisAuth, UrlGivesAWorkingClientOnItsDatabase) {
  testing::RedisServerOptions server_options;
  server_options.password = "s3cret-pw";
  testing::RedisServer server(server_options);
  RedisClient client(
      parse_redis_url("redis://:s3cret-pw@127.0.0.1:" + std::to_string(server.port()) + "/2"));
  EXPECT_TRUE(contains(client.command({"CLIENT", "INFO"}).str, " db=2 "));
  EXPECT_FALSE(contains(client.endpoint(), "s3cret-pw"));
}

}  // namespace
}  // namespace protuner
