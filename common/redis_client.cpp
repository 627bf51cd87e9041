#include "common/redis_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include "common/errors.h"

namespace protuner {
namespace {

struct ReplyDeleter {
  void operator()(redisReply *r) const { freeReplyObject(r); }
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

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

void RedisClient::ContextDeleter::operator()(redisContext *c) const { redisFree(c); }

RedisClient::RedisClient(const std::string &host, int port, std::chrono::milliseconds timeout)
    : endpoint_(host + ":" + std::to_string(port)) {
  redisContext *c = timeout.count() > 0
                        ? redisConnectWithTimeout(host.c_str(), port, to_timeval(timeout))
                        : redisConnect(host.c_str(), port);
  if (c == nullptr) throw IoError("redis " + endpoint_ + ": cannot allocate a connection");
  context_.reset(c);
  if (c->err) {
    throw IoError("redis " + endpoint_ + ": cannot connect: " + c->errstr +
                  " (is redis-server running there?)");
  }
  if (timeout.count() > 0 && redisSetTimeout(c, to_timeval(timeout)) != REDIS_OK) {
    throw IoError("redis " + endpoint_ + ": cannot set the command timeout");
  }
}

RedisClient::~RedisClient() = default;
RedisClient::RedisClient(RedisClient &&) noexcept = default;
RedisClient &RedisClient::operator=(RedisClient &&) noexcept = default;

RedisReply RedisClient::command(const std::vector<std::string> &args) {
  if (!context_) throw IoError("redis " + endpoint_ + ": connection was moved from");
  if (args.empty()) throw Error("redis " + endpoint_ + ": empty command");
  std::vector<const char *> argv;
  std::vector<size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (const auto &a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  void *raw =
      redisCommandArgv(context_.get(), static_cast<int>(args.size()), argv.data(), lengths.data());
  if (raw == nullptr) {
    const bool timed_out = context_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == ETIMEDOUT);
    const std::string what = "redis " + endpoint_ + ": " + args[0] + " failed: " + context_->errstr;
    if (timed_out) throw TimeoutError(what);
    throw IoError(what);
  }
  std::unique_ptr<redisReply, ReplyDeleter> reply(static_cast<redisReply *>(raw));
  if (reply->type == REDIS_REPLY_ERROR) {
    throw ReplyError("redis " + endpoint_ + ": " + args[0] + ": " +
                     std::string(reply->str, reply->len));
  }
  return convert(*reply);
}

void RedisClient::set(const std::string &key, const std::string &value) {
  command({"SET", key, value});
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

}  // namespace protuner
