// The search baselines (beam search, greedy, random search) behind the Search interface.
// Fake cost models record every batch they are asked to score, so the tests can check
// what the search chose against what it was shown: greedy takes the best sampled child,
// the beam keeps exactly its best N, the known-bad penalty reshapes the second pass, and
// random search keeps the fastest measured schedule rather than the best predicted.
#include <gtest/gtest.h>

#include <Halide.h>
#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "common/schedule/schedule_json.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/search/beam_search.h"
#include "searcher/search/model_seed.h"
#include "searcher/search/random_search.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using testing::analytic_context;
using testing::space_for_tests;

using Clock = std::chrono::steady_clock;

// c <- b <- a: three 3-point stencils, small enough (64x64) that serial root stages are
// in the space. Funcs in graph order: c (0), b (1), a (2), then Halide's wrapper of the
// input (3).
std::shared_ptr<const PipelineGraph> three_stage_chain() {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func a("a"), b("b"), c("c");
  a(x, y) = in(x, y) + in(x + 1, y) + in(x + 2, y);
  b(x, y) = a(x, y) + a(x, y + 1) + a(x, y + 2);
  c(x, y) = b(x, y) * 2.0f + b(x + 1, y);
  in.set_estimates({{0, 67}, {0, 66}});
  c.set_estimates({{0, 64}, {0, 64}});
  Pipeline p(c);
  return std::make_shared<const PipelineGraph>(analyze_pipeline(p));
}

// Every batch a fake model was asked to score, with the costs it gave.
struct ModelLog {
  std::vector<std::vector<ScheduleState>> batches;
  std::vector<std::vector<double>> costs;
};

using CostFn = std::function<double(const ScheduleState &)>;

class FakeModel : public CostModel {
 public:
  FakeModel(CostFn fn, std::shared_ptr<ModelLog> log, std::chrono::milliseconds first_delay)
      : fn_(std::move(fn)), log_(std::move(log)), delay_(first_delay) {}

  std::vector<double> predict(const std::vector<const ScheduleState *> &batch) override {
    if (log_->batches.empty()) std::this_thread::sleep_for(delay_);
    std::vector<ScheduleState> states;
    std::vector<double> costs;
    for (const ScheduleState *s : batch) {
      states.push_back(*s);
      costs.push_back(fn_(*s));
    }
    log_->batches.push_back(std::move(states));
    log_->costs.push_back(costs);
    return costs;
  }
  std::string name() const override { return "fake"; }

 private:
  CostFn fn_;
  std::shared_ptr<ModelLog> log_;
  std::chrono::milliseconds delay_;
};

struct Fixture {
  std::shared_ptr<const PipelineGraph> graph = three_stage_chain();
  SearchSpace space = space_for_tests();
  std::shared_ptr<ModelLog> log = std::make_shared<ModelLog>();

  SearchContext context(CostFn fn, uint64_t seed = 1,
                        std::chrono::milliseconds first_delay = std::chrono::milliseconds(0)) {
    SearchContext ctx;
    ctx.graph = graph;
    ctx.space = &space;
    ctx.seed = seed;
    ctx.cost_model = [fn, log = log, first_delay] {
      return std::make_unique<FakeModel>(fn, log, first_delay);
    };
    return ctx;
  }
};

SearchBudget iterations(int64_t n) {
  SearchBudget b;
  b.iterations = n;
  return b;
}

// A distinct, reproducible cost per state: unrelated to how good the schedule is, so the
// tests see the search follow the model and nothing else.
double hashed_cost(const ScheduleState &s) {
  return 1.0 + static_cast<double>(std::hash<std::string>{}(schedule_to_json(s)) % 100000) / 1e5;
}

// The JSON of `s` with only its first n decisions: identifies a beam state by its prefix.
std::string prefix_json(const ScheduleState &s, int n) {
  ScheduleState p(s.graph_ptr());
  for (int f = 0; f < n; ++f) p.decide(s.decision(f));
  return schedule_to_json(p);
}

size_t argmin(const std::vector<double> &v) {
  return static_cast<size_t>(std::min_element(v.begin(), v.end()) - v.begin());
}

void expect_complete_and_legal(const SearchResult &r) {
  ASSERT_TRUE(r.best.complete());
  // Re-reading checks every decision again.
  EXPECT_NO_THROW(schedule_from_json(schedule_to_json(r.best), r.best.graph_ptr()));
}

