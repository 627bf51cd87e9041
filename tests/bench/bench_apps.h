// How the benchmarks name apps on their command lines: `<name>` is a bundled app (library
// libprotuner_app_<name>.so in the build's lib/, generator <name>), `<name>/<generator>`
// another generator of that bundled library, and `<path.so>:<generator>` a generator of any
// library (a corpus generator, a user's).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "common/app.h"

namespace protuner::bench {

inline std::vector<std::string> split_list(const std::string &s, char separator = ',') {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, separator);) out.push_back(item);
  return out;
}

inline AppSpec app_spec(const std::string &arg) {
  if (const auto colon = arg.rfind(':'); colon != std::string::npos) {
    const std::string gen = arg.substr(colon + 1);
    return {gen, arg.substr(0, colon), gen, {}};
  }
  const auto slash = arg.find('/');
  const std::string lib = slash == std::string::npos ? arg : arg.substr(0, slash);
  const std::string gen = slash == std::string::npos ? arg : arg.substr(slash + 1);
  return {gen, std::string(PROTUNER_APP_LIBRARY_DIR) + "/libprotuner_app_" + lib + ".so", gen, {}};
}

}  // namespace protuner::bench
