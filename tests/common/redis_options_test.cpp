// parse_redis_url and RedisOptions: every part of the URL and its default, each malformed
// part named in the error, and the password kept out of every message. No server needed.
#include "common/redis_options.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "common/errors.h"

namespace protuner {
namespace {

// Sets (or, with nullptr, clears) PROTUNER_REDIS_PASSWORD for one test; restores it after.
class PasswordEnvironment {
 public:
  explicit PasswordEnvironment(const char *value) {
    if (const char *old = std::getenv(kRedisPasswordEnv)) saved_ = old;
    if (value) {
      setenv(kRedisPasswordEnv, value, 1);
    } else {
      unsetenv(kRedisPasswordEnv);
    }
  }
  ~PasswordEnvironment() {
    if (saved_) {
      setenv(kRedisPasswordEnv, saved_->c_str(), 1);
    } else {
      unsetenv(kRedisPasswordEnv);
    }
  }

 private:
  std::optional<std::string> saved_;
};

// The ConfigError message parsing `url` gives; empty (and a test failure) when it parses.
std::string error_of(const std::string &url) {
  try {
    parse_redis_url(url);
  } catch (const ConfigError &e) {
    return e.what();
  }
  ADD_FAILURE() << url << " parsed";
  return "";
}

TEST(RedisUrl, EveryPartIsRead) {
  PasswordEnvironment env(nullptr);
  const RedisOptions o = parse_redis_url("redis://worker:s3cret@db.example:6380/3");
  EXPECT_EQ(o.host, "db.example");
  EXPECT_EQ(o.port, 6380);
  EXPECT_EQ(o.username, "worker");
  EXPECT_EQ(o.password, "s3cret");
  EXPECT_EQ(o.db, 3);
}

TEST(RedisUrl, MissingPartsTakeTheDefaults) {
  PasswordEnvironment env(nullptr);
  const RedisOptions defaults;
  for (const char *url : {"redis://cache", "redis://cache/", "redis://cache:6379/0"}) {
    SCOPED_TRACE(url);
    const RedisOptions o = parse_redis_url(url);
    EXPECT_EQ(o.host, "cache");
    EXPECT_EQ(o.port, 6379);
    EXPECT_EQ(o.db, 0);
    EXPECT_TRUE(o.username.empty());
    EXPECT_TRUE(o.password.empty());
    EXPECT_EQ(o.connect_timeout, defaults.connect_timeout);
    EXPECT_EQ(o.command_timeout, defaults.command_timeout);
  }
  EXPECT_EQ(defaults.connect_timeout, std::chrono::seconds(2));
  EXPECT_EQ(defaults.command_timeout, std::chrono::seconds(5));
}

TEST(RedisUrl, PasswordAloneAndPercentEscapes) {
  PasswordEnvironment env(nullptr);
  const RedisOptions escaped = parse_redis_url("redis://:p%40ss%3Aw%2Ford%25@h");
  EXPECT_TRUE(escaped.username.empty());
  EXPECT_EQ(escaped.password, "p@ss:w/ord%");
  // Host, port and db hold no '@', so the last one ends the user info.
  const RedisOptions raw_at = parse_redis_url("redis://u:pa@ss@h:7000");
  EXPECT_EQ(raw_at.username, "u");
  EXPECT_EQ(raw_at.password, "pa@ss");
  EXPECT_EQ(raw_at.host, "h");
  EXPECT_EQ(raw_at.port, 7000);
}

TEST(RedisUrl, BracketedIpv6Host) {
  const RedisOptions o = parse_redis_url("redis://[::1]:6390/2");
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 6390);
  EXPECT_EQ(o.db, 2);
  EXPECT_EQ(o.endpoint(), "[::1]:6390/2");
  EXPECT_EQ(parse_redis_url("redis://[::1]").port, 6379);
}

TEST(RedisUrl, PasswordComesFromTheEnvironmentWhenTheUrlHasNone) {
  PasswordEnvironment env("from-env");
  EXPECT_EQ(parse_redis_url("redis://h").password, "from-env");
  const RedisOptions user = parse_redis_url("redis://worker@h");
  EXPECT_EQ(user.username, "worker");
  EXPECT_EQ(user.password, "from-env");
  EXPECT_EQ(parse_redis_url("redis://:in-url@h").password, "in-url");
}

TEST(RedisUrl, UserWithoutAnyPasswordIsRefused) {
  PasswordEnvironment env(nullptr);
  const std::string e = error_of("redis://worker@h");
  EXPECT_NE(e.find("user 'worker' has no password"), std::string::npos) << e;
  EXPECT_NE(e.find(kRedisPasswordEnv), std::string::npos) << e;
}

TEST(RedisUrl, EachMalformedPartIsNamed) {
  PasswordEnvironment env(nullptr);
  struct Case {
    const char *url;
    const char *named;
  };
  const Case cases[] = {
      {"http://h", "must start with redis://"},
      {"redis:/h", "must start with redis://"},
      {"rediss://h", "TLS"},
      {"redis://", "no host"},
      {"redis://:6379", "no host"},
      {"redis://h:port", "port 'port'"},
      {"redis://h:0", "port '0'"},
      {"redis://h:65536", "port '65536'"},
      {"redis://h:", "port ''"},
      {"redis://h:1:2", "port '1:2'"},
      {"redis://h/x", "database 'x'"},
      {"redis://h/-1", "database '-1'"},
      {"redis://h/1/2", "database '1/2'"},
      {"redis://h?db=1", "query parameters"},
      {"redis://h#x", "fragments"},
      {"redis://[::1:6379", "no ']' closes"},
      {"redis://[::1]x", "after ']'"},
      {"redis://@h", "between redis:// and '@'"},
      {"redis://u%zz:pw@h", "%-escape in the user"},
      {"redis://u:p%4@h", "%-escape in the password"},
      {"redis://u:@h", "empty password"},
      {"redis://a host", "space"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.url);
    const std::string e = error_of(c.url);
    EXPECT_NE(e.find("redis URL"), std::string::npos) << e;
    EXPECT_NE(e.find(c.named), std::string::npos) << e;
  }
}

TEST(RedisUrl, ThePasswordNeverAppearsInAnError) {
  PasswordEnvironment env(nullptr);
  for (const char *url :
       {"redis://u:hunter2@h:notaport", "redis://:hunter2@", "redis://u:hunter2@h/db",
        "redis://u:hunter2%zz@h", "http://u:hunter2@h", "redis://u:hunt@er2@h?x"}) {
    SCOPED_TRACE(url);
    const std::string e = error_of(url);
    EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
    EXPECT_EQ(e.find("er2"), std::string::npos) << e;
    EXPECT_NE(e.find("***"), std::string::npos) << e;
  }
}

TEST(RedisOptions, EndpointNamesHostPortAndDbButNoCredentials) {
  RedisOptions o;
  o.host = "queue.local";
  o.port = 6400;
  o.username = "worker";
  o.password = "hunter2";
  EXPECT_EQ(o.endpoint(), "queue.local:6400");
  o.db = 4;
  EXPECT_EQ(o.endpoint(), "queue.local:6400/4");
}

TEST(RedisOptions, ValidateNamesTheFieldOutOfRange) {
  EXPECT_NO_THROW(RedisOptions{}.validate());
  const auto error_of_options = [](auto change) {
    RedisOptions o;
    change(o);
    try {
      o.validate();
    } catch (const ConfigError &e) {
      return std::string(e.what());
    }
    return std::string("(valid)");
  };
  EXPECT_NE(error_of_options([](RedisOptions &o) { o.port = 0; }).find("port 0"),
            std::string::npos);
  EXPECT_NE(error_of_options([](RedisOptions &o) { o.db = -1; }).find("database index -1"),
            std::string::npos);
  EXPECT_NE(error_of_options([](RedisOptions &o) {
              o.command_timeout = std::chrono::milliseconds(-1);
            }).find("command_timeout"),
            std::string::npos);
  EXPECT_NE(error_of_options([](RedisOptions &o) {
              o.reconnect_backoff_initial = std::chrono::milliseconds(500);
              o.reconnect_backoff_max = std::chrono::milliseconds(100);
            }).find("reconnect_backoff_initial (500 ms) is above reconnect_backoff_max"),
            std::string::npos);
  EXPECT_NE(error_of_options([](RedisOptions &o) { o.username = "worker"; }).find("worker"),
            std::string::npos);
}

}  // namespace
}  // namespace protuner
