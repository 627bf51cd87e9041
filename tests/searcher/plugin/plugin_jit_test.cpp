// The plugin as Halide uses it, in this process: loading libautoschedule_protuner.so
// registers "ProTuner"; Pipeline::auto_schedule runs it, which schedules the pipeline's
// Funcs; JIT-compiled, the pipeline computes exactly what the root schedule computes
// (strict_float on both sides). Settings come from the environment, as in the driver.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>

#include "common/app.h"
#include "common/host_target.h"
#include "common/pipeline_io.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

constexpr uint64_t kInputSeed = 17;

// Sets environment variables for one scope, restoring what was there before.
using Env = std::map<std::string, std::string>;
class ScopedEnv {
 public:
  explicit ScopedEnv(const Env &vars) {
    for (const auto &[name, value] : vars) {
      const char *old = getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;
  ~ScopedEnv() {
    for (const auto &[name, old] : saved_) {
      if (old)
        setenv(name.c_str(), old->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

class ProTunerPlugin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Never closed: Halide's registry keeps a pointer into the library.
    ASSERT_NE(dlopen(PROTUNER_PLUGIN_LIBRARY, RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
  }
  static Halide::Target strict_host() {
    return host_target().with_feature(Halide::Target::StrictFloat);
  }
  static Halide::Buffer<> run(Halide::Pipeline &p) {
    bind_random_inputs(p, kInputSeed);
    Halide::Realization out = allocate_estimated_outputs(p);
    p.realize(out, strict_host());
    return out[0];
  }
  static Halide::AutoSchedulerResults auto_schedule(Halide::Pipeline &p) {
    return p.auto_schedule("ProTuner", strict_host(), Halide::MachineParams(2, 1 << 22, 40));
  }
  // The pipeline from `build` scheduled by the plugin computes the same bits as with
  // every Func at root.
  static void check_same_output(const std::function<Halide::Pipeline()> &build) {
    Halide::Pipeline reference = build();
    apply_root_schedule(reference);
    const Halide::Buffer<> expected = run(reference);
    Halide::Pipeline tuned = build();
    const Halide::AutoSchedulerResults results = auto_schedule(tuned);
    EXPECT_NE(results.schedule_source.find("apply_schedule_protuner_"), std::string::npos);
    EXPECT_EQ(results.scheduler_name, "ProTuner");
    EXPECT_EQ(first_bitwise_difference(expected, run(tuned)), std::nullopt)
        << results.schedule_source;
  }
};

TEST_F(ProTunerPlugin, RandomSearchScheduleComputesTheSameBitsAsRoot) {
  ScopedEnv env(Env{{"HL_PROTUNER_ALGORITHM", "random"}, {"HL_PROTUNER_ITERATIONS", "20"}});
  check_same_output([] { return testing::blur_chain_pipeline(); });
  check_same_output([] { return testing::conv_relu_pipeline(); });
}

TEST_F(ProTunerPlugin, GreedySearchScheduleComputesTheSameBitsAsRoot) {
  ScopedEnv env(Env{{"HL_PROTUNER_ALGORITHM", "greedy"}, {"HL_PROTUNER_ITERATIONS", "3"}});
  check_same_output([] { return testing::bilateral_grid_pipeline(); });
  check_same_output([] { return testing::matmul_pipeline(); });
}

TEST_F(ProTunerPlugin, SameSeedAndIterationsGiveTheSameScheduleSource) {
  ScopedEnv env(Env{{"HL_PROTUNER_SEED", "42"}, {"HL_PROTUNER_ITERATIONS", "10"},
                 {"HL_PROTUNER_BUDGET_S", "600"}});
  Halide::Pipeline a = testing::pyramid_pipeline(), b = testing::pyramid_pipeline();
  EXPECT_EQ(auto_schedule(a).schedule_source, auto_schedule(b).schedule_source);
}

TEST_F(ProTunerPlugin, WritesTheSerializedScheduleWhenAsked) {
  const std::string path = ::testing::TempDir() + "protuner_plugin_schedule.json";
  ScopedEnv env(Env{{"HL_PROTUNER_ITERATIONS", "2"}, {"HL_PROTUNER_SCHEDULE_JSON", path}});
  Halide::Pipeline p = testing::blur_chain_pipeline();
  auto_schedule(p);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"protuner-schedule\""), std::string::npos) << text;
  std::remove(path.c_str());
}

TEST_F(ProTunerPlugin, ReportsABadSettingAsAHalideErrorNamingIt) {
  ScopedEnv env(Env{{"HL_PROTUNER_ALGORITHM", "annealing"}});
  Halide::Pipeline p = testing::blur_chain_pipeline();
  try {
    auto_schedule(p);
    FAIL() << "a bad HL_PROTUNER_ALGORITHM was accepted";
  } catch (const Halide::CompileError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("HL_PROTUNER_ALGORITHM='annealing'"), std::string::npos) << what;
    EXPECT_NE(what.find("beam, beam_lookahead, greedy, random"), std::string::npos) << what;
  }
}

TEST_F(ProTunerPlugin, MctsByDefaultComputesTheSameBitsAsRoot) {
  ScopedEnv env(Env{{"HL_PROTUNER_ITERATIONS", "4"}});
  check_same_output([] { return testing::bilateral_grid_pipeline(); });
  check_same_output([] { return testing::conv_relu_pipeline(); });
}

// The shipped learned models load inside the plugin (libtorch with it) and drive its search.
TEST_F(ProTunerPlugin, LearnedCostModelsScheduleTheSameBitsAsRoot) {
  for (const char *model : {"feedforward", "gcn"}) {
    ScopedEnv env(Env{{"HL_PROTUNER_ALGORITHM", "greedy"}, {"HL_PROTUNER_COST_MODEL", model},
                      {"HL_PROTUNER_ITERATIONS", "2"}});
    check_same_output([] { return testing::bilateral_grid_pipeline(); });
  }
}

TEST_F(ProTunerPlugin, AMeasuringSearchWithoutTheAppIsRefusedNamingWhatToSet) {
  ScopedEnv env(Env{{"HL_PROTUNER_ALGORITHM", "mcts_cost+real_1s"}});
  Halide::Pipeline p = testing::blur_chain_pipeline();
  try {
    auto_schedule(p);
    FAIL() << "cost+real ran without an app to measure";
  } catch (const Halide::CompileError &e) {
    EXPECT_NE(std::string(e.what()).find("HL_PROTUNER_APP_LIBRARY"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace protuner

namespace protuner {
namespace {

// cost+real in the plugin: candidates of the app named by HL_PROTUNER_APP_* are compiled
// and timed in child processes, and the schedule the plugin applies is the fastest of them.
TEST_F(ProTunerPlugin, CostPlusRealMeasuresSeedsAndCandidatesOfTheNamedApp) {
  const std::string json = ::testing::TempDir() + "protuner_plugin_cost_real.json";
  ScopedEnv env(Env{{"HL_PROTUNER_ALGORITHM", "mcts_cost+real_0.5s"},
                    {"HL_PROTUNER_ITERATIONS", "2"},
                    {"HL_PROTUNER_APP_LIBRARY", PROTUNER_TEST_GENERATOR_LIBRARY},
                    {"HL_PROTUNER_APP_GENERATOR", "test_blur"},
                    {"HL_PROTUNER_MEASURE_CHILD", PROTUNER_MEASURE_CHILD},
                    {"HL_PROTUNER_SCHEDULE_JSON", json}});
  AppInstance app = AppInstance::create(
      {"test_blur", PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", {}}, strict_host());
  ::testing::internal::CaptureStderr();
  auto_schedule(app.pipeline());
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("mcts_cost+real_0.5s"), std::string::npos) << log;
  EXPECT_EQ(log.find(" 0 measurements"), std::string::npos) << log;
  EXPECT_NE(log.find(" ms, measured "), std::string::npos) << log;
  // The seeds (searcher/seeds/seed_schedules.h) were measured too, the fallback at least.
  EXPECT_NE(log.find("; best seed measured "), std::string::npos) << log;
  std::ifstream in(json);
  EXPECT_TRUE(in.good()) << json;
  std::remove(json.c_str());
}

}  // namespace
}  // namespace protuner
