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
  EXPECT_EQ(s.algorithm, "mcts_1s");
  EXPECT_EQ(s.budget_seconds, 10);
  EXPECT_FALSE(s.iterations);
  EXPECT_FALSE(s.schedule_json_path);
  EXPECT_FALSE(s.app);
  EXPECT_FALSE(s.measure_child);
  EXPECT_EQ(s.cost_model.name(), "analytic");
}

TEST(PluginSettings, EmptyValuesCountAsUnset) {
  const PluginSettings s = settings_from({{"HL_PROTUNER_SEED", ""}, {"HL_PROTUNER_ALGORITHM", ""}});
  EXPECT_EQ(s.seed, 0u);
  EXPECT_EQ(s.algorithm, kPluginDefaultAlgorithm);
}

TEST(PluginSettings, ReadsEveryVariable) {
  const PluginSettings s = settings_from({{"HL_PROTUNER_SEED", "18446744073709551615"},
                                          {"HL_PROTUNER_ALGORITHM", "mcts_cost+real_1s"},
                                          {"HL_PROTUNER_BUDGET_S", "0"},
                                          {"HL_PROTUNER_ITERATIONS", "7"},
                                          {"HL_PROTUNER_SCHEDULE_JSON", "/tmp/s.json"},
                                          {"HL_PROTUNER_APP_LIBRARY", "/lib/libapp.so"},
                                          {"HL_PROTUNER_APP_GENERATOR", "blur"},
                                          {"HL_PROTUNER_APP_PARAMS", "width=64,expert=false"},
                                          {"HL_PROTUNER_MEASURE_CHILD", "/bin/child"},
                                          {"HL_PROTUNER_ALLOW_UNMEASURED", "1"}});
  EXPECT_EQ(s.seed, 18446744073709551615ull);
  EXPECT_EQ(s.algorithm, "mcts_cost+real_1s");
  EXPECT_EQ(s.budget_seconds, 0);
  EXPECT_EQ(s.iterations, 7);
  EXPECT_EQ(s.schedule_json_path, "/tmp/s.json");
  ASSERT_TRUE(s.app);
  EXPECT_EQ(s.app->library, "/lib/libapp.so");
  EXPECT_EQ(s.app->generator, "blur");
  const std::map<std::string, std::string> params{{"width", "64"}, {"expert", "false"}};
  EXPECT_EQ(s.app->params, params);
  EXPECT_EQ(s.measure_child, "/bin/child");
  EXPECT_TRUE(s.allow_unmeasured);
  EXPECT_NE(s.describe().find("algorithm=mcts_cost+real_1s"), std::string::npos);
  EXPECT_FALSE(settings_from({}).allow_unmeasured);
  EXPECT_NE(error_of({{"HL_PROTUNER_ALLOW_UNMEASURED", "yes"}}).find("expected 0 or 1"),
            std::string::npos);
}

TEST(PluginSettings, AcceptsEverySearchByName) {
  for (const char *name : {"mcts_30s", "mcts_0.5s", "mcts_sqrt2_30s", "beam", "greedy", "random"}) {
    EXPECT_EQ(settings_from({{"HL_PROTUNER_ALGORITHM", name}}).algorithm, name);
  }
}

TEST(PluginSettings, TheAppNeedsLibraryAndGeneratorTogether) {
  EXPECT_NE(error_of({{"HL_PROTUNER_APP_LIBRARY", "/lib/libapp.so"}}).find("set both or neither"),
            std::string::npos);
  EXPECT_NE(error_of({{"HL_PROTUNER_APP_PARAMS", "a=1"}}).find("HL_PROTUNER_APP_LIBRARY"),
            std::string::npos);
  const std::string e = error_of({{"HL_PROTUNER_APP_LIBRARY", "/l.so"},
                                  {"HL_PROTUNER_APP_GENERATOR", "g"},
                                  {"HL_PROTUNER_APP_PARAMS", "width64"}});
  EXPECT_NE(e.find("HL_PROTUNER_APP_PARAMS='width64'"), std::string::npos) << e;
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
  EXPECT_NE(e.find("mcts_30s, mcts_10s"), std::string::npos) << e;
  EXPECT_NE(e.find("beam, beam_lookahead, greedy, random"), std::string::npos) << e;
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

TEST(PluginSettings, ChoosesTheCostModelByNameOrWeightsFile) {
  for (const char *name : {"analytic", "feedforward", "gcn"}) {
    const PluginSettings s = settings_from({{"HL_PROTUNER_COST_MODEL", name}});
    EXPECT_EQ(s.cost_model.name(), name);
    EXPECT_EQ(s.cost_model.learned(), std::string(name) != "analytic");
    EXPECT_NE(s.describe().find(std::string("cost_model=") + name), std::string::npos);
  }
  const std::string e = error_of({{"HL_PROTUNER_COST_MODEL", "/no/such.weights"}});
  EXPECT_NE(e.find("HL_PROTUNER_COST_MODEL='/no/such.weights' is not valid"), std::string::npos)
      << e;
  EXPECT_NE(e.find("analytic, feedforward or gcn"), std::string::npos) << e;
}

TEST(PluginSettings, RefusesZeroIterations) {
  EXPECT_NE(error_of({{"HL_PROTUNER_ITERATIONS", "0"}}).find("HL_PROTUNER_ITERATIONS='0'"),
            std::string::npos);
}

}  // namespace
}  // namespace protuner