BeamSearch greedy() { return BeamSearch({.beam_size = 1, .passes = 1}, "greedy"); }

TEST(GreedySearch, PicksTheBestRankedSampledChildAtEveryFunc) {
  Fixture fx;
  BeamSearch search = greedy();
  EXPECT_EQ(search.name(), "greedy");
  const SearchResult r = search.run(fx.context(hashed_cost, 3), iterations(1));
  expect_complete_and_legal(r);
  const ModelLog &log = *fx.log;
  ASSERT_EQ(log.batches.size(), fx.graph->funcs.size()) << "one batch per Func";
  size_t scored = 0;
  for (size_t k = 0; k < log.batches.size(); ++k) {
    scored += log.batches[k].size();
    const ScheduleState &chosen = log.batches[k][argmin(log.costs[k])];
    if (k + 1 == log.batches.size()) {
      EXPECT_EQ(schedule_to_json(r.best), schedule_to_json(chosen));
      EXPECT_EQ(r.best_cost, log.costs[k][argmin(log.costs[k])]);
      break;
    }
    for (const ScheduleState &next : log.batches[k + 1]) {
      ASSERT_EQ(next.num_decided(), static_cast<int>(k) + 2);
      EXPECT_EQ(prefix_json(next, k + 1), schedule_to_json(chosen)) << "batch " << k + 1;
    }
  }
  EXPECT_GT(log.batches[0].size(), 1u) << "the output has many tilings to choose from";
  EXPECT_EQ(r.evaluations, static_cast<int64_t>(scored));
}

TEST(BeamSearch, KeepsTheBeamSizeBestStatesAtEveryStep) {
  Fixture fx;
  constexpr size_t kBeam = 4;
  BeamSearch search({.beam_size = kBeam, .passes = 1});
  const SearchResult r = search.run(fx.context(hashed_cost, 5), iterations(1));
  expect_complete_and_legal(r);
  const ModelLog &log = *fx.log;
  ASSERT_EQ(log.batches.size(), fx.graph->funcs.size());
  for (size_t k = 0; k + 1 < log.batches.size(); ++k) {
    std::vector<size_t> order(log.batches[k].size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return log.costs[k][a] < log.costs[k][b]; });
    ASSERT_GE(order.size(), kBeam);
    std::set<std::string> best_n, parents;
    for (size_t i = 0; i < kBeam; ++i) best_n.insert(schedule_to_json(log.batches[k][order[i]]));
    for (const ScheduleState &next : log.batches[k + 1]) {
      parents.insert(prefix_json(next, static_cast<int>(k) + 1));
    }
    EXPECT_EQ(parents, best_n) << "the states expanded after step " << k;
  }
  EXPECT_EQ(r.best_cost, *std::min_element(log.costs.back().begin(), log.costs.back().end()));
  EXPECT_EQ(search.last_stats().beam_steps, static_cast<int64_t>(log.batches.size()));
}

// A model that rewards one decision sequence and deceives a greedy choice: a parallel c
// looks cheaper (1 vs 2) but makes every b cost 10 more. The optimum, 2, is c serial,
// b root, a root.
double deceptive_cost(const ScheduleState &s) {
  double cost = 0;
  const bool c_parallel = s.decision(0).stages[0].parallel_loops > 0;
  cost += c_parallel ? 1 : 2;
  if (s.num_decided() > 1) {
    cost += (c_parallel ? 10 : 0) + (s.decision(1).placement == Placement::kRoot ? 0 : 1);
  }
  if (s.num_decided() > 2) cost += s.decision(2).placement == Placement::kRoot ? 0 : 1;
  return cost;
}

TEST(BeamSearch, FindsTheOptimumADeceptiveModelHidesFromGreedy) {
  Fixture fx;
  const SearchResult g = greedy().run(fx.context(deceptive_cost, 9), iterations(1));
  const SearchResult b =
      BeamSearch({.beam_size = 32, .passes = 1}).run(fx.context(deceptive_cost, 9), iterations(1));
  expect_complete_and_legal(g);
  expect_complete_and_legal(b);
  EXPECT_EQ(b.best_cost, 2);
  EXPECT_EQ(b.best.decision(0).stages[0].parallel_loops, 0);
  EXPECT_EQ(b.best.decision(1).placement, Placement::kRoot);
  EXPECT_EQ(b.best.decision(2).placement, Placement::kRoot);
  EXPECT_GT(g.best_cost, 2) << "greedy took the cheap-looking parallel c";
  EXPECT_LE(b.best_cost, g.best_cost);
}

