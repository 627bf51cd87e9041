// ProTuner's MCTS: the tree policies against hand-computed values, back-up of average and
// best, the root decision, determinism under iteration budgets, finding the known optimum
// of a synthetic cost landscape, and the ensemble's contract (budgets, measurer, names).
#include <gtest/gtest.h>

#include <Halide.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/schedule/schedule_json.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/search/mcts.h"
#include "searcher/search/mcts_tree.h"
#include "searcher/search/search_registry.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using testing::graph_of;
using testing::random_complete;
using testing::space_for_tests;

// A synthetic landscape with one known optimum: the cost of a state is 1 plus the number
// of its steps that differ from a target schedule's (per decided Func, position by
// position). The target, and only it, costs exactly 1. Records every cost it returns
// for complete states.
class DistanceModel : public CostModel {
 public:
  explicit DistanceModel(ScheduleState target) : target_(std::move(target)) {}
  std::vector<double> predict(const std::vector<const ScheduleState *> &batch) override {
    std::vector<double> out;
    for (const ScheduleState *s : batch) {
      double cost = 1;
      for (int f = 0; f < s->num_decided(); ++f) {
        const std::vector<Step> a = steps_of(s->decision(f));
        const std::vector<Step> b = steps_of(target_.decision(f));
        for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
          if (i >= a.size() || i >= b.size() || !(a[i] == b[i])) cost += 1;
        }
      }
      if (s->complete()) complete_costs.push_back(cost);
      out.push_back(cost);
    }
    return out;
  }
  std::string name() const override { return "distance"; }
  std::vector<double> complete_costs;

 private:
  ScheduleState target_;
};

TEST(Ucb, InverseAverageMatchesHandComputedValues) {
  // avg = 6/3 = 2; n = 10: (1/2) * (1 + 1 * sqrt(ln 10 / 3)) = 0.5 * 1.8760870 = 0.9380435
  const ChildStats c{3, 6.0, 0};
  EXPECT_NEAR(ucb_score(UcbFormula::kInverseAverage, 1.0, c, 10, 0), 0.9380435, 1e-6);
  // Cp = 10: 0.5 * (1 + 10 * 0.8760870) = 4.8804348
  EXPECT_NEAR(ucb_score(UcbFormula::kInverseAverage, 10.0, c, 10, 0), 4.8804348, 1e-6);
}

TEST(Ucb, Ucb1NormalizesRewardsByTheBestCost) {
  // Costs 2 and 4, best 1: rewards 1/2 and 1/4, mean 0.375; n = 8, n_j = 2, Cp = 1/sqrt 2:
  // 0.375 + 2 * 0.7071068 * sqrt(2 ln 8 / 2) = 0.375 + 1.4142136 * 1.4420232 = 2.4143340
  const ChildStats c{2, 6.0, 0.5 + 0.25};
  EXPECT_NEAR(ucb_score(UcbFormula::kUcb1Normalized, 1.0 / std::sqrt(2.0), c, 8, 1.0), 2.4143340,
              1e-6);
}

TEST(Ucb, UnvisitedChildrenComeFirstAndCheaperChildrenScoreHigher) {
  EXPECT_TRUE(std::isinf(ucb_score(UcbFormula::kInverseAverage, 1.0, {}, 5, 1.0)));
  const ChildStats cheap{4, 4.0, 4.0}, dear{4, 8.0, 2.0};
  for (UcbFormula f : {UcbFormula::kInverseAverage, UcbFormula::kUcb1Normalized}) {
    EXPECT_GT(ucb_score(f, 1.0, cheap, 8, 1.0), ucb_score(f, 1.0, dear, 8, 1.0)) << to_string(f);
  }
  // Fewer visits, same average: more exploration bonus.
  const ChildStats rare{1, 1.0, 1.0}, often{7, 7.0, 7.0};
  EXPECT_GT(ucb_score(UcbFormula::kInverseAverage, 1.0, rare, 8, 1.0),
            ucb_score(UcbFormula::kInverseAverage, 1.0, often, 8, 1.0));
}

