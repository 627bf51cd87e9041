// The serialized form: round trips, refuses other pipelines, refuses bad input clearly.
#include "common/schedule/schedule_json.h"

#include <gtest/gtest.h>

#include <random>

#include "common/errors.h"
#include "common/host_target.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using testing::graph_of;

std::string error_of(const std::string &text, std::shared_ptr<const PipelineGraph> g) {
  try {
    schedule_from_json(text, std::move(g));
  } catch (const ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(ScheduleJson, RandomCompleteSchedulesRoundTrip) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    ScheduleState state(graph);
    ASSERT_TRUE(space.random_rollout(state, rng));
    const std::string text = schedule_to_json(state);
    // Another instance of the same algorithm (other Func names) reads it back.
    const ScheduleState back =
        schedule_from_json(text, graph_of(testing::bilateral_grid_pipeline()));
    ASSERT_EQ(back.num_decided(), state.num_decided());
    for (int f = 0; f < state.num_decided(); ++f) {
      EXPECT_EQ(back.decision(f), state.decision(f)) << "schedule " << i << " func " << f;
    }
    EXPECT_EQ(schedule_to_json(back), text);
  }
}

TEST(ScheduleJson, PartialStatesRoundTrip) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  std::mt19937_64 rng(3);
  ScheduleState state(graph);
  state.decide(*space.random_decision(state, rng));
  const ScheduleState back = schedule_from_json(schedule_to_json(state), graph);
  ASSERT_EQ(back.num_decided(), 1);
  EXPECT_EQ(back.decision(0), state.decision(0));
}

TEST(ScheduleJson, ADifferentPipelineIsRefusedNamingTheFirstDifference) {
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  std::mt19937_64 rng(1);
  ScheduleState state(graph_of(testing::blur_chain_pipeline()));
  ASSERT_TRUE(space.random_rollout(state, rng));
  const std::string e = error_of(schedule_to_json(state), graph_of(testing::pyramid_pipeline()));
  EXPECT_NE(e.find("different pipeline"), std::string::npos) << e;
}

TEST(ScheduleJson, MalformedOrForeignInputIsRefused) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  EXPECT_NE(error_of("{not json", graph).find("malformed JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"format": "other", "version": 1})", graph).find("not a protuner schedule"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"format": "protuner-schedule", "version": 99})", graph)
                .find("version 99 is not supported"),
            std::string::npos);
}

// An update's reduction_outside is written only when set, so schedules without it keep
// their text (and their result-cache keys); absent reads as false.
TEST(ScheduleJson, ReductionOutsideRoundTripsAndIsWrittenOnlyWhenSet) {
  const auto graph = graph_of(testing::matmul_pipeline());
  ScheduleState state(graph);
  FuncDecision c;
  c.placement = Placement::kRoot;
  c.stages = {StageTiling{{64, 64}, {16, 1}, 0}, StageTiling{{64, 8}, {16, 1}, 0}};
  state.decide(c);
  const std::string plain = schedule_to_json(state);
  EXPECT_EQ(plain.find("reduction_outside"), std::string::npos) << plain;
  EXPECT_FALSE(schedule_from_json(plain, graph).decision(0).stages[1].reduction_outside);

  ScheduleState outside(graph);
  c.stages[1].reduction_outside = true;
  outside.decide(c);
  const std::string text = schedule_to_json(outside);
  EXPECT_NE(text.find(R"("reduction_outside":true)"), std::string::npos) << text;
  EXPECT_EQ(schedule_from_json(text, graph).decision(0), c);

  std::string wrong = text;
  wrong.replace(wrong.find("true"), 4, "1");
  EXPECT_NE(error_of(wrong, graph).find("stages[1].reduction_outside: wrong type"),
            std::string::npos)
      << error_of(wrong, graph);
  // On the pure stage, which has no reduction, it is refused.
  std::string pure = plain;
  pure.replace(pure.find(R"("parallel_loops":0)"), 18,
               R"("parallel_loops":0,"reduction_outside":true)");
  EXPECT_NE(error_of(pure, graph).find("has no reduction loops"), std::string::npos)
      << error_of(pure, graph);
}

TEST(ScheduleJson, AnIllegalDecisionIsRefusedWithItsPath) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  ScheduleState empty(graph);
  std::string text = schedule_to_json(empty);
  // The output (decision 0) cannot be inlined.
  text.replace(text.find("\"decisions\":[]"), 14, R"("decisions":[{"placement":"inline"}])");
  const std::string e = error_of(text, graph);
  EXPECT_NE(e.find("schedule.decisions[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("cannot be inlined"), std::string::npos) << e;
}

}  // namespace
}  // namespace protuner