// A decision that pays off only through the next one (iir_blur's transpose computed at
// root, its producer inside its tiles): b at root costs 1.5 while b is the last Func
// decided, against 1 for any other placement, and 0.5 once a is computed inside b's loops.
double pays_off_next_cost(const ScheduleState &s) {
  if (s.num_decided() < 2) return 1;
  if (s.decision(1).placement != Placement::kRoot) return 1;
  if (s.num_decided() < 3) return 1.5;
  const FuncDecision &a = s.decision(2);
  return a.placement == Placement::kAt && a.compute_at.func == 1 ? 0.5 : 1.5;
}

TEST(BeamSearch, LookAheadKeepsADecisionThatPaysOffThroughTheNext) {
  BeamSearchOptions ahead{.beam_size = 1, .passes = 1};
  ahead.lookahead_samples = kDefaultLookaheadSamples;
  Fixture plain_fx, ahead_fx;
  BeamSearch plain = greedy(), looking(ahead, "greedy_lookahead");
  const SearchResult p = plain.run(plain_fx.context(pays_off_next_cost, 3), iterations(1));
  const SearchResult a = looking.run(ahead_fx.context(pays_off_next_cost, 3), iterations(1));
  expect_complete_and_legal(p);
  expect_complete_and_legal(a);
  EXPECT_EQ(p.best_cost, 1) << "without look-ahead b at root looks worse and is dropped";
  EXPECT_NE(p.best.decision(1).placement, Placement::kRoot);
  EXPECT_EQ(a.best_cost, 0.5);
  EXPECT_EQ(a.best.decision(1).placement, Placement::kRoot);
  EXPECT_EQ(a.best.decision(2).compute_at.func, 1);
  EXPECT_EQ(plain.last_stats().lookahead_states, 0);
  EXPECT_GT(looking.last_stats().lookahead_states, 0);
  // Each step scores its children, then (until the last Func) their next decisions.
  const size_t funcs = plain_fx.graph->funcs.size();
  EXPECT_EQ(plain_fx.log->batches.size(), funcs);
  EXPECT_EQ(ahead_fx.log->batches.size(), 2 * funcs - 1);
  EXPECT_THROW(BeamSearch({.lookahead_samples = -1}), std::invalid_argument);
}

// A trap for the beam: inlining b looks best when b is decided (partial cost 1 against 1.1
// for any other placement, within the 20% margin so neither is condemned by its partial
// cost), looks slightly worse once a is decided, and every complete schedule with b
// inlined costs 100 more. Only the last step shows the trap.
double inline_trap_cost(const ScheduleState &s) {
  if (s.num_decided() < 2) return 1;
  const bool b_inlined = s.decision(1).placement == Placement::kInline;
  if (s.num_decided() == 2) return b_inlined ? 1 : 1.1;
  const Placement a = s.decision(2).placement;
  double cost = 1 + (a == Placement::kInline ? 0 : a == Placement::kRoot ? 0.25 : 0.5);
  if (b_inlined) cost += s.complete() ? 100.1 : 0.1;
  return cost;
}

bool any_b_inlined(const std::vector<ScheduleState> &batch) {
  return std::any_of(batch.begin(), batch.end(), [](const ScheduleState &s) {
    return s.decision(1).placement == Placement::kInline;
  });
}