TEST(MctsTree, BackUpKeepsVisitsAverageAndBest) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  DistanceModel model(random_complete(graph, space, 3));
  MctsTree tree(ScheduleState(graph), space, model, MctsTreeOptions{}, 11);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(tree.iterate());
  const std::vector<double> &costs = model.complete_costs;
  ASSERT_FALSE(costs.empty());
  double sum = 0;
  for (double c : costs) sum += c;
  // Every score is backed up through the root exactly once.
  EXPECT_EQ(tree.root_stats().visits, static_cast<int64_t>(costs.size()));
  EXPECT_NEAR(tree.root_stats().sum_cost, sum, 1e-9);
  EXPECT_EQ(tree.best_cost(), *std::min_element(costs.begin(), costs.end()));
  ASSERT_TRUE(tree.best_complete());
  EXPECT_TRUE(tree.best_complete()->complete());
  EXPECT_EQ(model.predict({tree.best_complete().get()})[0], tree.best_cost());
}

TEST(MctsTree, RootDecisionIsTheChildWithTheBestCost) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  DistanceModel model(random_complete(graph, space, 5));
  MctsTree tree(ScheduleState(graph), space, model, MctsTreeOptions{}, 2);
  for (int i = 0; i < 300; ++i) tree.iterate();
  const std::optional<MctsTree::Decision> d = tree.decide();
  ASSERT_TRUE(d.has_value());
  // The tree's best lies below one child: that child is the decision.
  EXPECT_EQ(d->best_cost, tree.best_cost());
  EXPECT_EQ(schedule_to_json(d->next_root),
            schedule_to_json(ScheduleState(graph).with_step(d->step)));
  // The best complete schedule starts with the decided step.
  EXPECT_EQ(schedule_to_json(*d->best_complete), schedule_to_json(*tree.best_complete()));
  // Advancing keeps the subtree: the best below the new root is still known.
  tree.advance(d->step, d->next_root);
  EXPECT_EQ(tree.best_cost(), d->best_cost);
  EXPECT_GT(tree.stats().nodes, 1);
}

TEST(MctsTree, GreedySimulationReachesCompleteSchedules) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space = space_for_tests();
  DistanceModel model(random_complete(graph, space, 9));
  MctsTreeOptions options;
  options.greedy_simulation = true;
  MctsTree tree(ScheduleState(graph), space, model, options, 4);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(tree.iterate());
  EXPECT_GE(tree.stats().rollouts, 19);
  // Greedy simulation scores sampled decisions along the way, not only complete states.
  EXPECT_GT(tree.stats().evaluations, tree.stats().rollouts * 2);
}

TEST(MctsTree, StepsTakenCountsTheMdpDepth) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  std::mt19937_64 rng(1);
  ScheduleState s(graph);
  int steps = 0;
  while (!s.complete()) {
    EXPECT_EQ(steps_taken(s), steps);
    s.take_step(*space.random_child(s, rng));
    ++steps;
  }
  EXPECT_EQ(steps_taken(s), steps);
}

SearchContext context_for(const std::shared_ptr<const PipelineGraph> &graph,
                          const SearchSpace &space, const ScheduleState &target, int threads) {
  SearchContext ctx;
  ctx.graph = graph;
  ctx.space = &space;
  ctx.cost_model = [target] { return std::make_unique<DistanceModel>(target); };
  ctx.seed = 42;
  ctx.threads = threads;
  return ctx;
}

