// RedisClient on hiredis' blocking API: one socket, its timeouts, reconnection with backoff,
// and the reply conversion, behind the rules the header states.
#include "common/redis_client.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <thread>

#include "common/errors.h"

namespace protuner {
namespace {

using Command = std::vector<std::string>;
// Commands sent in one round trip, by pointer: values can be large, so they are not copied
// on their way to hiredis.
using Batch = std::vector<const Command *>;
using std::chrono::milliseconds;

struct ReplyDeleter {
  void operator()(redisReply *r) const { freeReplyObject(r); }
};

struct ContextDeleter {
  void operator()(redisContext *c) const { redisFree(c); }
};

RedisReply convert(const redisReply &r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_NIL:
      out.kind = RedisReply::Kind::kNil;
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_STRING:
      out.kind = RedisReply::Kind::kString;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kStatus;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = RedisReply::Kind::kError;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      out.elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) out.elements.push_back(convert(*r.element[i]));
      break;
    default:
      // hiredis 0.14 speaks RESP2 only; nothing else reaches here.
      out.kind = RedisReply::Kind::kString;
      if (r.str) out.str.assign(r.str, r.len);
      break;
  }
  return out;
}

timeval to_timeval(milliseconds ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

std::string upper(std::string s) {
  for (char &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void throw_reply_error(const std::string &endpoint, const std::string &what,
                                    const RedisReply &reply) {
  const std::string message = "redis " + endpoint + ": " + what + ": " + reply.str;
  std::string code = reply.error_code();
  if (code == "NOAUTH" || code == "WRONGPASS") throw AuthError(message, std::move(code));
  throw ReplyError(message, std::move(code));
}

// True when an idle connection cannot carry the next command: the server closed it (EOF or
// reset), or it holds bytes nobody asked for, so replies would be out of step.
bool unusable_while_idle(int fd) {
  char byte;
  const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n >= 0) return true;
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

// hiredis writes with write(2), which raises SIGPIPE when the server has closed the socket,
// and SIGPIPE's default action ends the process. While one is alive, SIGPIPE is blocked in
// the calling thread; one raised meanwhile is consumed before unblocking, and the write's
// EPIPE becomes an IoError like any other.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlocked() {
    if (!already_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec no_wait{0, 0};
        sigtimedwait(&pipe_, nullptr, &no_wait);
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked &) = delete;
  SigpipeBlocked &operator=(const SigpipeBlocked &) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
  bool already_pending_ = false;
};

Batch batch_of(const std::vector<Command> &commands) {
  Batch batch;
  batch.reserve(commands.size());
  for (const Command &command : commands) batch.push_back(&command);
  return batch;
}

void check_commands(const std::string &endpoint, const Batch &commands) {
  for (size_t i = 0; i < commands.size(); ++i) {
    if (commands[i]->empty()) {
      throw Error("redis " + endpoint + ": command " + std::to_string(i + 1) + " of " +
                  std::to_string(commands.size()) + " is empty");
    }
  }
}

}  // namespace

std::string RedisReply::error_code() const {
  if (kind != Kind::kError) return "";
  return str.substr(0, str.find(' '));
}

// The socket, its state, and the rules of RedisClient's header: drop on failure, reconnect
// with backoff on the next call, never resend.
class RedisClient::Connection {
 public:
  explicit Connection(RedisOptions options)
      : options_(std::move(options)), endpoint_(options_.endpoint()) {
    options_.validate();
    connect();
  }

  const std::string &endpoint() const { return endpoint_; }
  bool is_open() const { return context_ != nullptr; }
  const RedisOptions &options() const { return options_; }

  // Sends `commands` and reads one reply per command, top-level errors included as kError.
  // `timeout` is the per-read bound. With `guard_watch`, refuses (IoError, nothing sent)
  // when a WATCH was lost with an earlier connection.
  std::vector<RedisReply> exchange(const Batch &commands, milliseconds timeout,
                                   bool guard_watch = false) {
    ensure_open();
    if (guard_watch && watch_lost_) {
      watch_lost_ = false;
      throw IoError("redis " + endpoint_ +
                    ": the connection that held the WATCH was lost, so the transaction "
                    "would run unguarded; nothing was sent: WATCH again and retry");
    }
    std::vector<RedisReply> replies = round_trip(commands, timeout);
    failures_ = 0;
    track_watch(commands, replies);
    return replies;
  }

  // Closes the socket. `failed`: it broke, so the next connection attempt backs off.
  void drop(bool failed) {
    context_.reset();
    socket_timeout_.reset();
    if (watching_) watch_lost_ = true;
    watching_ = false;
    if (failed) note_failure();
  }

 private:
  void ensure_open() {
    if (context_ && !unusable_while_idle(context_->fd)) return;
    if (context_) {
      spdlog::debug("redis {}: the server closed the idle connection; reconnecting", endpoint_);
      drop(false);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now < next_attempt_) std::this_thread::sleep_until(next_attempt_);
    connect();
  }

  void connect() {
    const timeval connect_tv = to_timeval(options_.connect_timeout);
    redisContext *c =
        options_.connect_timeout.count() > 0
            ? redisConnectWithTimeout(options_.host.c_str(), options_.port, connect_tv)
            : redisConnect(options_.host.c_str(), options_.port);
    const int connect_errno = errno;
    if (c == nullptr) {
      note_failure();
      throw IoError("redis " + endpoint_ + ": cannot allocate a connection");
    }
    std::unique_ptr<redisContext, ContextDeleter> context(c);
    if (c->err) {
      note_failure();
      const std::string what = "redis " + endpoint_ + ": cannot connect: " + c->errstr;
      if (connect_errno == ETIMEDOUT) {
        throw TimeoutError(what + " (no answer within " +
                           std::to_string(options_.connect_timeout.count()) + " ms)");
      }
      throw IoError(what + " (is redis-server running there?)");
    }
    // Keepalive lets a BLOCK without timeout notice a server that vanished from the network.
    redisEnableKeepAlive(c);
    context_ = std::move(context);
    handshake();
    if (connected_before_) spdlog::info("redis {}: connected again", endpoint_);
    connected_before_ = true;
  }

  // AUTH and SELECT, pipelined. Their failures count as failed connection attempts.
  void handshake() {
    std::vector<Command> commands;
    if (!options_.password.empty()) {
      commands.push_back(options_.username.empty()
                             ? Command{"AUTH", options_.password}
                             : Command{"AUTH", options_.username, options_.password});
    }
    if (options_.db != 0) commands.push_back({"SELECT", std::to_string(options_.db)});
    if (commands.empty()) return;
    const std::vector<RedisReply> replies =
        round_trip(batch_of(commands), options_.command_timeout);
    for (size_t i = 0; i < replies.size(); ++i) {
      if (!replies[i].is_error()) continue;
      const RedisReply refused = replies[i];
      drop(true);
      if (commands[i][0] == "AUTH") {
        const std::string as =
            options_.username.empty() ? "" : " as user '" + options_.username + "'";
        throw AuthError("redis " + endpoint_ + ": AUTH" + as + " refused: " + refused.str,
                        refused.error_code());
      }
      throw ConfigError("redis " + endpoint_ + ": SELECT " + std::to_string(options_.db) +
                        " refused: " + refused.str);
    }
  }

  std::vector<RedisReply> round_trip(const Batch &commands, milliseconds timeout) {
    set_socket_timeout(timeout);
    SigpipeBlocked sigpipe_blocked;
    for (const Command *command : commands) append(*command);
    std::vector<RedisReply> replies;
    replies.reserve(commands.size());
    for (size_t i = 0; i < commands.size(); ++i) {
      void *raw = nullptr;
      if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) {
        fail_io(commands, i, timeout, errno);
      }
      std::unique_ptr<redisReply, ReplyDeleter> reply(static_cast<redisReply *>(raw));
      replies.push_back(convert(*reply));
    }
    return replies;
  }

  void append(const Command &command) {
    std::vector<const char *> argv;
    std::vector<size_t> lengths;
    argv.reserve(command.size());
    lengths.reserve(command.size());
    for (const auto &a : command) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(context_.get(), static_cast<int>(command.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      // Part of a batch may sit in the output buffer; the stream is no longer trustworthy.
      drop(true);
      throw IoError("redis " + endpoint_ + ": " + command[0] + ": cannot buffer the command");
    }
  }

  [[noreturn]] void fail_io(const Batch &commands, size_t index, milliseconds timeout,
                            int error_number) {
    std::string what = (*commands[index])[0];
    if (commands.size() > 1) {
      what +=
          " (reply " + std::to_string(index + 1) + " of " + std::to_string(commands.size()) + ")";
    }
    const bool timed_out =
        context_->err == REDIS_ERR_IO && (error_number == EAGAIN || error_number == EWOULDBLOCK);
    const std::string message =
        "redis " + endpoint_ + ": " + what +
        (timed_out ? " got no reply within " + std::to_string(timeout.count()) + " ms"
                   : " failed: " + std::string(context_->errstr)) +
        "; the connection is dropped and the command not resent";
    drop(true);
    if (timed_out) throw TimeoutError(message);
    throw IoError(message);
  }

  void set_socket_timeout(milliseconds timeout) {
    if (socket_timeout_ == timeout) return;
    if (redisSetTimeout(context_.get(), to_timeval(timeout)) != REDIS_OK) {
      const std::string why = context_->errstr;
      drop(true);
      throw IoError("redis " + endpoint_ + ": cannot set the socket timeout: " + why);
    }
    socket_timeout_ = timeout;
  }

  void note_failure() {
    ++failures_;
    milliseconds delay = options_.reconnect_backoff_initial;
    for (int i = 1; i < failures_ && delay.count() > 0 && delay < options_.reconnect_backoff_max;
         ++i) {
      delay *= 2;
    }
    delay = std::min(delay, options_.reconnect_backoff_max);
    next_attempt_ = std::chrono::steady_clock::now() + delay;
  }

  // A WATCH lives on its connection; losing that connection before EXEC must not go unseen.
  void track_watch(const Batch &commands, const std::vector<RedisReply> &replies) {
    for (size_t i = 0; i < commands.size(); ++i) {
      const std::string name = upper((*commands[i])[0]);
      if (name == "WATCH" && !replies[i].is_error()) {
        watching_ = true;
        watch_lost_ = false;
      } else if (name == "UNWATCH" || name == "EXEC" || name == "DISCARD") {
        watching_ = false;
        watch_lost_ = false;
      }
    }
  }

  RedisOptions options_;
  std::string endpoint_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
  std::optional<milliseconds> socket_timeout_;  // unknown after a (re)connect
  int failures_ = 0;                            // consecutive, since the last good reply
  std::chrono::steady_clock::time_point next_attempt_{};
  bool connected_before_ = false;
  bool watching_ = false;
  bool watch_lost_ = false;
};

RedisClient::RedisClient(RedisOptions options)
    : connection_(std::make_unique<Connection>(std::move(options))) {}

RedisClient::RedisClient(const std::string &host, int port)
    : RedisClient([&] {
        RedisOptions options;
        options.host = host;
        options.port = port;
        return options;
      }()) {}

RedisClient::~RedisClient() = default;
RedisClient::RedisClient(RedisClient &&) noexcept = default;
RedisClient &RedisClient::operator=(RedisClient &&) noexcept = default;

RedisClient::Connection &RedisClient::connection() const {
  if (!connection_) throw Error("redis: this RedisClient was moved from");
  return *connection_;
}

RedisReply RedisClient::command(const std::vector<std::string> &args) {
  return command(args, connection().options().command_timeout);
}

RedisReply RedisClient::command(const std::vector<std::string> &args, milliseconds timeout) {
  Connection &c = connection();
  check_commands(c.endpoint(), {&args});
  RedisReply reply = std::move(c.exchange({&args}, timeout).front());
  if (reply.is_error()) throw_reply_error(c.endpoint(), args[0], reply);
  return reply;
}

std::vector<RedisReply> RedisClient::pipeline(
    const std::vector<std::vector<std::string>> &commands) {
  Connection &c = connection();
  const Batch batch = batch_of(commands);
  check_commands(c.endpoint(), batch);
  if (batch.empty()) return {};
  return c.exchange(batch, c.options().command_timeout);
}

std::optional<std::vector<RedisReply>> RedisClient::transaction(
    const std::vector<std::vector<std::string>> &commands) {
  Connection &c = connection();
  const Command multi{"MULTI"};
  const Command exec_command{"EXEC"};
  Batch all = batch_of(commands);
  check_commands(c.endpoint(), all);
  all.insert(all.begin(), &multi);
  all.push_back(&exec_command);
  std::vector<RedisReply> replies = c.exchange(all, c.options().command_timeout, true);
  if (replies.front().is_error()) throw_reply_error(c.endpoint(), "MULTI", replies.front());
  for (size_t i = 0; i < commands.size(); ++i) {
    const RedisReply &queued = replies[i + 1];
    if (!queued.is_error()) continue;
    throw_reply_error(c.endpoint(),
                      commands[i][0] + " (command " + std::to_string(i + 1) + " of " +
                          std::to_string(commands.size()) +
                          " in MULTI/EXEC, refused while queueing, so nothing ran)",
                      queued);
  }
  RedisReply &exec = replies.back();
  if (exec.is_nil()) return std::nullopt;
  if (exec.is_error()) throw_reply_error(c.endpoint(), "EXEC", exec);
  return std::move(exec.elements);
}

RedisReply RedisClient::eval(RedisScript &script, const std::vector<std::string> &keys,
                             const std::vector<std::string> &args) {
  Connection &c = connection();
  const auto load = [&] {
    const Command load_command{"SCRIPT", "LOAD", script.source_};
    RedisReply loaded = std::move(c.exchange({&load_command}, c.options().command_timeout).front());
    if (loaded.is_error()) {
      throw_reply_error(c.endpoint(), "SCRIPT LOAD of script '" + script.name_ + "'", loaded);
    }
    script.sha1_ = loaded.str;
  };
  const auto evalsha = [&] {
    Command argv{"EVALSHA", script.sha1_, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return std::move(c.exchange({&argv}, c.options().command_timeout).front());
  };
  if (script.sha1_.empty()) load();
  RedisReply reply = evalsha();
  if (reply.is_error() && reply.error_code() == "NOSCRIPT") {
    load();
    reply = evalsha();
  }
  if (reply.is_error()) throw_reply_error(c.endpoint(), "script '" + script.name_ + "'", reply);
  return reply;
}

void RedisClient::set(const std::string &key, const std::string &value) {
  // Built in place: an initializer list would copy the value twice.
  std::vector<std::string> args;
  args.reserve(3);
  args.emplace_back("SET");
  args.push_back(key);
  args.push_back(value);
  command(args);
}

std::optional<std::string> RedisClient::get(const std::string &key) {
  RedisReply r = command({"GET", key});
  if (r.is_nil()) return std::nullopt;
  return r.str;
}

bool RedisClient::ping() {
  RedisReply r = command({"PING"});
  return r.kind == RedisReply::Kind::kStatus && r.str == "PONG";
}

bool RedisClient::connected() const { return connection_ && connection_->is_open(); }

void RedisClient::disconnect() { connection().drop(false); }

const std::string &RedisClient::endpoint() const { return connection().endpoint(); }

}  // namespace protuner
