// The --redis option, one spelling and one default for every command that talks to the
// farm's Redis (the farm's daemons and read-outs, `dataset export`).
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace protuner {

// The Redis a command talks to when no --redis is given.
inline constexpr const char *kDefaultRedisUrl = "redis://127.0.0.1:6379";

// Adds `--redis URL` to `cmd`, stored in `url` (which holds the default).
void add_redis_option(CLI::App *cmd, std::string &url);

}  // namespace protuner