TEST(BeamSearch, KnownBadPrefixesArePenalizedInTheSecondPass) {
  // Beam 8 over 4 samples of c: pass 1 keeps the 4 inlined b (partial cost 1) and 4 others
  // (1.1), then a inlined under each (1.1 and 1.0), and completes both kinds: it learns
  // that inlining b ends above 100.
  const BeamSearchOptions base{.beam_size = 8, .passes = 2, .samples_per_state = 4};
  BeamSearchOptions off = base;
  off.known_bad_penalty = 1;
  Fixture with, without;
  BeamSearch penalized(base), plain(off);
  const SearchResult rp = penalized.run(with.context(inline_trap_cost, 4), iterations(2));
  const SearchResult rn = plain.run(without.context(inline_trap_cost, 4), iterations(2));
  expect_complete_and_legal(rp);
  expect_complete_and_legal(rn);
  const size_t funcs = with.graph->funcs.size();  // beam steps per pass
  ASSERT_EQ(with.log->batches.size(), 2 * funcs) << "two passes";
  ASSERT_EQ(without.log->batches.size(), 2 * funcs);
  for (size_t k = 0; k <= funcs; ++k) {  // pass 1 and the first step of pass 2 are the same
    ASSERT_EQ(with.log->batches[k].size(), without.log->batches[k].size());
    for (size_t i = 0; i < with.log->batches[k].size(); ++i) {
      EXPECT_EQ(schedule_to_json(with.log->batches[k][i]),
                schedule_to_json(without.log->batches[k][i]));
    }
  }
  EXPECT_TRUE(any_b_inlined(without.log->batches[2])) << "pass 1 expanded inlined b";
  // Pass 2, third step: the children of the beam kept after deciding b.
  EXPECT_TRUE(any_b_inlined(without.log->batches[funcs + 2])) << "no penalty: inlined b kept";
  EXPECT_FALSE(any_b_inlined(with.log->batches[funcs + 2])) << "penalty: inlined b dropped";
  EXPECT_GT(penalized.last_stats().penalized, 0);
  EXPECT_EQ(plain.last_stats().penalized, 0);
}

TEST(BeamSearch, ADeadlineMidPassFinishesTheBestStateGreedily) {
  Fixture fx;
  // The first batch outlives the deadline: the beam must finish with one state and one
  // sample per placement.
  SearchContext ctx = fx.context(hashed_cost, 2, std::chrono::milliseconds(1000));
  SearchBudget budget;
  budget.deadline = Clock::now() + std::chrono::milliseconds(500);
  BeamSearch search({.beam_size = 8, .passes = 5});
  const SearchResult r = search.run(ctx, budget);
  expect_complete_and_legal(r);
  EXPECT_TRUE(search.last_stats().finished_after_deadline);
  EXPECT_EQ(search.last_stats().passes_completed, 0);
  const ModelLog &log = *fx.log;
  ASSERT_EQ(log.batches.size(), fx.graph->funcs.size());
  for (size_t k = 1; k < log.batches.size(); ++k) {
    const ScheduleState &parent = log.batches[k - 1][argmin(log.costs[k - 1])];
    const size_t placements = fx.space.children(parent).size();
    EXPECT_LE(log.batches[k].size(), placements) << "one sample per placement at step " << k;
    for (const ScheduleState &s : log.batches[k]) {
      EXPECT_EQ(prefix_json(s, static_cast<int>(k)), schedule_to_json(parent));
    }
  }
}

TEST(Search, ADeadlineAlreadyPassedStillReturnsACompleteSchedule) {
  Fixture fx;
  SearchBudget budget;
  budget.deadline = Clock::now() - std::chrono::seconds(1);
  BeamSearch beam;
  expect_complete_and_legal(beam.run(fx.context(hashed_cost), budget));
  EXPECT_TRUE(beam.last_stats().finished_after_deadline);
  expect_complete_and_legal(greedy().run(fx.context(hashed_cost), budget));
  const SearchResult r = RandomSearch().run(fx.context(hashed_cost), budget);
  expect_complete_and_legal(r);
  EXPECT_EQ(r.rollouts, 1) << "one schedule, as fast as it can";
}

TEST(Search, ABudgetWithoutALimitIsRefused) {
  Fixture fx;
  BeamSearch beam;
  RandomSearch random;
  for (Search *s : std::initializer_list<Search *>{&beam, &random}) {
    EXPECT_THROW(s->run(fx.context(hashed_cost), SearchBudget{}), std::invalid_argument)
        << s->name();
    EXPECT_THROW(s->run(fx.context(hashed_cost), iterations(0)), std::invalid_argument)
        << s->name();
    SearchContext no_model = fx.context(hashed_cost);
    no_model.cost_model = nullptr;
    EXPECT_THROW(s->run(no_model, iterations(1)), std::invalid_argument) << s->name();
  }
  EXPECT_THROW(BeamSearch({.beam_size = 0}), std::invalid_argument);
  EXPECT_THROW(BeamSearch({.known_bad_penalty = 0.5}), std::invalid_argument);
  EXPECT_THROW(RandomSearch({.measured_per_batch = 0}), std::invalid_argument);
}