// Two 2-D Funcs over n x n points and the input's clamped copy: a dozen steps, with 1 to
// 19 children each at n = 8 (a small space) and 25 to 54 at n = 512.
Halide::Pipeline small_pipeline(int n = 8) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func f("f"), g("g");
  f(x, y) = in(clamp(x, 0, n - 1), clamp(y, 0, n - 1)) * 2.0f;
  g(x, y) = f(x, y) + f(x + 1, y + 1);
  in.set_estimates({{0, n}, {0, n}});
  g.set_estimates({{0, n}, {0, n}});
  return Pipeline(g);
}

// Ten targets, so the test does not hang on one lucky draw of the space. With 4 trees and
// seeds 1 to 40 as targets, MCTS finds 31 of 40 at 100 iterations per decision, all 40 at
// 300 and at 1,000; on the same landscape over 512 x 512 points (25 to 54 children per
// step), 12 of 20 at 300 and 14 of 20 at 1,000.
TEST(MctsSearch, FindsTheKnownOptimumOfASyntheticLandscape) {
  const auto graph = graph_of(small_pipeline());
  const SearchSpace space = space_for_tests();
  MctsOptions options;
  options.trees = 4;
  SearchBudget budget;
  budget.iterations = 1000;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const ScheduleState target = random_complete(graph, space, seed);
    MctsSearch search(options, "test");
    const SearchResult r = search.run(context_for(graph, space, target, 2), budget);
    ASSERT_TRUE(r.best.complete());
    EXPECT_EQ(r.best_cost, 1.0) << "target " << seed;
    EXPECT_EQ(schedule_to_json(r.best), schedule_to_json(target)) << "target " << seed;
    EXPECT_FALSE(r.trace.empty());
    EXPECT_GT(r.rollouts, 0);
  }
}

// `target` with one step taken otherwise: the first step with a choice from the first
// tiling step of its last Func not inlined on. The steps after it follow the target's
// where the space still offers them, else take the space's first offer.
ScheduleState one_step_changed(const ScheduleState &target, const SearchSpace &space) {
  std::vector<Step> path;
  size_t change_from = 0;
  for (int f = 0; f < target.num_decided(); ++f) {
    const std::vector<Step> steps = steps_of(target.decision(f));
    if (steps.size() > 1) change_from = path.size() + 1;
    path.insert(path.end(), steps.begin(), steps.end());
  }
  ScheduleState s(target.graph_ptr());
  bool changed = false;
  for (size_t i = 0; !s.complete(); ++i) {
    const std::vector<Step> offered = space.children(s);
    const auto same =
        i < path.size() ? std::find(offered.begin(), offered.end(), path[i]) : offered.end();
    if (!changed && i >= change_from && offered.size() > 1) {
      s.take_step(same == offered.begin() ? offered[1] : offered[0]);
      changed = true;
    } else {
      s.take_step(same == offered.end() ? offered.front() : *same);
    }
  }
  return s;
}

TEST(MctsTree, AKnownScheduleIsTheBestUntilTheTreeFindsBetter) {
  const auto graph = graph_of(small_pipeline(512));
  const SearchSpace space = space_for_tests();
  const ScheduleState target = random_complete(graph, space, 3);
  DistanceModel model(target);
  MctsTree tree(ScheduleState(graph), space, model, MctsTreeOptions{}, 5);
  const auto near = std::make_shared<const ScheduleState>(one_step_changed(target, space));
  const double near_cost = model.predict({near.get()})[0];
  ASSERT_GT(near_cost, 1.0);
  tree.add_known(near, near_cost);
  EXPECT_EQ(tree.best_cost(), near_cost);
  EXPECT_EQ(tree.root_stats().visits, 1);
  // Its path is in the tree: the root decision follows it.
  std::optional<MctsTree::Decision> d = tree.decide();
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->best_cost, near_cost);
  EXPECT_EQ(d->step, steps_of(near->decision(0))[0]);
  for (int i = 0; i < 300; ++i) tree.iterate();
  EXPECT_LE(tree.best_cost(), near_cost);

  // Only complete schedules, and only into a tree at the empty schedule.
  EXPECT_THROW(tree.add_known(std::make_shared<const ScheduleState>(graph), 2.0),
               std::invalid_argument);
  tree.advance(d->step, d->next_root);
  EXPECT_THROW(tree.add_known(near, near_cost), std::invalid_argument);
}

