// The interim searches and cost: the same seed gives the same schedule, the limits hold,
// the best schedule is the cheapest seen, and the interim cost ranks what it claims to.
#include <gtest/gtest.h>

#include <random>

#include "searcher/plugin/interim_cost.h"
#include "searcher/plugin/schedule_search.h"
#include "searcher/schedule_json.h"
#include "searcher/search_space.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {

// Test names and failure messages show the algorithm's name. (In protuner, not the
// anonymous namespace, so GoogleTest finds it by argument-dependent lookup.)
static void PrintTo(PluginAlgorithm a, std::ostream *os) { *os << to_string(a); }

namespace {

std::shared_ptr<const PipelineGraph> graph_of(Halide::Pipeline p) {
  return std::make_shared<const PipelineGraph>(analyze_pipeline(p));
}

ScheduleSearchOptions iterations(PluginAlgorithm a, uint64_t seed, int64_t n) {
  ScheduleSearchOptions o;
  o.algorithm = a;
  o.seed = seed;
  o.max_iterations = n;
  return o;
}

class ScheduleSearch : public ::testing::TestWithParam<PluginAlgorithm> {};

TEST_P(ScheduleSearch, SameSeedGivesTheSameSchedule) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space;
  const InterimCost cost;
  const auto a = search_schedule(graph, space, cost, iterations(GetParam(), 5, 6));
  const auto b = search_schedule(graph, space, cost, iterations(GetParam(), 5, 6));
  ASSERT_TRUE(a.best.complete());
  EXPECT_EQ(a.iterations, 6);
  EXPECT_EQ(schedule_to_json(a.best), schedule_to_json(b.best));
  EXPECT_EQ(a.best_cost, b.best_cost);
}

TEST_P(ScheduleSearch, KeepsTheCheapestScheduleItSaw) {
  const auto graph = graph_of(testing::conv_relu_pipeline());
  const SearchSpace space;
  const InterimCost cost;
  double worst_best = 0;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const auto one = search_schedule(graph, space, cost, iterations(GetParam(), seed, 1));
    worst_best = std::max(worst_best, one.best_cost);
    EXPECT_DOUBLE_EQ(one.best_cost, cost(one.best));
  }
  // More iterations from the same seed start with the same first schedule, so they can
  // only find something at least as cheap.
  const auto first = search_schedule(graph, space, cost, iterations(GetParam(), 2, 1));
  const auto more = search_schedule(graph, space, cost, iterations(GetParam(), 2, 20));
  EXPECT_LE(more.best_cost, first.best_cost);
}

TEST_P(ScheduleSearch, ReturnsOneCompleteScheduleEvenWithNoTimeLeft) {
  const auto graph = graph_of(testing::matmul_pipeline());
  ScheduleSearchOptions o;
  o.algorithm = GetParam();
  o.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  const auto r = search_schedule(graph, SearchSpace(), InterimCost(), o);
  EXPECT_TRUE(r.best.complete());
  EXPECT_EQ(r.iterations, 1);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ScheduleSearch,
                         ::testing::Values(PluginAlgorithm::kRandom, PluginAlgorithm::kGreedy),
                         [](const auto &info) { return to_string(info.param); });

TEST(ScheduleSearchLimits, RefusesASearchWithoutAnyLimit) {
  const auto graph = graph_of(testing::matmul_pipeline());
  EXPECT_THROW(search_schedule(graph, SearchSpace(), InterimCost(), ScheduleSearchOptions{}),
               std::invalid_argument);
}

TEST(ScheduleSearchLimits, DifferentSeedsExploreDifferentSchedules) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const auto a = search_schedule(graph, SearchSpace(), InterimCost(),
                                 iterations(PluginAlgorithm::kRandom, 1, 1));
  const auto b = search_schedule(graph, SearchSpace(), InterimCost(),
                                 iterations(PluginAlgorithm::kRandom, 2, 1));
  EXPECT_NE(schedule_to_json(a.best), schedule_to_json(b.best));
}

TEST(InterimCost, ChargesLessForParallelVectorCodeThanForSerialScalarCode) {
  const auto graph = graph_of(testing::matmul_pipeline(64));  // c: pure + update, 64x64
  const InterimCost cost(InterimCostParams{});
  ScheduleState serial(graph);
  serial.decide(FuncDecision{Placement::kRoot, {}, {}, {StageTiling{{64, 64}, {1, 1}, 0},
                                                         StageTiling{{64, 64}, {1, 1}, 0}}});
  ScheduleState fast(graph);
  fast.decide(FuncDecision{Placement::kRoot, {}, {}, {StageTiling{{64, 8}, {16, 1}, 1},
                                                       StageTiling{{64, 8}, {16, 1}, 1}}});
  EXPECT_LT(cost(fast), cost(serial));
  // Serial scalar code costs exactly its points: 64x64 for the pure stage, 64x64x64 for
  // the update.
  EXPECT_DOUBLE_EQ(cost(serial), 64.0 * 64 + 64.0 * 64 * 64);
}

TEST(InterimCost, RanksPartialStates) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  ScheduleState state(graph);
  EXPECT_EQ(InterimCost()(state), 0.0);
  const SearchSpace space;
  std::mt19937_64 rng(3);
  state.decide(*space.random_decision(state, rng));
  EXPECT_GT(InterimCost()(state), 0.0);
}

}  // namespace
}  // namespace protuner
