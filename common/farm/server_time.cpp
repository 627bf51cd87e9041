// Redis server time in unix ms (server_time.h).
#include "common/farm/server_time.h"

#include <string>

#include "common/errors.h"
#include "common/redis_client.h"

namespace protuner::farm {

int64_t server_now_ms(RedisClient &redis) {
  const RedisReply time = redis.command({"TIME"});
  if (time.elements.size() != 2) {
    throw ReplyError("Redis TIME: expected 2 elements, got " +
                     std::to_string(time.elements.size()));
  }
  try {
    return std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;
  } catch (const std::exception &) {
    throw ReplyError("Redis TIME: not a time: '" + time.elements[0].str + "' '" +
                     time.elements[1].str + "'");
  }
}

}  // namespace protuner::farm
