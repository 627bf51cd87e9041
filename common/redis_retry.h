// Retrying Redis work until a deadline, for callers whose work is idempotent. RedisClient
// never resends a command whose fate is unknown (an INCR, an XADD or a script may have run
// before the connection broke); a caller that knows running it twice is harmless (GET, SET
// of the same value, HSET of a result under its own key, XACK) wraps it in this.
#pragma once

#include <chrono>

#include "common/errors.h"
#include "common/redis_client.h"

namespace protuner {

// Calls fn(client) until it returns without IoError (TimeoutError included), and returns
// what it returned. Once the deadline has passed, the last IoError is rethrown; any other
// error (ReplyError, ConfigError, ...) is thrown at once. Attempts are paced by the client's
// reconnect backoff, so an attempt may end past the deadline by up to the backoff maximum
// plus the connect and command timeouts. Only for idempotent operations: fn may run more
// than once, and an attempt that failed may have taken effect.
template <typename Fn>
auto retry_on_io_error(RedisClient &client, std::chrono::steady_clock::time_point deadline, Fn &&fn)
    -> decltype(fn(client)) {
  for (;;) {
    try {
      return fn(client);
    } catch (const IoError &) {
      if (std::chrono::steady_clock::now() >= deadline) throw;
    }
  }
}

}  // namespace protuner
