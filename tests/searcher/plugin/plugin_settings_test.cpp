// The plugin's environment variables: defaults, strict parsing, and errors that name the
// variable and the value.
#include <gtest/gtest.h>

#include <map>

#include "common/errors.h"
#include "searcher/plugin/plugin_settings.h"

namespace protuner {
namespace {

PluginSettings settings_from(const std::map<std::string, std::string> &env) {
  return plugin_settings_from([&](const std::string &name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string error_of(const std::map<std::string, std::string> &env) {
  try {
    settings_from(env);
  } catch (const ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(PluginSettings, DefaultsWhenNothingIsSet) {
  const PluginSettings s = settings_from({});
  EXPECT_EQ(s.seed, 0u);
  EXPECT_EQ(s.algorithm, PluginAlgorithm::kRandom);
  EXPECT_EQ(s.budget_seconds, 10);
  EXPECT_FALSE(s.max_iterations);
  EXPECT_FALSE(s.schedule_json_path);
}

TEST(PluginSettings, EmptyValuesCountAsUnset) {
  const PluginSettings s = settings_from({{"HL_PROTUNER_SEED", ""}, {"HL_PROTUNER_ALGORITHM", ""}});
  EXPECT_EQ(s.seed, 0u);
  EXPECT_EQ(s.algorithm, PluginAlgorithm::kRandom);
}

TEST(PluginSettings, ReadsEveryVariable) {
  const PluginSettings s = settings_from({{"HL_PROTUNER_SEED", "18446744073709551615"},
                                          {"HL_PROTUNER_ALGORITHM", "greedy"},
                                          {"HL_PROTUNER_BUDGET_S", "0"},
                                          {"HL_PROTUNER_ITERATIONS", "7"},
                                          {"HL_PROTUNER_SCHEDULE_JSON", "/tmp/s.json"}});
  EXPECT_EQ(s.seed, 18446744073709551615ull);
  EXPECT_EQ(s.algorithm, PluginAlgorithm::kGreedy);
  EXPECT_EQ(s.budget_seconds, 0);
  EXPECT_EQ(s.max_iterations, 7);
  EXPECT_EQ(s.schedule_json_path, "/tmp/s.json");
  EXPECT_NE(s.describe().find("algorithm=greedy"), std::string::npos);
}

TEST(PluginSettings, RefusesABadSeedNamingTheVariableAndValue) {
  for (const char *bad : {"abc", "-1", "+3", "12x", " 4", "1.5", "18446744073709551616"}) {
    const std::string e = error_of({{"HL_PROTUNER_SEED", bad}});
    EXPECT_NE(e.find("HL_PROTUNER_SEED"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find(std::string("'") + bad + "'"), std::string::npos) << bad << ": " << e;
  }
}

TEST(PluginSettings, RefusesAnUnknownAlgorithmListingTheValidNames) {
  const std::string e = error_of({{"HL_PROTUNER_ALGORITHM", "mcts"}});
  EXPECT_NE(e.find("HL_PROTUNER_ALGORITHM='mcts'"), std::string::npos) << e;
  EXPECT_NE(e.find("random, greedy"), std::string::npos) << e;
  // Names are case-sensitive, as the README lists them.
  EXPECT_NE(error_of({{"HL_PROTUNER_ALGORITHM", "Random"}}), "");
}

TEST(PluginSettings, RefusesABadBudget) {
  for (const char *bad : {"2.5", "-3", "ten", "5s", "99999999999999999999", "31536001"}) {
    const std::string e = error_of({{"HL_PROTUNER_BUDGET_S", bad}});
    EXPECT_NE(e.find(std::string("HL_PROTUNER_BUDGET_S='") + bad + "'"), std::string::npos)
        << bad << ": " << e;
    EXPECT_NE(e.find("whole seconds"), std::string::npos) << e;
  }
}

TEST(PluginSettings, RefusesZeroIterations) {
  EXPECT_NE(error_of({{"HL_PROTUNER_ITERATIONS", "0"}}).find("HL_PROTUNER_ITERATIONS='0'"),
            std::string::npos);
}

}  // namespace
}  // namespace protuner
