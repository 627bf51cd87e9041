// Parsing of the plugin's environment variables (see plugin_settings.h).
#include "searcher/plugin/plugin_settings.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "common/errors.h"

namespace protuner {
namespace {

// The variables, as the README and every error message name them.
constexpr const char *kSeedVar = "HL_PROTUNER_SEED";
constexpr const char *kAlgorithmVar = "HL_PROTUNER_ALGORITHM";
constexpr const char *kBudgetVar = "HL_PROTUNER_BUDGET_S";
constexpr const char *kIterationsVar = "HL_PROTUNER_ITERATIONS";
constexpr const char *kScheduleJsonVar = "HL_PROTUNER_SCHEDULE_JSON";

[[noreturn]] void refuse(const char *var, const std::string &value, const std::string &why) {
  throw ConfigError(std::string(var) + "='" + value + "' is not valid: " + why);
}

// A budget beyond this is a typo, and would overflow the deadline's clock arithmetic.
constexpr int64_t kMaxBudgetSeconds = 365 * 24 * 3600;

// The whole of `text` as an unsigned decimal in [min, max] (no sign, spaces, or trailing
// characters).
template <typename T>
T parse_decimal(const char *var, const std::string &text, T min, T max,
                const std::string &expected) {
  T value{};
  const char *end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() || ptr != end ||
      value < min || value > max) {
    refuse(var, text, "expected " + expected);
  }
  return value;
}

PluginAlgorithm parse_algorithm(const std::string &text) {
  const auto &names = plugin_algorithm_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<PluginAlgorithm>(i);
  }
  std::string valid;
  for (const std::string &n : names) valid += (valid.empty() ? "" : ", ") + n;
  refuse(kAlgorithmVar, text, "unknown algorithm; valid names: " + valid);
}

}  // namespace

const std::vector<std::string> &plugin_algorithm_names() {
  // Indexed by PluginAlgorithm.
  static const std::vector<std::string> names{"random", "greedy"};
  return names;
}

std::string to_string(PluginAlgorithm a) {
  return plugin_algorithm_names().at(static_cast<size_t>(a));
}

std::string PluginSettings::describe() const {
  std::ostringstream os;
  os << "algorithm=" << to_string(algorithm) << " seed=" << seed
     << " budget=" << budget_seconds << "s";
  if (max_iterations) os << " iterations=" << *max_iterations;
  if (schedule_json_path) os << " schedule_json=" << *schedule_json_path;
  return os.str();
}

PluginSettings plugin_settings_from(const EnvLookup &lookup) {
  auto get = [&](const char *var) -> std::optional<std::string> {
    std::optional<std::string> v = lookup(var);
    if (v && v->empty()) return std::nullopt;
    return v;
  };
  PluginSettings s;
  if (auto v = get(kSeedVar)) {
    s.seed = parse_decimal<uint64_t>(kSeedVar, *v, 0, UINT64_MAX, "an unsigned decimal integer");
  }
  if (auto v = get(kAlgorithmVar)) s.algorithm = parse_algorithm(*v);
  if (auto v = get(kBudgetVar)) {
    s.budget_seconds = parse_decimal<int64_t>(kBudgetVar, *v, 0, kMaxBudgetSeconds,
                                              "whole seconds, a decimal integer from 0 to " +
                                                  std::to_string(kMaxBudgetSeconds));
  }
  if (auto v = get(kIterationsVar)) {
    s.max_iterations =
        parse_decimal<int64_t>(kIterationsVar, *v, 1, INT64_MAX, "a decimal integer >= 1");
  }
  if (auto v = get(kScheduleJsonVar)) s.schedule_json_path = *v;
  return s;
}

PluginSettings plugin_settings_from_environment() {
  return plugin_settings_from([](const std::string &name) -> std::optional<std::string> {
    const char *v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  });
}

}  // namespace protuner
