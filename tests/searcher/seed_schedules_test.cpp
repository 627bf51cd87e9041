// seeds_to_measure: the fallback always first, then only the seeds the model predicts
// faster than it, cheapest first, at most the number asked for.
#include "searcher/seed_schedules.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/host_target.h"
#include "searcher/blocked_schedule.h"
#include "searcher/fallback_schedule.h"
#include "searcher/schedule_json.h"
#include "searcher/strip_schedule.h"
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

TEST(SeedSchedules, FallbackFirstThenSeedsPredictedFasterThanItCheapestFirst) {
  const auto graph = testing::graph_of(testing::conv_relu_pipeline(8, 32, 64, 16));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(host_target());
  std::vector<ScheduleState> all = strip_schedules(graph, options);
  for (ScheduleState &s : blocked_schedules(graph, options)) all.push_back(std::move(s));
  for (ScheduleState &s : blocked_in_tile_schedules(graph, options)) all.push_back(std::move(s));
  ASSERT_GE(all.size(), 4u);

  // The fallback at 0.5 s; seeds alternately slower (0.9 s and up) and faster (0.4 s and
  // down, later ones cheaper).
  TableModel model;
  const std::string fallback = schedule_to_json(fallback_schedule(graph, options));
  model.cost[fallback] = 0.5;
  std::vector<std::string> faster;  // expected order: cheapest first
  for (size_t k = 0; k < all.size(); ++k) {
    const std::string json = schedule_to_json(all[k]);
    const bool fast = k % 2 == 1;
    model.cost[json] = fast ? 0.4 - 0.01 * static_cast<double>(k) : 0.9 + 0.01 * static_cast<double>(k);
    if (fast) faster.insert(faster.begin(), json);
  }

  const std::vector<SeedSchedule> seeds = seeds_to_measure(graph, options, model, 100);
  ASSERT_EQ(seeds.size(), 1 + faster.size());
  EXPECT_EQ(schedule_to_json(seeds[0].state), fallback);
  EXPECT_DOUBLE_EQ(seeds[0].predicted_seconds, 0.5);
  for (size_t k = 0; k < faster.size(); ++k) {
    EXPECT_EQ(schedule_to_json(seeds[1 + k].state), faster[k]) << "seed " << k;
    EXPECT_LT(seeds[1 + k].predicted_seconds, 0.5);
  }

  const std::vector<SeedSchedule> one = seeds_to_measure(graph, options, model, 1);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(schedule_to_json(one[1].state), faster[0]);
  EXPECT_EQ(seeds_to_measure(graph, options, model, 0).size(), 1u);
}

}  // namespace
}  // namespace protuner