// Measures a schedule as slower the cheaper the fake model predicts it (so the best
// predicted is never the fastest), and fails every fourth candidate.
class FakeMeasurer : public CandidateMeasurer {
 public:
  std::vector<std::optional<double>> measure(
      const std::vector<const ScheduleState *> &batch) override {
    std::vector<std::optional<double>> out;
    batches.emplace_back();
    for (const ScheduleState *s : batch) {
      batches.back().push_back(*s);
      const bool fails = count_++ % 4 == 0;
      out.push_back(fails ? std::nullopt : std::optional<double>(10 - hashed_cost(*s)));
      results.push_back(out.back());
      measured.push_back(*s);
    }
    return out;
  }
  int64_t measurements() const override { return count_; }

  std::vector<std::vector<ScheduleState>> batches;
  std::vector<ScheduleState> measured;
  std::vector<std::optional<double>> results;

 private:
  int64_t count_ = 0;
};

TEST(RandomSearch, KeepsTheFastestMeasuredNotTheBestPredicted) {
  Fixture fx;
  FakeMeasurer measurer;
  SearchContext ctx = fx.context(hashed_cost, 6);
  ctx.measurer = &measurer;
  RandomSearch search({.batch_size = 16, .measured_per_batch = 3});
  EXPECT_FALSE(search.needs_measurer());
  const SearchResult r = search.run(ctx, iterations(64));
  expect_complete_and_legal(r);
  EXPECT_EQ(r.rollouts, 64);
  EXPECT_EQ(r.evaluations, 64);
  const ModelLog &log = *fx.log;
  ASSERT_EQ(log.batches.size(), 4u);
  ASSERT_EQ(measurer.batches.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {  // each batch's 3 best predicted were measured
    std::vector<double> costs = log.costs[k];
    std::sort(costs.begin(), costs.end());
    ASSERT_EQ(measurer.batches[k].size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(hashed_cost(measurer.batches[k][i]), costs[i]);
  }
  size_t fastest = 0;
  for (size_t i = 0; i < measurer.results.size(); ++i) {
    if (measurer.results[i] &&
        (!measurer.results[fastest] || *measurer.results[i] < *measurer.results[fastest])) {
      fastest = i;
    }
  }
  ASSERT_TRUE(r.best_measured_seconds.has_value());
  EXPECT_EQ(*r.best_measured_seconds, *measurer.results[fastest]);
  EXPECT_EQ(schedule_to_json(r.best), schedule_to_json(measurer.measured[fastest]));
  double best_predicted_measured = 1e9;
  for (const ScheduleState &s : measurer.measured) {
    best_predicted_measured = std::min(best_predicted_measured, hashed_cost(s));
  }
  EXPECT_GT(r.best_cost, best_predicted_measured) << "kept the fastest, not the best predicted";
  EXPECT_EQ(r.measurements, 12);
  ASSERT_FALSE(r.trace.empty());
  EXPECT_EQ(r.trace.back().measured_seconds, r.best_measured_seconds);
}

TEST(RandomSearch, WithoutAMeasurerKeepsTheBestPredicted) {
  Fixture fx;
  const SearchResult r =
      RandomSearch({.batch_size = 10}).run(fx.context(hashed_cost, 8), iterations(25));
  expect_complete_and_legal(r);
  const ModelLog &log = *fx.log;
  ASSERT_EQ(log.batches.size(), 3u) << "10 + 10 + 5";
  double best = 1e9;
  for (const auto &costs : log.costs)
    best = std::min(best, *std::min_element(costs.begin(), costs.end()));
  EXPECT_EQ(r.best_cost, best);
  EXPECT_EQ(r.rollouts, 25);
  EXPECT_FALSE(r.best_measured_seconds.has_value());
}

// The model seeds are the plain beam's best by the model alone, then the look-ahead
// beam's when the model ranks it cheaper: they measure nothing and ignore start points.
// Without time or share nothing is searched at all.
TEST(ModelSeeds, AreThePlainBeamsBestThenTheLookAheadsWhenCheaper) {
  Fixture fx;
  const Clock::time_point later = Clock::now() + std::chrono::seconds(60);
  SearchBudget budget;
  budget.deadline = later;
  const SearchResult beam = BeamSearch().run(fx.context(pays_off_next_cost, 4), budget);
  const SearchResult ahead =
      BeamSearch(lookahead_beam_options()).run(fx.context(pays_off_next_cost, 4), budget);
  ASSERT_EQ(beam.best_cost, 1);
  ASSERT_EQ(ahead.best_cost, 0.5);
  FakeMeasurer measurer;
  SearchContext ctx = fx.context(pays_off_next_cost, 4);
  ctx.measurer = &measurer;
  ctx.start_points = {greedy().run(fx.context(pays_off_next_cost, 9), iterations(1)).best};
  const std::vector<ModelSeed> seeds = model_seeds(ctx, later, 1.0);
  ASSERT_EQ(seeds.size(), 2u);
  EXPECT_EQ(seeds[0].search, "beam");
  EXPECT_EQ(seeds[1].search, "beam_lookahead");
  for (size_t k = 0; k < 2; ++k) {
    const SearchResult &expected = k == 0 ? beam : ahead;
    expect_complete_and_legal(seeds[k].result);
    EXPECT_EQ(schedule_to_json(seeds[k].result.best), schedule_to_json(expected.best));
    EXPECT_EQ(seeds[k].result.best_cost, expected.best_cost);
    EXPECT_FALSE(seeds[k].result.best_measured_seconds.has_value());
  }
  EXPECT_EQ(measurer.measurements(), 0);

  // A model that costs every state by its depth alone: looking ahead finds nothing cheaper.
  const std::vector<ModelSeed> flat = model_seeds(
      fx.context([](const ScheduleState &s) { return 1.0 + s.num_decided(); }, 4), later, 1.0);
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0].search, "beam");

  const size_t batches = fx.log->batches.size();
  EXPECT_TRUE(model_seeds(ctx, Clock::now(), 1.0).empty());
  EXPECT_TRUE(model_seeds(ctx, later, 0.0).empty());
  EXPECT_EQ(fx.log->batches.size(), batches) << "nothing scored";
}

