// seeds_to_measure: the fallback always first, then the block-in-tile and sliced seeds,
// then only the seeds the model predicts faster than it, cheapest first, at most the
// number asked for.
#include "searcher/seeds/seed_schedules.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/host_target.h"
#include "common/schedule/schedule_json.h"
#include "searcher/seeds/blocked_schedule.h"
#include "searcher/seeds/fallback_schedule.h"
#include "searcher/seeds/sliced_schedule.h"
#include "searcher/seeds/strip_schedule.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

// Predicts, per schedule JSON text, the cost it was told; 1 s for anything else.
class TableModel : public CostModel {
 public:
  std::map<std::string, double> cost;
  std::vector<double> predict(const std::vector<const ScheduleState *> &batch) override {
    std::vector<double> out;
    for (const ScheduleState *s : batch) {
      const auto it = cost.find(schedule_to_json(*s));
      out.push_back(it == cost.end() ? 1.0 : it->second);
    }
    return out;
  }
  std::string name() const override { return "table"; }
};

// Hand-computed: with 32 registers a block of v vectors takes the most rows r dividing the
// extent with v x r + 2 <= 32, holds 8 accumulators or more; ranked by v x r / (v + r).
TEST(BlockedSchedules, RegisterBlocksFillTheRegistersWithTheMostMultiplyAddsPerLoad) {
  using B = std::vector<RegisterBlock>;
  // conv_layer, 128 channels x 100 pixels: 4 x 5 (20 / 9 per load), then 2 x 10 (20 / 12);
  // 3 vectors do not divide 128, 1 x 25 makes fewer than one multiply-add per load.
  EXPECT_EQ(register_blocks(16, 128, 100, 32), (B{{4, 5}, {2, 10}}));
  // mat_mul, 2048 x 2048: 4 x 4 (16 / 8), then 2 x 8 (16 / 10); 48 does not divide 2048.
  EXPECT_EQ(register_blocks(16, 2048, 2048, 32), (B{{4, 4}, {2, 8}}));
  // 48 wide takes 3 vectors by 8 rows (24 / 11), the expert's mat_mul block.
  EXPECT_EQ(register_blocks(16, 48, 96, 32).front(), (RegisterBlock{3, 8}));
  // AVX2's 16 registers: 4 x 3 and 3 x 4 (12 / 7, the wider first), 2 x 6 (12 / 8).
  EXPECT_EQ(register_blocks(8, 96, 96, 16), (B{{4, 3}, {3, 4}, {2, 6}}));
  // resnet50's 7-pixel rows: 4 x 7 (28 / 11), 2 x 7 (14 / 9); and on AVX2 2 x 7, its
  // expert's block, where 4 x 7 does not fit (4 x 3 does not divide 7).
  EXPECT_EQ(register_blocks(16, 64, 7, 32), (B{{4, 7}, {2, 7}}));
  EXPECT_EQ(register_blocks(8, 64, 7, 16), (B{{2, 7}}));
  // Too short for any block of 8 accumulators.
  EXPECT_TRUE(register_blocks(16, 64, 1, 32).empty());
  EXPECT_TRUE(register_blocks(16, 16, 64, 32).empty());
}

TEST(SeedSchedules, FallbackFirstThenInTileSeedsThenSeedsPredictedFasterThanItCheapestFirst) {
  const auto graph = testing::graph_of(testing::conv_relu_pipeline(8, 32, 64, 16));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(host_target());
  std::vector<ScheduleState> all = strip_schedules(graph, options);
  for (ScheduleState &s : blocked_schedules(graph, options)) all.push_back(std::move(s));
  ASSERT_GE(all.size(), 4u);
  const std::vector<ScheduleState> in_tile = blocked_in_tile_schedules(graph, options);
  ASSERT_FALSE(in_tile.empty());

  // The fallback at 0.5 s; seeds alternately slower (0.9 s and up) and faster (0.4 s and
  // down, later ones cheaper); the block-in-tile seeds slower, measured all the same.
  TableModel model;
  const std::string fallback = schedule_to_json(fallback_schedule(graph, options));
  model.cost[fallback] = 0.5;
  std::vector<std::string> in_tile_json;
  for (const ScheduleState &s : in_tile) {
    in_tile_json.push_back(schedule_to_json(s));
    model.cost[in_tile_json.back()] = 2.0;
  }
  std::vector<std::string> faster;  // expected order: cheapest first
  for (size_t k = 0; k < all.size(); ++k) {
    const std::string json = schedule_to_json(all[k]);
    const bool fast = k % 2 == 1;
    model.cost[json] = fast ? 0.4 - 0.01 * static_cast<double>(k) : 0.9 + 0.01 * static_cast<double>(k);
    if (fast) faster.insert(faster.begin(), json);
  }

  const std::vector<SeedSchedule> seeds = seeds_to_measure(graph, options, model, 100);
  const size_t n = in_tile.size();
  ASSERT_EQ(seeds.size(), 1 + n + faster.size());
  EXPECT_EQ(schedule_to_json(seeds[0].state), fallback);
  EXPECT_DOUBLE_EQ(seeds[0].predicted_seconds, 0.5);
  for (size_t k = 0; k < n; ++k) {
    EXPECT_EQ(schedule_to_json(seeds[1 + k].state), in_tile_json[k]) << "in-tile seed " << k;
  }
  for (size_t k = 0; k < faster.size(); ++k) {
    EXPECT_EQ(schedule_to_json(seeds[1 + n + k].state), faster[k]) << "seed " << k;
    EXPECT_LT(seeds[1 + n + k].predicted_seconds, 0.5);
  }

  const std::vector<SeedSchedule> some = seeds_to_measure(graph, options, model, n + 1);
  ASSERT_EQ(some.size(), n + 2);
  EXPECT_EQ(schedule_to_json(some[n + 1].state), faster[0]);
  EXPECT_EQ(seeds_to_measure(graph, options, model, 0).size(), 1u);
}

// A pipeline of per-offset patch distances gets its sliced seeds measured whatever the
// model predicts for them, right after the fallback.
TEST(SeedSchedules, SlicedSeedsAreMeasuredRightAfterTheFallback) {
  const auto graph = testing::graph_of(testing::patch_window_pipeline());
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(host_target());
  const std::vector<ScheduleState> sliced = sliced_reduction_schedules(graph, options);
  ASSERT_FALSE(sliced.empty());
  ASSERT_TRUE(blocked_in_tile_schedules(graph, options).empty());
  TableModel model;
  model.cost[schedule_to_json(fallback_schedule(graph, options))] = 0.5;
  for (const ScheduleState &s : sliced) model.cost[schedule_to_json(s)] = 2.0;
  const std::vector<SeedSchedule> seeds =
      seeds_to_measure(graph, options, model, static_cast<int>(sliced.size()));
  ASSERT_EQ(seeds.size(), 1 + sliced.size());
  for (size_t k = 0; k < sliced.size(); ++k) {
    EXPECT_EQ(schedule_to_json(seeds[1 + k].state), schedule_to_json(sliced[k])) << k;
  }
}

}  // namespace
}  // namespace protuner
