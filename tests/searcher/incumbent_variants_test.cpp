// One-Func variants of a measured schedule (incumbent_variants.h): what a variant keeps and
// changes, when it cannot be built, the tiling neighbours of a decision, and the order in
// which cost+real measures candidates.
#include <gtest/gtest.h>

#include <random>

#include "searcher/search/incumbent_variants.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using testing::graph_of;
using testing::random_complete;
using testing::space_for_tests;

// `s` with its first n Funcs decided as in `s`.
ScheduleState prefix(const ScheduleState &s, int n) {
  ScheduleState p(s.graph_ptr());
  for (int f = 0; f < n; ++f) p.decide(s.decision(f));
  return p;
}

int func_named(const PipelineGraph &g, const std::string &name) {
  for (size_t f = 0; f < g.funcs.size(); ++f) {
    // Halide numbers the names of every pipeline a process builds ("blur_y$2").
    if (g.funcs[f].name.substr(0, g.funcs[f].name.find('$')) == name) return static_cast<int>(f);
  }
  std::string names;
  for (const FuncNode &f : g.funcs) names += " " + f.name;
  ADD_FAILURE() << "no Func " << name << " in" << names;
  return -1;
}

TEST(IncumbentVariant, ChangesOneFuncAndKeepsEveryOther) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  const int n = static_cast<int>(graph->funcs.size());
  int built = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const ScheduleState incumbent = random_complete(graph, space, seed);
    const int f = static_cast<int>(seed % n);
    const ScheduleState start = prefix(incumbent, f);
    // A decision for Func f reached from the incumbent's prefix.
    std::mt19937_64 rng(seed + 100);
    ScheduleState other = start;
    ASSERT_TRUE(space.random_rollout(other, rng));
    if (other.decision(f) == incumbent.decision(f)) continue;
    const std::optional<ScheduleState> v =
        incumbent_variant(start, incumbent, other.decision(f), &other);
    ASSERT_TRUE(v.has_value()) << "seed " << seed;  // the fallback always completes it
    ASSERT_TRUE(v->complete());
    ++built;
    for (int g = 0; g < f; ++g) EXPECT_EQ(v->decision(g), incumbent.decision(g));
    EXPECT_EQ(v->decision(f), other.decision(f));
    // Later Funcs keep the incumbent's decision wherever it is still legal.
    ScheduleState check = prefix(*v, f + 1);
    for (int g = f + 1; g < n; ++g) {
      if (check.check_decision(incumbent.decision(g)).empty()) {
        EXPECT_EQ(v->decision(g), incumbent.decision(g)) << "seed " << seed << ", Func " << g;
      } else {
        EXPECT_EQ(v->decision(g), other.decision(g)) << "seed " << seed << ", Func " << g;
      }
      check.decide(v->decision(g));
    }
  }
  EXPECT_GE(built, 15);
}

// blur_x computed inside blur_y's loops: inlining blur_y leaves blur_x nowhere to go, so
// the variant needs a fallback for it.
TEST(IncumbentVariant, WithoutAFallbackALaterFuncLeftWithoutItsLoopGivesNothing) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  const int blur_y = func_named(*graph, "blur_y"), blur_x = func_named(*graph, "blur_x");
  ASSERT_LT(blur_y, blur_x);
  std::optional<ScheduleState> incumbent;
  for (uint64_t seed = 1; seed < 3000 && !incumbent; ++seed) {
    ScheduleState s = random_complete(graph, space, seed);
    const FuncDecision &d = s.decision(blur_x);
    if (d.placement == Placement::kAt && d.compute_at.func == blur_y) incumbent = s;
  }
  ASSERT_TRUE(incumbent.has_value()) << "no random schedule computes blur_x in blur_y";
  const ScheduleState start = prefix(*incumbent, blur_y);
  FuncDecision inlined;
  inlined.placement = Placement::kInline;
  ASSERT_EQ(start.check_decision(inlined), "");
  EXPECT_FALSE(incumbent_variant(start, *incumbent, inlined).has_value());

  // A fallback that computes blur_x at root completes it.
  std::optional<ScheduleState> fallback;
  for (uint64_t seed = 1; seed < 3000 && !fallback; ++seed) {
    ScheduleState s = random_complete(graph, space, seed);
    if (s.decision(blur_x).placement == Placement::kRoot) fallback = s;
  }
  ASSERT_TRUE(fallback.has_value());
  const auto v = incumbent_variant(start, *incumbent, inlined, &*fallback);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->decision(blur_y).placement, Placement::kInline);
  EXPECT_EQ(v->decision(blur_x), fallback->decision(blur_x));

  // An illegal decision gives nothing either: the output cannot be inlined.
  EXPECT_FALSE(incumbent_variant(prefix(*incumbent, 0), *incumbent, inlined).has_value());
}