// On the wide landscape, where MCTS alone finds 12 of 20 targets at this budget, a start
// point a step away from the target leads it there.
TEST(MctsSearch, SearchesAroundAStartPoint) {
  const auto graph = graph_of(small_pipeline(512));
  const SearchSpace space = space_for_tests();
  MctsOptions options;
  options.trees = 4;
  SearchBudget budget;
  budget.iterations = 300;
  {  // A start point must be a complete schedule of the pipeline searched.
    SearchContext ctx = context_for(graph, space, random_complete(graph, space, 1), 1);
    ctx.start_points = {ScheduleState(graph)};
    EXPECT_THROW(MctsSearch(options, "test").run(ctx, budget), std::invalid_argument);
    ctx.start_points = {random_complete(graph_of(small_pipeline(512)), space, 1)};
    EXPECT_THROW(MctsSearch(options, "test").run(ctx, budget), std::invalid_argument);
  }
  int found = 0, found_without = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const ScheduleState target = random_complete(graph, space, seed);
    SearchContext ctx = context_for(graph, space, target, 2);
    found_without += MctsSearch(options, "test").run(ctx, budget).best_cost == 1.0;
    ctx.start_points.push_back(one_step_changed(target, space));
    const double start_cost = DistanceModel(target).predict({&ctx.start_points[0]})[0];
    ASSERT_GT(start_cost, 1.0) << "target " << seed;
    const SearchResult r = MctsSearch(options, "test").run(ctx, budget);
    EXPECT_LE(r.best_cost, start_cost) << "target " << seed;  // never worse than the start
    found += r.best_cost == 1.0;
  }
  // 18 of 20 with the start point, 12 without, on this landscape.
  EXPECT_GE(found, 15);
  EXPECT_GT(found, found_without);
}

TEST(MctsSearch, ItsPickIsNeverPredictedSlowerThanTheModelsGreedyDescent) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space = space_for_tests();
  SearchContext ctx = testing::analytic_context(graph, space);
  SearchBudget budget;
  budget.iterations = 1;  // the trees alone find little in one iteration each
  MctsOptions options;
  options.trees = 2;
  int slower_without = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ctx.seed = seed;  // greedy samples children too: the same seed on both sides
    const double greedy = make_search("greedy")->run(ctx, budget).best_cost;
    EXPECT_LE(MctsSearch(options, "test").run(ctx, budget).best_cost, greedy) << "seed " << seed;
    MctsOptions without = options;
    without.know_greedy_descent = false;
    slower_without += MctsSearch(without, "test").run(ctx, budget).best_cost > greedy;
  }
  EXPECT_GT(slower_without, 0);  // the descent is what keeps the pick at greedy's or better
}

TEST(MctsSearch, IterationBudgetsAndASeedMakeARunDeterministic) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space = space_for_tests();
  const ScheduleState target = random_complete(graph, space, 23);
  MctsOptions options;
  options.trees = 3;
  SearchBudget budget;
  budget.iterations = 20;
  std::string first;
  for (int run = 0; run < 2; ++run) {
    MctsSearch search(options, "test");
    // Different thread counts too: trees are independent, so the schedule must not change.
    const SearchResult r = search.run(context_for(graph, space, target, run + 1), budget);
    const std::string json = schedule_to_json(r.best);
    if (run == 0) first = json;
    EXPECT_EQ(json, first);
  }
}

TEST(MctsSearch, ADeadlineInThePastStillGivesACompleteSchedule) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space = space_for_tests();
  SearchContext ctx = testing::analytic_context(graph, space);
  SearchBudget budget;
  budget.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  const SearchResult r = make_search("mcts_1s")->run(ctx, budget);
  EXPECT_TRUE(r.best.complete());
  EXPECT_GT(r.best_cost, 0);
}

