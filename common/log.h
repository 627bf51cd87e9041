// Process-wide logging setup. Every daemon and tool logs through spdlog's default logger,
// to stderr, so stdout stays clean for tables and --json output that scripts consume.
#pragma once

#include <string>

namespace protuner {

// Sets the default logger to a stderr sink with protuner's pattern and the given level
// ("trace", "debug", "info", "warn", "error", "off"). Throws ConfigError on an unknown level.
void init_logging(const std::string &level);

}  // namespace protuner