TEST(TilingNeighbours, DoubleOrHalveOneTileOrChangeTheParallelLoops) {
  const auto graph = graph_of(testing::blur_chain_pipeline(128, 96));
  const ScheduleState start(graph);  // the output, sharp: 128 x 96 points at root
  FuncDecision d;
  d.placement = Placement::kRoot;
  d.stages = {StageTiling{{32, 96}, {16, 1}, 1}};
  ASSERT_EQ(start.check_decision(d), "");
  const std::vector<FuncDecision> got = tiling_neighbours(start, d);
  // x: 64 (doubled), 16 (halved, down to the inner tile); y: 96 is its whole extent, so
  // only halved, to 48; parallel loops 2 and 0.
  std::vector<FuncDecision> want;
  for (auto [tile, parallel] : std::vector<std::pair<std::vector<int64_t>, int>>{
           {{64, 96}, 1}, {{16, 96}, 1}, {{32, 48}, 1}, {{32, 96}, 2}, {{32, 96}, 0}}) {
    FuncDecision n = d;
    n.stages[0].tile = tile;
    n.stages[0].parallel_loops = parallel;
    want.push_back(n);
  }
  EXPECT_EQ(got.size(), want.size());
  for (const FuncDecision &w : want) {
    EXPECT_NE(std::find(got.begin(), got.end(), w), got.end())
        << "missing tile " << w.stages[0].tile[0] << " x " << w.stages[0].tile[1] << ", parallel "
        << w.stages[0].parallel_loops;
  }
  FuncDecision inlined;
  inlined.placement = Placement::kInline;
  EXPECT_TRUE(
      tiling_neighbours(prefix(random_complete(graph, space_for_tests(), 1), 1), inlined).empty());
}

// An update's reduction order is one more neighbour, where it changes the loop nest.
TEST(TilingNeighbours, MoveAnUpdatesReductionAcrossItsMiddleLoops) {
  const auto graph = graph_of(testing::matmul_pipeline());  // c(x, y) += a(k, y) * b(x, k)
  const ScheduleState start(graph);
  FuncDecision d;
  d.placement = Placement::kRoot;
  d.stages = {StageTiling{{64, 64}, {16, 1}, 0}, StageTiling{{64, 8}, {16, 1}, 1}};
  ASSERT_EQ(start.check_decision(d), "");
  FuncDecision moved = d;
  moved.stages[1].reduction_outside = true;
  std::vector<FuncDecision> got = tiling_neighbours(start, d);
  EXPECT_NE(std::find(got.begin(), got.end(), moved), got.end());
  got = tiling_neighbours(start, moved);
  EXPECT_NE(std::find(got.begin(), got.end(), d), got.end()) << "and back";
  // Neither the pure stage (no reduction) nor a one-block update (no middle loop) has it.
  for (const FuncDecision &n : tiling_neighbours(start, d)) {
    EXPECT_FALSE(n.stages[0].reduction_outside);
  }
  FuncDecision block = d;
  block.stages[1] = StageTiling{{16, 1}, {16, 1}, 1};
  for (const FuncDecision &n : tiling_neighbours(start, block)) {
    EXPECT_FALSE(n.stages[1].reduction_outside);
  }
}

FuncDecision at_loop(int loop, int64_t tile) {
  FuncDecision d;
  d.placement = Placement::kAt;
  d.compute_at = {0, 0, loop};
  d.store_at = d.compute_at;
  d.stages = {StageTiling{{tile}, {1}, 0}};
  return d;
}

TEST(MeasuringOrder, VisitsPlacementsInTurnTheIncumbentsFirst) {
  // Placements: loop 0 (the incumbent's), loop 1, root. Costs make root cheapest overall.
  FuncDecision root;
  root.placement = Placement::kRoot;
  root.stages = {StageTiling{{8}, {1}, 1}};
  const std::vector<FuncDecision> decisions{at_loop(0, 4), at_loop(1, 4), root,
                                            at_loop(0, 8), at_loop(1, 8), at_loop(0, 16)};
  const std::vector<double> costs{5, 3, 1, 4, 2, 6};
  const std::vector<size_t> order = measuring_order(decisions, costs, at_loop(0, 2));
  // Round 1: loop 0's cheapest (3: cost 4), then root (2: 1), then loop 1's cheapest
  // (4: 2); round 2: loop 0's next (0: 5), loop 1's next (1: 3); round 3: loop 0's last.
  EXPECT_EQ(order, (std::vector<size_t>{3, 2, 4, 0, 1, 5}));
  // An incumbent whose placement no candidate shares: groups by their cheapest.
  FuncDecision inlined;
  inlined.placement = Placement::kInline;
  EXPECT_EQ(measuring_order(decisions, costs, inlined), (std::vector<size_t>{2, 4, 3, 1, 0, 5}));
}

}  // namespace
}  // namespace protuner
