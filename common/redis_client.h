// A synchronous Redis connection (hiredis 0.14, RESP2) with typed replies and protuner's
// errors. The coordinator, searchers and measurers keep the job queue, results and the
// measurement cache in Redis; this is the one place that speaks the protocol, so that
// timeouts, reconnection, pipelining, transactions and scripts behave the same in every
// daemon.
//
// Thread safety: a RedisClient is one connection and is not thread-safe; give each thread
// its own. Not copyable; movable (a moved-from client is not connected() and throws Error
// from every other call).
//
// Failures: an I/O failure or a timeout throws IoError / TimeoutError and drops the
// connection, since a late reply would otherwise answer the next command. The failed
// command is not sent again: it may have run (INCR, XADD, a script), so the caller
// decides; retry_on_io_error (common/redis_retry.h) is there for idempotent work. The next
// call opens a new connection (AUTH and SELECT again); after consecutive failures it first
// sleeps out the reconnect backoff of RedisOptions, so a caller looping on errors does not
// hammer the server. Before sending, a call checks whether the server has closed the idle
// connection (a restart, CLIENT KILL, an idle timeout); nothing was sent on it then, so the
// call reconnects and goes ahead. An error reply throws ReplyError (AuthError for NOAUTH
// and WRONGPASS), whose code() is the reply's first word; the connection stays usable.
//
// hiredis 0.14 limits: no TLS, no RESP3, replies nested deeper than 7 arrays are a protocol
// error (IoError), and timeouts bound each wait for bytes rather than a whole reply.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/redis_options.h"

namespace protuner {

// One reply, converted out of hiredis' C structs so it outlives the connection.
struct RedisReply {
  enum class Kind { kNil, kInteger, kString, kStatus, kArray, kError };
  Kind kind = Kind::kNil;
  long long integer = 0;
  std::string str;                   // kString, kStatus, and kError's message
  std::vector<RedisReply> elements;  // kArray

  bool is_nil() const { return kind == Kind::kNil; }
  bool is_error() const { return kind == Kind::kError; }
  // kError: the error's code, the message's first word (ERR, WRONGTYPE, NOSCRIPT, ...);
  // empty for every other kind.
  std::string error_code() const;
};

// A Lua script for RedisClient::eval. The server knows it by its SHA1, which the first
// eval() gets from SCRIPT LOAD and keeps here. Copyable; like a client, not to be shared
// between threads (the SHA1 is written on first use).
class RedisScript {
 public:
  // `name` identifies the script in error messages.
  RedisScript(std::string name, std::string source)
      : name_(std::move(name)), source_(std::move(source)) {}
  const std::string &name() const { return name_; }
  const std::string &source() const { return source_; }
  // Empty until the first eval(); then the server's SHA1 of source().
  const std::string &sha1() const { return sha1_; }

 private:
  friend class RedisClient;
  std::string name_;
  std::string source_;
  std::string sha1_;
};

class RedisClient {
 public:
  // Connects (and AUTHs, and SELECTs the database) at once. Throws ConfigError when the
  // options are out of range, IoError (TimeoutError) when the server cannot be reached,
  // AuthError when it refuses the credentials.
  explicit RedisClient(RedisOptions options);
  // host:port with every other option at its default.
  RedisClient(const std::string &host, int port);
  ~RedisClient();
  RedisClient(RedisClient &&) noexcept;
  RedisClient &operator=(RedisClient &&) noexcept;
  RedisClient(const RedisClient &) = delete;
  RedisClient &operator=(const RedisClient &) = delete;

  // Sends one command, arguments binary-safe, and waits up to the options' command_timeout
  // for each part of the reply. Error replies nested in an array come back as kError
  // elements; a top-level error reply throws ReplyError.
  RedisReply command(const std::vector<std::string> &args);
  // The same with this call's own timeout (zero: wait forever), for blocking commands:
  // give at least the command's BLOCK / timeout argument plus a margin.
  RedisReply command(const std::vector<std::string> &args, std::chrono::milliseconds timeout);

  // Writes every command, then reads every reply, in order: one round trip. A command Redis
  // refuses comes back as a kError element and the others still run; an I/O failure throws
  // (some commands may have run). An empty list sends nothing.
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>> &commands);

  // MULTI, the commands, EXEC, in one round trip. Returns EXEC's replies, one per command
  // (a command that fails while running, say INCR on a string, is a kError element; the
  // others have run: Redis has no rollback). Returns std::nullopt when a WATCHed key
  // changed and EXEC aborted: nothing ran. Throws ReplyError naming the command when
  // Redis refuses one while queueing it (a syntax error: EXECABORT, nothing ran). Throws
  // IoError, without sending anything, when the connection that held a WATCH was lost
  // since: the transaction would otherwise run unguarded; WATCH again and retry.
  std::optional<std::vector<RedisReply>> transaction(
      const std::vector<std::vector<std::string>> &commands);

  // Runs the script by EVALSHA with these KEYS and ARGV. On NOSCRIPT (first use, SCRIPT
  // FLUSH, a restarted server; the script did not run) it loads the script and tries once
  // more. An error the script raises throws ReplyError naming the script.
  RedisReply eval(RedisScript &script, const std::vector<std::string> &keys,
                  const std::vector<std::string> &args);

  // Conveniences over command().
  void set(const std::string &key, const std::string &value);
  std::optional<std::string> get(const std::string &key);
  bool ping();

  // Whether a connection is open. It may have died unnoticed; the next call finds out.
  bool connected() const;
  // Closes the connection; the next call opens a new one.
  void disconnect();

  // As RedisOptions::endpoint(): no credentials.
  const std::string &endpoint() const;

 private:
  class Connection;
  Connection &connection() const;
  std::unique_ptr<Connection> connection_;
};

}  // namespace protuner
