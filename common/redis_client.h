// A synchronous Redis connection (hiredis) with typed replies and protuner's errors.
// The coordinator, searchers and measurers keep suites, jobs, results and the measurement
// cache in Redis; this is the one place that speaks the protocol.
//
// Thread safety: a RedisClient is one connection and is not thread-safe; give each thread
// its own. Not copyable; movable.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct redisContext;
struct redisReply;

namespace protuner {

// One reply, converted out of hiredis' C structs so it outlives the connection.
struct RedisReply {
  enum class Kind { kNil, kInteger, kString, kStatus, kArray };
  Kind kind = Kind::kNil;
  long long integer = 0;
  std::string str;                   // kString and kStatus
  std::vector<RedisReply> elements;  // kArray

  bool is_nil() const { return kind == Kind::kNil; }
};

class RedisClient {
 public:
  // Connects to host:port. `timeout` bounds connect and every later command; zero means
  // no limit. Throws IoError if the server cannot be reached.
  RedisClient(const std::string &host, int port,
              std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~RedisClient();
  RedisClient(RedisClient &&) noexcept;
  RedisClient &operator=(RedisClient &&) noexcept;
  RedisClient(const RedisClient &) = delete;
  RedisClient &operator=(const RedisClient &) = delete;

  // Sends one command, arguments binary-safe. Throws IoError when the connection fails
  // (the client is then unusable) and ReplyError when Redis answers with an error.
  RedisReply command(const std::vector<std::string> &args);

  // Conveniences over command().
  void set(const std::string &key, const std::string &value);
  std::optional<std::string> get(const std::string &key);
  bool ping();

  const std::string &endpoint() const { return endpoint_; }

 private:
  struct ContextDeleter {
    void operator()(redisContext *c) const;
  };
  std::unique_ptr<redisContext, ContextDeleter> context_;
  std::string endpoint_;
};

}  // namespace protuner