TEST(MctsSearch, ATimeBudgetIsKeptOnARealCostModel) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space = space_for_tests();
  SearchContext ctx = testing::analytic_context(graph, space);
  int progress_calls = 0;
  ctx.on_progress = [&](const SearchProgress &p) {
    ++progress_calls;
    EXPECT_GT(p.best_cost, 0);
  };
  SearchBudget budget;
  const auto start = std::chrono::steady_clock::now();
  budget.deadline = start + std::chrono::seconds(3);
  const SearchResult r = make_search("mcts_0.5s")->run(ctx, budget);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.best.complete());
  EXPECT_LT(seconds, 6.0);  // generous: the machine is shared; the slice logic is the point
  EXPECT_GT(progress_calls, 0);
  EXPECT_GT(r.rollouts, 16);
  // The result is the best the search saw, so no trace point beats it.
  for (const TracePoint &t : r.trace) EXPECT_GE(t.cost, r.best_cost);
}

TEST(MctsSearch, CostPlusRealNeedsAMeasurerAndBudgetsNeedALimit) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  SearchContext ctx = context_for(graph, space, random_complete(graph, space, 1), 1);
  SearchBudget budget;
  budget.iterations = 1;
  EXPECT_THROW(make_search("mcts_cost+real_1s")->run(ctx, budget), std::invalid_argument);
  EXPECT_THROW(make_search("mcts_1s")->run(ctx, SearchBudget{}), std::invalid_argument);
  EXPECT_TRUE(make_search("mcts_cost+real_1s")->needs_measurer());
  EXPECT_FALSE(make_search("mcts_30s")->needs_measurer());
}

// Measures by the distance model too, but ranks one proposal's schedule fastest: cost+real
// must follow the measurement, not the prediction.
class FakeMeasurer : public CandidateMeasurer {
 public:
  std::vector<std::optional<double>> measure(
      const std::vector<const ScheduleState *> &batch) override {
    std::vector<std::optional<double>> out;
    for (const ScheduleState *s : batch) {
      ++count_;
      EXPECT_TRUE(s->complete());
      // JSON whose length is a multiple of 7 fails to "compile"; the rest run in a time
      // derived from the text.
      const std::string json = schedule_to_json(*s);
      if (json.size() % 7 == 0) {
        out.push_back(std::nullopt);
      } else {
        out.push_back(1e-3 * static_cast<double>(std::hash<std::string>()(json) % 1000 + 1));
      }
    }
    return out;
  }
  int64_t measurements() const override { return count_; }

 private:
  int64_t count_ = 0;
};

TEST(MctsSearch, CostPlusRealReturnsTheFastestMeasuredSchedule) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  SearchContext ctx = context_for(graph, space, random_complete(graph, space, 2), 2);
  FakeMeasurer measurer;
  ctx.measurer = &measurer;
  SearchBudget budget;
  budget.iterations = 30;
  const SearchResult r = make_search("mcts_cost+real_1s")->run(ctx, budget);
  ASSERT_GT(measurer.measurements(), 0);
  ASSERT_TRUE(r.best_measured_seconds.has_value());
  // The result is the fastest of everything measured.
  FakeMeasurer again;
  const std::optional<double> t = again.measure({&r.best})[0];
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(*t, *r.best_measured_seconds);
  for (const TracePoint &p : r.trace) {
    ASSERT_TRUE(p.measured_seconds.has_value());
    EXPECT_GE(*p.measured_seconds, *r.best_measured_seconds);
  }
  EXPECT_EQ(r.measurements, measurer.measurements());
}

