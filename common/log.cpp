#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/errors.h"

namespace protuner {

void init_logging(const std::string &level) {
  const auto parsed = spdlog::level::from_str(level);
  // spdlog maps unknown names to "off"; only the literal "off" may mean that.
  if (parsed == spdlog::level::off && level != "off") {
    throw ConfigError("unknown log level '" + level +
                      "' (use trace, debug, info, warn, error or off)");
  }
  spdlog::drop("protuner");  // calling again re-initializes instead of failing
  auto logger = spdlog::stderr_color_mt("protuner");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [%P] %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
}

}  // namespace protuner