std::shared_ptr<const PipelineGraph> blur_chain() {
  Halide::Pipeline p = testing::blur_chain_pipeline(512, 384);
  return std::make_shared<const PipelineGraph>(analyze_pipeline(p));
}

TEST(Search, AFixedSeedGivesTheSameScheduleWithTheAnalyticModel) {
  const auto graph = blur_chain();
  const SearchSpace space = space_for_tests();
  BeamSearch beam({.beam_size = 4, .passes = 2, .samples_per_state = 8});
  RandomSearch random({.batch_size = 16});
  for (Search *s : std::initializer_list<Search *>{&beam, &random}) {
    const SearchResult a = s->run(analytic_context(graph, space, 21), iterations(32));
    const SearchResult b = s->run(analytic_context(graph, space, 21), iterations(32));
    expect_complete_and_legal(a);
    EXPECT_EQ(schedule_to_json(a.best), schedule_to_json(b.best)) << s->name();
    EXPECT_EQ(a.best_cost, b.best_cost) << s->name();
  }
}

TEST(BeamSearch, RanksRealSchedulesWithTheAnalyticModel) {
  const auto graph = blur_chain();
  const SearchSpace space = space_for_tests();
  SearchContext ctx = analytic_context(graph, space, 13);
  int progress_reports = 0;
  ctx.on_progress = [&](const SearchProgress &p) {
    ++progress_reports;
    EXPECT_GT(p.evaluations, 0);
  };
  BeamSearch search({.beam_size = 8, .passes = 2, .samples_per_state = 16});
  const SearchResult r = search.run(ctx, iterations(2));
  expect_complete_and_legal(r);
  EXPECT_EQ(search.last_stats().passes_completed, 2);
  EXPECT_GT(search.last_stats().penalized, 0) << "pass 2 judged placements by pass 1";
  EXPECT_EQ(progress_reports, search.last_stats().beam_steps);
  AnalyticModel fresh(graph);
  EXPECT_NEAR(fresh.predict({&r.best})[0], r.best_cost, 1e-9 * r.best_cost);
  ASSERT_FALSE(r.trace.empty());
  for (size_t i = 1; i < r.trace.size(); ++i) EXPECT_LT(r.trace[i].cost, r.trace[i - 1].cost);
  EXPECT_EQ(r.trace.back().cost, r.best_cost);
  // Guided by the model Func by Func, the beam does at least as well as random search
  // given as many complete schedules as the beam scored (its last steps' children).
  const SearchResult random =
      RandomSearch().run(analytic_context(graph, space, 13), iterations(r.rollouts));
  EXPECT_LE(r.best_cost, random.best_cost);
}

}  // namespace
}  // namespace protuner
