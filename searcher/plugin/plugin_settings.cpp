// Parsing of the plugin's environment variables (see plugin_settings.h).
#include "searcher/plugin/plugin_settings.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "searcher/search/search_registry.h"

namespace protuner {
namespace {

// The variables, as the README and every error message name them.
constexpr const char *kSeedVar = "HL_PROTUNER_SEED";
constexpr const char *kAlgorithmVar = "HL_PROTUNER_ALGORITHM";
constexpr const char *kCostModelVar = "HL_PROTUNER_COST_MODEL";
constexpr const char *kBudgetVar = "HL_PROTUNER_BUDGET_S";
constexpr const char *kIterationsVar = "HL_PROTUNER_ITERATIONS";
constexpr const char *kScheduleJsonVar = "HL_PROTUNER_SCHEDULE_JSON";
constexpr const char *kAppLibraryVar = "HL_PROTUNER_APP_LIBRARY";
constexpr const char *kAppGeneratorVar = "HL_PROTUNER_APP_GENERATOR";
constexpr const char *kAppParamsVar = "HL_PROTUNER_APP_PARAMS";
constexpr const char *kMeasureChildVar = "HL_PROTUNER_MEASURE_CHILD";
constexpr const char *kAllowUnmeasuredVar = "HL_PROTUNER_ALLOW_UNMEASURED";

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

std::string parse_algorithm(const std::string &text) {
  const auto &names = search_names();
  if (std::find(names.begin(), names.end(), text) != names.end()) return text;
  std::string valid;
  for (const std::string &n : names) valid += (valid.empty() ? "" : ", ") + n;
  refuse(kAlgorithmVar, text, "unknown algorithm; valid names: " + valid);
}

CostModelChoice parse_cost_model(const std::string &text) {
  try {
    return CostModelChoice(text);
  } catch (const Error &e) {
    refuse(kCostModelVar, text, e.what());
  }
}

// "name=value,name=value" into generator params.
std::map<std::string, std::string> parse_params(const std::string &text) {
  std::map<std::string, std::string> params;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      refuse(kAppParamsVar, text, "'" + item + "' is not of the form name=value");
    }
    params[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return params;
}

}  // namespace

std::string PluginSettings::describe() const {
  std::ostringstream os;
  os << "algorithm=" << algorithm << " cost_model=" << cost_model.name() << " seed=" << seed
     << " budget=" << budget_seconds << "s";
  if (iterations) os << " iterations=" << *iterations;
  if (schedule_json_path) os << " schedule_json=" << *schedule_json_path;
  if (app) os << " app=" << app->library << ":" << app->generator;
  if (measure_child) os << " measure_child=" << *measure_child;
  if (allow_unmeasured) os << " allow_unmeasured=1";
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
  if (auto v = get(kCostModelVar)) s.cost_model = parse_cost_model(*v);
  if (auto v = get(kBudgetVar)) {
    s.budget_seconds = parse_decimal<int64_t>(kBudgetVar, *v, 0, kMaxBudgetSeconds,
                                              "whole seconds, a decimal integer from 0 to " +
                                                  std::to_string(kMaxBudgetSeconds));
  }
  if (auto v = get(kIterationsVar)) {
    s.iterations =
        parse_decimal<int64_t>(kIterationsVar, *v, 1, INT64_MAX, "a decimal integer >= 1");
  }
  if (auto v = get(kScheduleJsonVar)) s.schedule_json_path = *v;
  const std::optional<std::string> library = get(kAppLibraryVar);
  const std::optional<std::string> generator = get(kAppGeneratorVar);
  if (library.has_value() != generator.has_value()) {
    throw ConfigError(std::string(kAppLibraryVar) + " and " + kAppGeneratorVar +
                      " name the app together: set both or neither");
  }
  if (library) {
    AppSpec app;
    app.library = *library;
    app.generator = *generator;
    app.name = *generator;
    if (auto v = get(kAppParamsVar)) app.params = parse_params(*v);
    s.app = std::move(app);
  } else if (get(kAppParamsVar)) {
    throw ConfigError(std::string(kAppParamsVar) + " is set but " + kAppLibraryVar +
                      " and " + kAppGeneratorVar + " are not");
  }
  if (auto v = get(kMeasureChildVar)) s.measure_child = *v;
  if (auto v = get(kAllowUnmeasuredVar)) {
    if (*v != "0" && *v != "1") refuse(kAllowUnmeasuredVar, *v, "expected 0 or 1");
    s.allow_unmeasured = *v == "1";
  }
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
