// Test helpers for real servers on loopback: a free port, a redis-server child process the
// test owns (and may stop, kill and restart), and a minimal HTTP GET. Integration tests
// start what they talk to and stop it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/loopback_port.h"

namespace protuner::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (common/loopback_port.h).
using protuner::free_loopback_port;

// A connected TCP socket to 127.0.0.1:port, or -1 when nothing accepts there.
int connect_loopback(int port);

// A bare listening socket on a free loopback port, for stand-in servers that misbehave in
// ways a real one will not on demand (never accepting, hanging up mid-request). Closed in
// the destructor.
class LoopbackListener {
 public:
  // `backlog` as listen(2) takes it; 0 lets one connection wait in the accept queue.
  explicit LoopbackListener(int backlog);
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener &) = delete;
  LoopbackListener &operator=(const LoopbackListener &) = delete;
  int fd() const { return fd_; }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// How a test's redis-server runs. The default is an in-memory server with persistence off.
struct RedisServerOptions {
  // appendonly yes, appendfsync always: a write is on disk before Redis acknowledges it.
  bool aof = false;
  // requirepass: clients must AUTH with this; empty: no password.
  std::string password;
  // Further redis-server arguments, such as {"--proto-max-bulk-len", "1mb"}.
  std::vector<std::string> extra_args;
};

// A redis-server child on a free loopback port, with its own temporary data directory.
// It can be stopped (SIGTERM), killed (SIGKILL) and started again on the same port and
// directory, so tests can take the server away from a client and give it back. The
// destructor stops it and removes the directory.
class RedisServer {
 public:
  RedisServer();
  explicit RedisServer(RedisServerOptions options);
  ~RedisServer();
  RedisServer(const RedisServer &) = delete;
  RedisServer &operator=(const RedisServer &) = delete;

  int port() const { return port_; }
  const std::string &password() const { return options_.password; }
  bool running() const { return pid_ > 0; }

  // SIGTERM (Redis shuts down cleanly, flushing its AOF) and waits for the exit.
  void stop();
  // SIGKILL (no shutdown at all) and waits for the exit.
  void kill();
  // Starts it again, same port and data directory; returns once it answers PING (its AOF
  // loaded). Throws std::runtime_error when it does not within 10 s, or when it is running.
  void start();

 private:
  void signal_and_wait(int signal);

  RedisServerOptions options_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string data_dir_;
};

// GET http://127.0.0.1:port/path; returns the whole response (status line, headers, body).
// Throws std::runtime_error on a connection failure.
std::string http_get(int port, const std::string &path);

}  // namespace protuner::testing
