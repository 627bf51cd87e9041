// RedisClient when the server goes away: reconnection (AUTH and SELECT again), backoff, no
// resending of a failed command, retry_on_io_error, a server hanging up mid-write, and what
// an AOF server keeps through kill -9. Each test stops, kills and restarts its own server.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "common/errors.h"
#include "common/redis_client.h"
#include "common/redis_retry.h"
#include "tests/common/redis_test_support.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

using std::chrono::milliseconds;
using testing::elapsed_ms;
using testing::options_for;

testing::RedisServerOptions aof_server(const std::string &password = "") {
  testing::RedisServerOptions options;
  options.aof = true;
  options.password = password;
  return options;
}

TEST(RedisReconnect, StoppedServerThrowsIoErrorAndTheRestartedOneIsUsedWithAuthAndDbAgain) {
  testing::RedisServer server(aof_server("pw-for-restart"));
  RedisOptions options = options_for(server);
  options.db = 3;
  RedisClient client(options);
  client.set("job:1", "queued");
  server.stop();
  try {
    client.get("job:1");
    FAIL() << "a stopped server answered";
  } catch (const IoError &e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(server.port()) + "/3"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("pw-for-restart"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(client.connected());
  server.start();
  // Only a connection that AUTHed again (else NOAUTH) and SELECTed 3 again sees the key.
  EXPECT_EQ(client.get("job:1"), "queued");
  EXPECT_TRUE(client.connected());
  RedisClient db0(options_for(server));
  EXPECT_FALSE(db0.get("job:1").has_value());
}

TEST(RedisReconnect, AnIdleConnectionToARestartedServerReconnectsWithoutAnError) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  EXPECT_TRUE(client.ping());
  server.kill();
  server.start();
  EXPECT_TRUE(client.ping());
  client.disconnect();
  EXPECT_FALSE(client.connected());
  EXPECT_TRUE(client.ping());
}

TEST(RedisReconnect, AFailedCommandIsNotSentAgain) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  // Counts its runs, then keeps the server busy past the caller's timeout.
  const std::string slow_incr = R"(
    redis.call('INCR', KEYS[1])
    local t0 = redis.call('TIME')
    local start = t0[1] * 1000000 + t0[2]
    repeat
      local t = redis.call('TIME')
    until t[1] * 1000000 + t[2] - start > 300000
    return 1)";
  EXPECT_THROW(client.command({"EVAL", slow_incr, "1", "runs"}, milliseconds(100)), TimeoutError);
  EXPECT_EQ(client.get("runs"), "1");
  EXPECT_EQ(client.get("runs"), "1");
}

TEST(RedisReconnect, BackoffGrowsAndIsCapped) {
  testing::RedisServer server;
  RedisOptions options = options_for(server);
  options.reconnect_backoff_initial = milliseconds(40);
  options.reconnect_backoff_max = milliseconds(80);
  RedisClient client(options);
  server.stop();
  // The client counts each wait from the failure it records just before the previous call
  // returns, so the wait shows between the two returns (the caller's own time between calls
  // is part of it), up to a fraction of a millisecond less.
  auto previous_return = std::chrono::steady_clock::now();
  const auto failing_call_ms = [&] {
    EXPECT_THROW(client.ping(), IoError);
    const auto now = std::chrono::steady_clock::now();
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(now - previous_return).count();
    previous_return = now;
    return (us + 999) / 1000;  // rounded up: a wait cut short by the slack still counts whole
  };
  EXPECT_LT(failing_call_ms(), 40);  // the first attempt goes at once
  EXPECT_GE(failing_call_ms(), 40);
  EXPECT_GE(failing_call_ms(), 80);
  long long capped = 0;
  for (int i = 0; i < 3; ++i) {
    const long long ms = failing_call_ms();
    EXPECT_GE(ms, 80);
    capped += ms;
  }
  EXPECT_LT(capped, 600);  // 160 + 320 + 640 without the cap
  server.start();
  EXPECT_TRUE(client.ping());
  // A good reply resets the backoff.
  server.stop();
  previous_return = std::chrono::steady_clock::now();
  EXPECT_LT(failing_call_ms(), 40);
}

