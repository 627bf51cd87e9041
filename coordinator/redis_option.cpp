// See redis_option.h.
#include "coordinator/redis_option.h"

#include <CLI/CLI.hpp>

namespace protuner {

void add_redis_option(CLI::App *cmd, std::string &url) {
  cmd->add_option("--redis", url,
                  "redis://[user[:password]@]host[:port][/db]; the password may also come from "
                  "$PROTUNER_REDIS_PASSWORD")
      ->capture_default_str();
}

}  // namespace protuner