// Measures like FakeMeasurer, but one schedule runs fastest of all.
class OneFastestMeasurer : public FakeMeasurer {
 public:
  explicit OneFastestMeasurer(std::string fastest_json) : fastest_(std::move(fastest_json)) {}
  std::vector<std::optional<double>> measure(
      const std::vector<const ScheduleState *> &batch) override {
    std::vector<std::optional<double>> out = FakeMeasurer::measure(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      const std::string json = schedule_to_json(*batch[i]);
      if (json == fastest_) out[i] = 1e-4;
      measured.push_back(json);
    }
    return out;
  }
  std::vector<std::string> measured;

 private:
  std::string fastest_;
};

// Decides the next Func of `s` by `d` if that is legal (the rule by which cost+real builds a
// variant of the incumbent).
bool decide_if_legal(ScheduleState &s, const FuncDecision &d) {
  if (!s.check_decision(d).empty()) return false;
  s.decide(d);
  return true;
}

// The Func whose decision `v` changes when `v` is a one-Func variant of `of` (as cost+real
// builds them: Func f decided otherwise, every later Func kept where that is still legal),
// else -1. The check restates incumbent_variant's rule on purpose, to test it independently.
int varied_func(const ScheduleState &v, const ScheduleState &of,
                const std::shared_ptr<const PipelineGraph> &graph) {
  const int n = static_cast<int>(graph->funcs.size());
  int f = 0;
  while (f < n && v.decision(f) == of.decision(f)) ++f;
  if (f == n) return -1;
  ScheduleState s(graph);
  for (int g = 0; g <= f; ++g) {
    if (!decide_if_legal(s, v.decision(g))) return -1;
  }
  for (int g = f + 1; g < n; ++g) {
    ScheduleState kept = s;
    if (decide_if_legal(kept, of.decision(g)) && !(v.decision(g) == of.decision(g))) return -1;
    if (!decide_if_legal(s, v.decision(g))) return -1;
  }
  return f;
}

// cost+real with a start point that measures fastest, where the cost model prefers other
// schedules: the root follows the start point, and every other schedule measured is a
// variant of it that changes one Func's decision (and a later Func's only where the start's
// decision for it is no longer legal after the change). The one exception is the second
// schedule measured, the trees' cheapest whole (CostPlusRealMeasuresTheCheapestWholeOnce).
TEST(MctsSearch, CostPlusRealMeasuresOneFuncVariantsOfTheFastestMeasuredSchedule) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  const SearchSpace space = space_for_tests();
  SearchContext ctx = context_for(graph, space, random_complete(graph, space, 2), 2);
  const ScheduleState start = random_complete(graph, space, 8);
  ctx.start_points = {start};
  OneFastestMeasurer measurer(schedule_to_json(start));
  ctx.measurer = &measurer;
  SearchBudget budget;
  budget.iterations = 30;
  const SearchResult r = make_search("mcts_cost+real_1s")->run(ctx, budget);
  EXPECT_EQ(schedule_to_json(r.best), schedule_to_json(start));
  ASSERT_GE(measurer.measured.size(), 4u);
  EXPECT_EQ(measurer.measured.front(), schedule_to_json(start));  // measured first
  std::set<int> changed_funcs;
  for (size_t i = 2; i < measurer.measured.size(); ++i) {
    const int f = varied_func(schedule_from_json(measurer.measured[i], graph), start, graph);
    EXPECT_GE(f, 0) << "measured schedule " << i << " is not a one-Func variant of the start";
    changed_funcs.insert(f);
  }
  EXPECT_GE(changed_funcs.size(), 2u) << "variants of one Func only";
}

// Measures a schedule by its distance to a target (DistanceModel), so the target is fastest.
class DistanceMeasurer : public CandidateMeasurer {
 public:
  explicit DistanceMeasurer(ScheduleState target) : distance_(std::move(target)) {}
  std::vector<std::optional<double>> measure(
      const std::vector<const ScheduleState *> &batch) override {
    count_ += static_cast<int64_t>(batch.size());
    std::vector<std::optional<double>> out;
    for (double d : distance_.predict(batch)) out.push_back(1e-3 * d);
    return out;
  }
  int64_t measurements() const override { return count_; }

