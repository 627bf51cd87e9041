// How to reach a Redis server and how patiently: every tunable of RedisClient, with its
// default, in one struct, and the redis:// URL that daemons take on their command line.
// Credentials live here and nowhere else: endpoint() and every error message leave the
// password out.
#pragma once

#include <chrono>
#include <string>

namespace protuner {

// The environment variable a password comes from when the URL carries none, so that it
// stays out of command lines (`ps`) and shell history.
inline constexpr const char *kRedisPasswordEnv = "PROTUNER_REDIS_PASSWORD";

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;

  // ACL user to AUTH as (Redis 6+); empty: the default user, AUTH with the password alone.
  std::string username;
  // Password for AUTH; empty: no AUTH. Never logged, never in an error message.
  std::string password;
  // Database index, SELECTed on every connection when it is not 0.
  int db = 0;

  // Bounds the TCP connect (not the name lookup); zero leaves it to the operating system.
  std::chrono::milliseconds connect_timeout{2000};
  // Bounds each wait for a reply's bytes, and AUTH and SELECT on connecting; zero waits
  // forever. Blocking commands (BLPOP, XREADGROUP ... BLOCK) pass their own timeout to
  // RedisClient::command.
  std::chrono::milliseconds command_timeout{5000};

  // After a failed connection attempt, or a connection that broke under a command, the
  // next connection attempt waits reconnect_backoff_initial, doubling with each further
  // consecutive failure up to reconnect_backoff_max; a reply resets it. Finding an idle
  // connection closed by the server is no failure: the reconnection goes at once.
  std::chrono::milliseconds reconnect_backoff_initial{100};
  std::chrono::milliseconds reconnect_backoff_max{2000};

  // "host:port", "[v6 address]:port", with "/db" when db is not 0. No credentials.
  std::string endpoint() const;

  // Throws ConfigError naming the first field out of range (port, db, negative times,
  // backoff initial above its maximum).
  void validate() const;
};

// Parses "redis://[user[:password]@]host[:port][/db]". Defaults: port 6379, db 0. An IPv6
// host is written in brackets ("redis://[::1]:6380"). Characters of the user or password
// that a URL reserves (@ : / %) are percent-encoded ("%40" for @). With no password in
// the URL, the password is $PROTUNER_REDIS_PASSWORD when that is set. Throws ConfigError
// naming the part that is wrong; the message shows the URL with its password as "***".
// rediss:// (TLS) is refused: hiredis 0.14 has no TLS.
RedisOptions parse_redis_url(const std::string &url);

}  // namespace protuner
