// The farm's one clock: Redis server time. Deadlines, heartbeats and histories are compared
// across hosts, so every farm process reads time from the server rather than its own clock.
// Lua scripts prepend kServerNowLua; C++ callers outside a script use server_now_ms.
#pragma once

#include <cstdint>

namespace protuner {
class RedisClient;
}

namespace protuner::farm {

// A Lua prelude that defines the local `now`: the server's time in unix ms (an integer).
inline constexpr const char *kServerNowLua = R"(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
)";

// The server's time in unix ms (Redis TIME). Throws ReplyError when the reply is malformed.
int64_t server_now_ms(RedisClient &redis);

}  // namespace protuner::farm