 private:
  DistanceModel distance_;
  int64_t count_ = 0;
};

// A DistanceMeasurer that keeps what it measured, in order.
class RecordingDistanceMeasurer : public DistanceMeasurer {
 public:
  using DistanceMeasurer::DistanceMeasurer;
  std::vector<std::optional<double>> measure(
      const std::vector<const ScheduleState *> &batch) override {
    for (const ScheduleState *s : batch) measured.push_back(*s);
    return DistanceMeasurer::measure(batch);
  }
  std::vector<ScheduleState> measured;
};

// The first start point `pick` makes of the random complete schedules of seeds 100 to 299.
std::optional<ScheduleState> find_start(
    const std::shared_ptr<const PipelineGraph> &graph, const SearchSpace &space,
    const std::function<std::optional<ScheduleState>(const ScheduleState &)> &pick) {
  for (uint64_t other = 100; other < 300; ++other) {
    if (std::optional<ScheduleState> s = pick(random_complete(graph, space, other))) return s;
  }
  return std::nullopt;
}

// mcts_cost+real_1s at 1,000 iterations per decision on the landscape of `target`
// (DistanceModel), from `start`.
SearchResult cost_plus_real_from(const std::shared_ptr<const PipelineGraph> &graph,
                                 const SearchSpace &space, const ScheduleState &target,
                                 const ScheduleState &start, CandidateMeasurer &measurer) {
  SearchContext ctx = context_for(graph, space, target, 2);
  ctx.start_points = {start};
  ctx.measurer = &measurer;
  SearchBudget budget;
  budget.iterations = 1000;
  return make_search("mcts_cost+real_1s")->run(ctx, budget);
}

// The start point is the target with its first Func decided otherwise: the variant that
// decides that Func as the target does measures fastest, and the search returns it.
TEST(MctsSearch, CostPlusRealTakesAVariantThatMeasuresFaster) {
  const auto graph = graph_of(small_pipeline());
  const SearchSpace space = space_for_tests();
  int tested = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const ScheduleState target = random_complete(graph, space, seed);
    // A start that differs from the target in Func 0 only.
    const std::optional<ScheduleState> start =
        find_start(graph, space, [&](const ScheduleState &o) -> std::optional<ScheduleState> {
          if (o.decision(0) == target.decision(0)) return std::nullopt;
          ScheduleState s(graph);
          bool ok = decide_if_legal(s, o.decision(0));
          for (size_t g = 1; ok && g < graph->funcs.size(); ++g) {
            ok = decide_if_legal(s, target.decision(static_cast<int>(g)));
          }
          return ok ? std::optional(s) : std::nullopt;
        });
    if (!start) continue;
    ++tested;
    DistanceMeasurer measurer(target);
    const SearchResult r = cost_plus_real_from(graph, space, target, *start, measurer);
    EXPECT_EQ(schedule_to_json(r.best), schedule_to_json(target)) << "target seed " << seed;
    ASSERT_TRUE(r.best_measured_seconds.has_value());
    EXPECT_DOUBLE_EQ(*r.best_measured_seconds, 1e-3);
  }
  EXPECT_GE(tested, 3);
}

