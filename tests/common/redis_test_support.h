// What the Redis client tests share: client options for a test server, with a short
// reconnect backoff so tests that take the server away stay fast, and polling.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "common/redis_client.h"
#include "tests/support/loopback.h"

namespace protuner::testing {

inline RedisOptions options_for(const RedisServer &server) {
  RedisOptions options;
  options.host = "127.0.0.1";
  options.port = server.port();
  options.password = server.password();
  options.reconnect_backoff_initial = std::chrono::milliseconds(10);
  options.reconnect_backoff_max = std::chrono::milliseconds(50);
  return options;
}

// Calls `condition` every 10 ms until it holds or `limit` passes; returns whether it held.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The server's count of clients blocked in BLPOP, XREADGROUP BLOCK and the like.
inline long long blocked_clients(RedisClient &observer) {
  const std::string info = observer.command({"INFO", "clients"}).str;
  const std::string field = "blocked_clients:";
  const size_t at = info.find(field);
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + field.size()));
}

inline long long elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

}  // namespace protuner::testing