TEST(RedisReconnect, AServerHangingUpMidWriteGivesIoErrorNotSigpipe) {
  // A stand-in server that takes the first bytes of a large command, half-closes (FIN),
  // then closes with data unread (RST): the client's socket is then one whose next write
  // raises SIGPIPE, which ends a process that does not block or ignore it.
  testing::LoopbackListener listener(1);
  RedisOptions options;
  options.port = listener.port();
  RedisClient client(options);
  std::thread hang_up([&listener] {
    const int fd = accept(listener.fd(), nullptr, nullptr);
    if (fd < 0) return;
    char buf[65536];
    size_t received = 0;
    for (ssize_t n; received < sizeof(buf) && (n = read(fd, buf, sizeof(buf))) > 0;) received += n;
    shutdown(fd, SHUT_WR);
    close(fd);
  });
  const std::string big(32 << 20, 'x');
  EXPECT_THROW(client.set("big", big), IoError);
  EXPECT_FALSE(client.connected());
  hang_up.join();
}

TEST(RedisRetry, RetriesIdempotentWorkUntilItSucceeds) {
  testing::RedisServer server(aof_server());
  RedisClient client(options_for(server));
  client.set("result", "42");
  server.stop();
  int attempts = 0;
  const auto value = retry_on_io_error(
      client, std::chrono::steady_clock::now() + std::chrono::seconds(10), [&](RedisClient &c) {
        if (++attempts == 2) server.start();
        return c.get("result");
      });
  EXPECT_EQ(value, "42");
  EXPECT_EQ(attempts, 2);
}

TEST(RedisRetry, GivesUpAtTheDeadlineWithTheIoError) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  server.stop();
  int attempts = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(retry_on_io_error(client, start + milliseconds(300),
                                 [&](RedisClient &c) {
                                   ++attempts;
                                   return c.ping();
                                 }),
               IoError);
  EXPECT_GE(elapsed_ms(start), 300);
  EXPECT_LT(elapsed_ms(start), 2000);
  EXPECT_GE(attempts, 2);
}

TEST(RedisRetry, OtherErrorsAreNotRetried) {
  testing::RedisServer server;
  RedisClient client(options_for(server));
  client.set("s", "text");
  int attempts = 0;
  EXPECT_THROW(retry_on_io_error(client, std::chrono::steady_clock::now() + std::chrono::seconds(5),
                                 [&](RedisClient &c) {
                                   ++attempts;
                                   return c.command({"INCR", "s"});
                                 }),
               ReplyError);
  EXPECT_EQ(attempts, 1);
}

TEST(RedisDurability, AofKeepsAnAcknowledgedWriteThroughKill9) {
  testing::RedisServer server(aof_server());
  RedisClient client(options_for(server));
  // kill -9 loses what the process held, not what it wrote: the write before the reply is
  // what this checks. fsync on every write (what an OS crash would test) is configured.
  EXPECT_EQ(client.command({"CONFIG", "GET", "appendfsync"}).elements.at(1).str, "always");
  client.set("job:7", "done");
  client.command({"XADD", "results", "*", "job", "7"});
  server.kill();
  server.start();
  RedisClient after(options_for(server));
  EXPECT_EQ(after.get("job:7"), "done");
  EXPECT_EQ(after.command({"XLEN", "results"}).integer, 1);
}

TEST(RedisDurability, WithoutAofKill9LosesTheWrite) {
  // The default test server keeps nothing: what makes the test above able to fail.
  testing::RedisServer server;
  RedisClient client(options_for(server));
  client.set("job:7", "done");
  server.kill();
  server.start();
  RedisClient after(options_for(server));
  EXPECT_FALSE(after.get("job:7").has_value());
}

}  // namespace
}  // namespace protuner