// A start that differs from the target in every Func (and of which the target is not a
// one-Func variant), where model and measurer both prefer the target: the measurement right
// after the start is the trees' cheapest whole schedule, not a one-Func variant of the
// start, and it is closer to the target.
TEST(MctsSearch, CostPlusRealMeasuresTheCheapestWholeScheduleOnce) {
  const auto graph = graph_of(small_pipeline());
  const SearchSpace space = space_for_tests();
  const int n = static_cast<int>(graph->funcs.size());
  int tested = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const ScheduleState target = random_complete(graph, space, seed);
    const std::optional<ScheduleState> start =
        find_start(graph, space, [&](const ScheduleState &o) -> std::optional<ScheduleState> {
          int differing = 0;
          for (int f = 0; f < n; ++f) differing += !(o.decision(f) == target.decision(f));
          if (differing == n && varied_func(target, o, graph) == -1) return o;
          return std::nullopt;
        });
    if (!start) continue;
    ++tested;
    RecordingDistanceMeasurer measurer(target);
    cost_plus_real_from(graph, space, target, *start, measurer);
    ASSERT_GE(measurer.measured.size(), 2u) << "target seed " << seed;
    EXPECT_EQ(schedule_to_json(measurer.measured[0]), schedule_to_json(*start));
    EXPECT_EQ(varied_func(measurer.measured[1], *start, graph), -1) << "target seed " << seed;
    DistanceModel distance(target);
    EXPECT_LT(distance.predict({&measurer.measured[1]})[0], distance.predict({&*start})[0])
        << "target seed " << seed;
  }
  EXPECT_GE(tested, 3);
}

// One 1-D Func big enough that its loops must run in parallel: its one outer loop is the
// only choice of the last step (which loops run in parallel), so no decision the search
// makes completes a Func.
Halide::Pipeline one_dimensional_pipeline() {
  using namespace Halide;
  ImageParam in(Float(32), 1, "in");
  Var x("x");
  Func g("g");
  g(x) = in(x)*2.0f;
  in.set_estimates({{0, 1 << 16}});
  g.set_estimates({{0, 1 << 16}});
  return Pipeline(g);
}

TEST(MctsSearch, CostPlusRealMeasuresWhenTheLastStepOfEveryFuncIsForced) {
  const auto graph = graph_of(one_dimensional_pipeline());
  const SearchSpace space = space_for_tests();
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) {  // the premise: the step that completes g is forced
    ScheduleState s(graph);
    while (!s.complete()) {
      const std::vector<Step> children = space.children(s);
      if (s.mid_decision() && s.next_step().kind == Step::Kind::kParallel) {
        ASSERT_EQ(children.size(), 1u);
      }
      s.take_step(*space.random_child(s, rng));
    }
  }
  SearchContext ctx = context_for(graph, space, random_complete(graph, space, 3), 1);
  FakeMeasurer measurer;
  ctx.measurer = &measurer;
  SearchBudget budget;
  budget.iterations = 5;
  const SearchResult r = make_search("mcts_cost+real_1s")->run(ctx, budget);
  EXPECT_GT(measurer.measurements(), 0);
  EXPECT_EQ(r.measurements, measurer.measurements());
}

TEST(SearchRegistry, NamesEveryTableOneConfigurationAndRefusesOthers) {
  for (const char *name :
       {"mcts_30s", "mcts_10s", "mcts_1s", "mcts_0.5s", "mcts_Cp10_30s", "mcts_sqrt2_30s",
        "mcts_cost+real_30s", "mcts_cost+real_1s", "beam", "greedy", "random"}) {
    EXPECT_EQ(make_search(name)->name(), name);
  }
  MctsOptions o;
  ASSERT_TRUE(mcts_options_for("mcts_Cp10_30s", o));
  EXPECT_EQ(o.cp, 10.0);
  EXPECT_EQ(o.decision_seconds, 30.0);
  ASSERT_TRUE(mcts_options_for("mcts_sqrt2_30s", o));
  EXPECT_EQ(o.formula, UcbFormula::kUcb1Normalized);
  EXPECT_NEAR(o.cp, 0.7071068, 1e-6);
  EXPECT_EQ(o.trees, 16);
  EXPECT_EQ(o.greedy_trees, 1);
  try {
    make_search("mcts_2s");
    FAIL() << "an unknown name was accepted";
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("mcts_2s"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("mcts_cost+real_1s"), std::string::npos);
  }
}

}  // namespace
}  // namespace protuner
