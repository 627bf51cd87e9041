// Test helpers for real servers on loopback: a free port, a redis-server child process the
// test owns, and a minimal HTTP GET. Integration tests start what they talk to and stop it.
#pragma once

#include <sys/types.h>

#include <string>

namespace protuner::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (bound with port 0, then released).
int free_loopback_port();

// A redis-server on a free loopback port, persistence off, killed in the destructor.
class RedisServer {
 public:
  RedisServer();
  ~RedisServer();
  RedisServer(const RedisServer &) = delete;
  RedisServer &operator=(const RedisServer &) = delete;
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// GET http://127.0.0.1:port/path; returns the whole response (status line, headers, body).
// Throws std::runtime_error on a connection failure.
std::string http_get(int port, const std::string &path);

}  // namespace protuner::testing
