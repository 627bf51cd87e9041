// The MDP and its pruning rules: steps compose into decisions, random children are children
// and are drawn uniformly, and each stated pruning rule holds on every schedule the space
// produces (and is the reason given for the decisions it removes).
#include <gtest/gtest.h>

#include <Halide.h>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "common/host_target.h"
#include "common/schedule/loop_nest.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using testing::graph_of;
using testing::space_for_tests;

// A stencil of a stencil: each point of `outer` needs 7x7 points of `inner`, each of which
// needs 7x7 of `base`. Inlining `inner` would recompute 49 points per output point.
Halide::Pipeline stencil_of_stencil() {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func clamped = BoundaryConditions::repeat_edge(in);
  Func inner("inner"), outer("outer");
  auto box7 = [&](const Func &f) {
    Expr total = 0.0f;
    for (int dy = -3; dy <= 3; ++dy) {
      for (int dx = -3; dx <= 3; ++dx) total += f(x + dx, y + dy);
    }
    return total;
  };
  inner(x, y) = box7(clamped);
  outer(x, y) = box7(inner);
  in.set_estimates({{0, 256}, {0, 256}});
  outer.set_estimates({{0, 256}, {0, 256}});
  return Pipeline(outer);
}

TEST(SearchSpace, TakingTheStepsOfADecisionEqualsDecidingIt) {
  const auto graph = graph_of(testing::bilateral_grid_pipeline());
  const SearchSpace space = space_for_tests();
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    ScheduleState whole(graph), stepped(graph);
    while (!whole.complete()) {
      const std::optional<FuncDecision> d = space.random_decision(whole, rng);
      ASSERT_TRUE(d.has_value());
      EXPECT_EQ(space.pruned_because(whole, *d), "");
      whole.decide(*d);
      for (const Step &s : steps_of(*d)) stepped.take_step(s);
      ASSERT_EQ(stepped.num_decided(), whole.num_decided());
      EXPECT_FALSE(stepped.mid_decision());
      EXPECT_EQ(stepped.decision(whole.num_decided() - 1), *d);
    }
  }
}

TEST(SearchSpace, RandomChildrenAreChildrenAndEveryRolloutCompletes) {
  const SearchSpace space = space_for_tests();
  for (auto build : {+[] { return testing::bilateral_grid_pipeline(); },
                     +[] { return testing::conv_relu_pipeline(); },
                     +[] { return testing::pyramid_pipeline(); }}) {
    const auto graph = graph_of(build());
    std::mt19937_64 rng(3);
    for (int i = 0; i < 30; ++i) {
      ScheduleState s(graph);
      while (!s.complete()) {
        const std::vector<Step> all = space.children(s);
        ASSERT_FALSE(all.empty()) << "dead end at Func " << s.num_decided();
        const std::optional<Step> step = space.random_child(s, rng);
        ASSERT_TRUE(step.has_value());
        ASSERT_NE(std::find(all.begin(), all.end(), *step), all.end());
        s.take_step(*step);
      }
    }
  }
}

TEST(SearchSpace, RandomChildIsUniformOverTheChildren) {
  const auto graph = graph_of(testing::blur_chain_pipeline(1536, 2560));
  const SearchSpace space = space_for_tests();
  ScheduleState s(graph);
  Step root;
  root.placement = Placement::kRoot;
  s.take_step(root);  // the output: next comes the tile step of its variable x
  const std::vector<Step> all = space.children(s);
  ASSERT_GT(all.size(), 10u);
  std::mt19937_64 rng(11);
  std::map<std::pair<int64_t, int64_t>, int> seen;
  const int draws = 400 * static_cast<int>(all.size());
  for (int i = 0; i < draws; ++i) {
    const Step c = *space.random_child(s, rng);
    ++seen[{c.tile, c.inner}];
  }
  ASSERT_EQ(seen.size(), all.size());
  for (const auto &[pair, n] : seen) {
    EXPECT_NEAR(n, 400, 100) << "tile " << pair.first << " inner " << pair.second;
  }
}

// The innermost variable narrower than a vector is offered whole as its vector when it
// fills at least half of one (bgu's 12 coefficients a cell at 16 lanes), not when less.
TEST(SearchSpace, ANarrowInnermostVariableIsVectorizedWhole) {
  const SearchSpace space = space_for_tests();  // 16 lanes of float32
  for (const auto &[extent, whole] : {std::pair{12, true}, std::pair{8, true}, std::pair{7, false}}) {
    using namespace Halide;
    ImageParam in(Float(32), 2, "in");
    Var k("k"), x("x");
    Func f("f");
    f(k, x) = in(k, x) * 2.0f;
    in.set_estimates({{0, extent}, {0, 4096}});
    f.set_estimates({{0, extent}, {0, 4096}});
    ScheduleState s(graph_of(Pipeline(f)));
    Step root;
    root.placement = Placement::kRoot;
    s.take_step(root);  // next: the tile step of k
    std::set<int64_t> inner;
    for (const Step &c : space.children(s)) inner.insert(c.inner);
    const std::set<int64_t> expected =
        whole ? std::set<int64_t>{1, extent} : std::set<int64_t>{1};
    EXPECT_EQ(inner, expected) << extent;
  }
}

TEST(SearchSpace, OptionsOutOfRangeAreRefused) {
  SearchSpaceOptions o;
  o.unroll_extents = {2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_THROW(SearchSpace{o}, std::invalid_argument);
  o = SearchSpaceOptions{};
  o.max_vector_multiple = 0;
  EXPECT_THROW(SearchSpace{o}, std::invalid_argument);
  o = SearchSpaceOptions{};
  o.cores = 0;
  EXPECT_THROW(SearchSpace{o}, std::invalid_argument);
}

TEST(SearchSpace, StepsOutOfOrderAreRefused) {
  const auto graph = graph_of(testing::matmul_pipeline());
  ScheduleState s(graph);
  Step tile;
  tile.kind = Step::Kind::kTile;
  EXPECT_EQ(s.check_step(tile), "this step does not come next");
  Step at;
  at.placement = Placement::kAt;
  EXPECT_EQ(s.check_step(at), "outputs are computed at root");
  Step root;
  root.placement = Placement::kRoot;
  s.take_step(root);
  EXPECT_THROW(s.decide(FuncDecision{}), std::invalid_argument) << "a decision is under way";
  tile.tile = 4;
  tile.inner = 8;
  EXPECT_EQ(s.check_step(tile), "needs 1 <= inner <= tile");
}

// An update's reduction may run outside its tile's middle loops. The space offers that only
// where it changes the loop nest (a reduction, and a middle loop to move it out of); a pure
// stage may not ask for it at all.
TEST(SearchSpace, AnUpdateMayRunItsReductionOutsideItsTile) {
  const auto graph = graph_of(testing::matmul_pipeline());  // c(x, y) += a(k, y) * b(x, k)
  const SearchSpace space = space_for_tests();
  auto step = [](Step::Kind kind) {
    Step s;
    s.kind = kind;
    return s;
  };
  auto tile = [&](int64_t t, int64_t i) {
    Step s = step(Step::Kind::kTile);
    s.tile = t;
    s.inner = i;
    return s;
  };
  auto offers_outside = [&](const ScheduleState &s) {
    for (const Step &c : space.children(s)) {
      if (c.reduction_outside) return true;
    }
    return false;
  };
  ScheduleState s(graph);
  s.take_step(step(Step::Kind::kPlace));  // c at root
  s.take_step(tile(64, 16));
  s.take_step(tile(64, 1));
  EXPECT_FALSE(offers_outside(s)) << "the pure stage has no reduction";
  Step outside = step(Step::Kind::kParallel);
  outside.reduction_outside = true;
  EXPECT_EQ(s.check_step(outside), "the stage has no reduction loops to move outside its tile");
  s.take_step(space.children(s).at(0));

  ScheduleState blocked = s;  // a 16 x 1 tile is one register block: no middle loop
  blocked.take_step(tile(16, 16));
  blocked.take_step(tile(1, 1));
  EXPECT_FALSE(offers_outside(blocked));
  EXPECT_NE(space
                .pruned_because(ScheduleState(graph),
                                [&] {
                                  ScheduleState done = blocked;
                                  done.take_step(outside);
                                  return done.decision(0);
                                }())
                .find("reduction_outside would change nothing"),
            std::string::npos);

  s.take_step(tile(64, 16));  // 4 blocks across
  s.take_step(tile(8, 1));    // in strips of 8 rows
  ASSERT_TRUE(offers_outside(s));
  for (const Step &c : space.children(s)) {
    if (c.reduction_outside) outside = c;
  }
  s.take_step(outside);
  ASSERT_EQ(s.num_decided(), 1);
  ASSERT_FALSE(s.mid_decision());
  EXPECT_TRUE(s.decision(0).stages[1].reduction_outside);
  EXPECT_FALSE(s.decision(0).stages[0].reduction_outside);
  // Outer y, then k, then the tile's middle y and x, then the vector.
  std::vector<LoopKind> kinds;
  std::vector<int64_t> extents;
  for (const Loop &l : s.bounds(0).loops[1]) {
    kinds.push_back(l.kind);
    extents.push_back(l.extent);
  }
  EXPECT_EQ(kinds, (std::vector<LoopKind>{LoopKind::kOuter, LoopKind::kReduction, LoopKind::kMiddle,
                                          LoopKind::kMiddle, LoopKind::kInner}));
  EXPECT_EQ(extents, (std::vector<int64_t>{8, 64, 8, 4, 16}));
  EXPECT_EQ(space.pruned_because(ScheduleState(graph), s.decision(0)), "");
}

// Rule 1: no inlining that recomputes more than max_inline_footprint points per use.
TEST(SearchSpace, InliningThatRecomputesTooMuchIsPruned) {
  const auto graph = graph_of(stencil_of_stencil());
  const SearchSpace space = space_for_tests();
  ScheduleState s(graph);
  std::mt19937_64 rng(1);
  s.decide(*space.random_decision(s, rng));  // outer
  ASSERT_EQ(stable_func_name(graph->funcs[s.num_decided()].name), "inner");
  EXPECT_EQ(s.inline_footprint(s.num_decided()), 49);
  FuncDecision inline_it;
  inline_it.placement = Placement::kInline;
  EXPECT_EQ(s.check_decision(inline_it), "") << "legal";
  EXPECT_EQ(space.pruned_because(s, inline_it), "inlining would recompute too much");
  for (const Step &c : space.children(s)) EXPECT_NE(c.placement, Placement::kInline);
}

// Rule 5: inlining is pruned when a consumer's unrolled inner block would make too many
// calls of the Func (code LLVM takes minutes to compile), and offered for a smaller block.
TEST(SearchSpace, InliningIntoAHugeUnrolledBlockIsPruned) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func f("f"), g("g");
  f(x, y) = in(clamp(x, 0, 255), clamp(y, 0, 255)) * 2.0f;
  Expr sum = 0.0f;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) sum += f(x + dx, y + dy);
  }
  g(x, y) = sum;
  in.set_estimates({{0, 256}, {0, 256}});
  g.set_estimates({{0, 256}, {0, 256}});
  const auto graph = graph_of(Pipeline(g));
  const SearchSpace space = space_for_tests();
  FuncDecision inline_it;
  inline_it.placement = Placement::kInline;
  for (const auto &[inner, pruned] : {std::pair{std::vector<int64_t>{32, 8}, true},
                                      std::pair{std::vector<int64_t>{16, 1}, false}}) {
    ScheduleState s(graph);
    FuncDecision d;
    d.placement = Placement::kRoot;
    d.stages.push_back({{64, 32}, inner, 1});
    s.decide(d);
    // 9 calls per point: 32 x 8 x 9 = 2304 > 512; 16 x 1 x 9 = 144.
    EXPECT_EQ(s.inlined_block_calls(s.num_decided()), 9 * inner[0] * inner[1]);
    EXPECT_EQ(space.pruned_because(s, inline_it),
              pruned ? "inlining would unroll too many calls into a consumer's inner block" : "");
  }
}

// Rule 6: a stage's own gathered loads (here 2 x 4 x 2 = 16 data-dependent reads of a
// grid per pixel, bilateral_grid's slice) times its block's points stay within
// max_block_gathers, on every schedule the space draws and for every tile it offers.
TEST(SearchSpace, BlocksOfGatheringStagesStayWithinTheGatherLimit) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), z("z");
  Func grid("grid"), slice("slice");
  grid(x, y, z) = cast<float>(x * y + z);
  const Expr level = clamp(cast<int>(in(x, y) * 8.0f), 0, 7);
  Expr sum = 0.0f;
  for (int dy = 0; dy <= 1; ++dy) {
    for (int dx = 0; dx <= 1; ++dx) {
      for (int dz = 0; dz <= 1; ++dz) {
        sum +=
            grid(x / 8 + dx, y / 8 + dy, level + dz) * grid(x / 8 + dx, y / 8 + dy, level + dz + 1);
      }
    }
  }
  slice(x, y) = sum;
  in.set_estimates({{0, 512}, {0, 512}});
  slice.set_estimates({{0, 512}, {0, 512}});
  const auto graph = graph_of(Pipeline(slice));
  int64_t gathers = 0;
  for (const Access &a : graph->funcs[0].stages[0].ops.accesses) {
    gathers += a.pattern == AccessPattern::kGather;
  }
  ASSERT_EQ(gathers, 16);  // the grid reads at a data-dependent level
  const SearchSpace space = space_for_tests();
  const int64_t limit = space.options().max_block_gathers;
  std::mt19937_64 rng(9);
  int64_t widest = 0;
  for (int i = 0; i < 200; ++i) {
    ScheduleState s(graph);
    ASSERT_TRUE(space.random_rollout(s, rng));
    const std::vector<int64_t> &inner = s.decision(0).stages[0].inner;
    const int64_t block = inner[0] * inner[1];
    widest = std::max(widest, block);
    EXPECT_TRUE(block == 1 || block * gathers <= limit) << inner[0] << " x " << inner[1];
  }
  EXPECT_GT(widest, 1);  // vectors are still offered, within the limit
  // After a 16-lane inner tile of x, y may unroll by 2 (16 x 2 x 16 = 512), no more.
  ScheduleState s(graph);
  s.take_step(space.children(s).front());  // root
  Step x_tile;
  x_tile.kind = Step::Kind::kTile;
  x_tile.tile = 64;
  x_tile.inner = 16;
  s.take_step(x_tile);
  int64_t widest_y = 0;
  for (const Step &step : space.children(s)) widest_y = std::max(widest_y, step.inner);
  EXPECT_EQ(widest_y, 2);
}

// Rule 7: the blocks of all stages together stay within max_block_lane_ops (made small
// here so that it binds on a five-level pyramid): every stage with a block of more than
// one point is tiled while the total, itself included, fits.
TEST(SearchSpace, AllBlocksTogetherStayWithinTheCodeLimit) {
  const auto graph = graph_of(testing::pyramid_pipeline());
  SearchSpaceOptions o = space_for_tests().options();
  o.max_block_lane_ops = 1500;
  const SearchSpace space(o);
  std::mt19937_64 rng(13);
  int64_t most = 0;
  for (int i = 0; i < 200; ++i) {
    ScheduleState s(graph);
    ASSERT_TRUE(space.random_rollout(s, rng));
    int64_t computed = 0, one_point = 0;  // blocks of the Funcs not inlined
    bool inlined = false;
    for (int f = 0; f < s.num_decided(); ++f) {
      const FuncDecision &d = s.decision(f);
      if (d.placement == Placement::kInline) {
        inlined = true;
        continue;
      }
      for (size_t st = 0; st < d.stages.size(); ++st) {
        const int64_t per_point = graph->funcs[f].stages[st].code_per_point;
        int64_t block = 1;
        for (int64_t n : d.stages[st].inner) block *= n;
        computed += block * per_point;
        if (block == 1) one_point += per_point;
      }
    }
    const int64_t total = s.block_lane_ops();  // inlined Funcs' code in their users' blocks too
    if (inlined) {
      EXPECT_GT(total, computed) << "rollout " << i;
    } else {
      EXPECT_EQ(total, computed) << "rollout " << i;
    }
    EXPECT_LE(total, o.max_block_lane_ops + one_point) << "rollout " << i;
    most = std::max(most, total);
  }
  EXPECT_GT(most, o.max_block_lane_ops / 2);  // the limit is what shapes the blocks
}

// Rule 2: a big stage at root runs at least `cores` parallel tasks.
// Rule 3: no parallel loop inside a parallel loop.
// Rule 4: vectors never wider than their loop.
TEST(SearchSpace, EveryScheduleHasEnoughParallelismNoNestingAndFittingVectors) {
  const auto graph = graph_of(testing::blur_chain_pipeline(1536, 2560));
  const SearchSpace space = space_for_tests();
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    ScheduleState s(graph);
    ASSERT_TRUE(space.random_rollout(s, rng));
    for (int f = 0; f < s.num_decided(); ++f) {
      const FuncBounds &b = s.bounds(f);
      if (b.inlined) continue;
      for (size_t st = 0; st < b.loops.size(); ++st) {
        const Region region = graph->funcs[f].stages[st].loop_region(b.region);
        int64_t tasks = 1;
        int parallel = 0;
        for (const Loop &l : b.loops[st]) {
          if (l.parallel) {
            tasks *= l.extent;
            ++parallel;
          }
          if (l.vectorized) {
            EXPECT_LE(l.extent, region[l.vars[0]].extent()) << l.name;
          }
        }
        if (b.inside_parallel) {
          EXPECT_EQ(parallel, 0) << graph->funcs[f].name;
        }
        const bool at_root = s.decision(f).placement == Placement::kRoot;
        if (at_root && b.stage_points[st] >= space.options().min_parallel_points) {
          EXPECT_GE(tasks, space.options().cores) << graph->funcs[f].name;
        }
      }
    }
  }
}

TEST(SearchSpace, TooFewParallelTasksIsTheReasonGiven) {
  const auto graph = graph_of(testing::blur_chain_pipeline(1536, 2560));
  const SearchSpace space = space_for_tests();
  ScheduleState s(graph);
  FuncDecision serial;
  serial.placement = Placement::kRoot;
  serial.stages = {StageTiling{{1536, 2560}, {1, 1}, 0}};
  EXPECT_EQ(s.check_decision(serial), "");
  EXPECT_NE(space.pruned_because(s, serial).find("too few parallel tasks"), std::string::npos)
      << space.pruned_because(s, serial);
  FuncDecision parallel = serial;
  parallel.stages = {StageTiling{{1536, 160}, {16, 1}, 1}};  // 16 strips of 160 rows
  EXPECT_EQ(space.pruned_because(s, parallel), "");
}

// A histogram's update scatters over the whole image and has no pure variable to run in
// parallel: rule 2 cannot apply to it, and every rollout still completes (were it
// applied, hist would dead-end: its only placement, root, pruned for too few tasks). At root it
// may also run in parallel bands (rfactor); the CDF's scan, not associative, may not.
TEST(SearchSpace, AnUpdateWithoutPureVariablesRunsSeriallyOrInBandsAtRoot) {
  using namespace Halide;
  ImageParam in(UInt(8), 2, "in");
  Var x("x"), y("y"), i("i");
  RDom pixels(0, 1536, 0, 2560, "pixels");
  Func hist("hist"), cdf("cdf"), out("out");
  hist(i) = 0;
  hist(cast<int>(in(pixels.x, pixels.y))) += 1;
  RDom bins(1, 255, "bins");
  cdf(i) = hist(0);
  cdf(bins) = cdf(bins - 1) + hist(bins);
  out(x, y) = cdf(cast<int>(in(x, y)));
  in.set_estimates({{0, 1536}, {0, 2560}});
  out.set_estimates({{0, 1536}, {0, 2560}});
  const auto graph = graph_of(Pipeline(out));
  const SearchSpace space = space_for_tests();
  std::mt19937_64 rng(5);
  for (int k = 0; k < 50; ++k) {
    ScheduleState s(graph);
    ASSERT_TRUE(space.random_rollout(s, rng)) << "rollout " << k << " dead-ended";
  }
  // cdf and hist at root, hist's update serial: offered.
  ScheduleState s(graph);
  FuncDecision o;
  o.placement = Placement::kRoot;
  o.stages = {StageTiling{{1536, 160}, {16, 1}, 1}};
  s.decide(o);
  ASSERT_EQ(stable_func_name(graph->funcs[2].name), "hist");
  FuncDecision root_cdf;
  root_cdf.placement = Placement::kRoot;
  for (const StageNode &st : graph->funcs[1].stages) {
    root_cdf.stages.push_back(StageTiling{std::vector<int64_t>(st.num_pure, 256),
                                          std::vector<int64_t>(st.num_pure, 1), 0});
  }
  s.decide(root_cdf);
  FuncDecision root_hist = root_cdf;
  EXPECT_EQ(space.pruned_because(s, root_hist), "");
  EXPECT_TRUE(graph->funcs[2].stages[1].rfactorable);
  EXPECT_FALSE(graph->funcs[1].stages[1].rfactorable);
  root_hist.stages[1].parallel_loops = 1;
  EXPECT_EQ(space.pruned_because(s, root_hist), "");
  ScheduleState banded = s;
  banded.decide(root_hist);
  const std::vector<Loop> &loops = banded.bounds(2).loops[1];
  ASSERT_EQ(loops.size(), 3u);  // bands, rows of a band, columns
  EXPECT_TRUE(loops[0].parallel);
  EXPECT_EQ(loops[0].extent, kParallelReductionBands);
  EXPECT_EQ(loops[1].extent, 2560 / kParallelReductionBands);
  EXPECT_EQ(loops[2].extent, 1536);
  FuncDecision banded_cdf = root_cdf;
  banded_cdf.stages[1].parallel_loops = 1;
  ScheduleState before_cdf(graph);
  before_cdf.decide(o);
  EXPECT_EQ(before_cdf.check_decision(banded_cdf), "stage 1: parallel_loops out of range");
  // The partial histograms are at root: a histogram computed per tile of the output would
  // compute all of them per tile.
  EXPECT_EQ(parallel_loops_refusal(graph->funcs[2].stages[1], 1, Placement::kAt),
            std::string("a reduction in parallel bands only in Funcs at root"));
}

// A Func the banded histogram reads may not be computed at its loops: the partial
// histograms run them, in Funcs of their own.
TEST(SearchSpace, NothingIsComputedAtTheLoopsOfAReductionInBands) {
  using namespace Halide;
  ImageParam in(UInt(8), 2, "in");
  Var x("x"), y("y"), i("i");
  RDom pixels(0, 256, 0, 128, "pixels");
  Func halved("halved"), hist("hist"), out("out");
  halved(x, y) = in(x, y) / 2;
  hist(i) = 0;
  hist(cast<int>(halved(pixels.x, pixels.y))) += 1;
  out(i) = hist(i);
  in.set_estimates({{0, 256}, {0, 128}});
  out.set_estimates({{0, 128}});
  const auto graph = graph_of(Pipeline(out));
  ASSERT_EQ(stable_func_name(graph->funcs[1].name), "hist");
  ScheduleState s(graph);
  FuncDecision o;
  o.placement = Placement::kRoot;
  o.stages = {StageTiling{{128}, {1}, 0}};
  s.decide(o);
  FuncDecision h;
  h.placement = Placement::kRoot;
  h.stages = {StageTiling{{128}, {1}, 0}, StageTiling{{}, {}, 1}};
  s.decide(h);
  for (int loop = 0; loop < 3; ++loop) {
    ASSERT_NE(s.compute_at_refusal({1, 1, loop}), nullptr) << loop;
    EXPECT_NE(std::string(s.compute_at_refusal({1, 1, loop})).find("parallel bands"),
              std::string::npos)
        << loop;
  }
}

// Storage may move out from the compute loop, but not past a parallel loop, and not at
// all for a Func that reads an input buffer.
TEST(SearchSpace, StoreOptionsStopAtTheFirstParallelLoop) {
  const auto graph = graph_of(testing::blur_chain_pipeline(1536, 2560));
  ScheduleState s(graph);
  FuncDecision sharp;  // y split in strips of 64 rows, strips in parallel
  sharp.placement = Placement::kRoot;
  sharp.stages = {StageTiling{{1536, 64}, {16, 1}, 1}};
  s.decide(sharp);
  const int next = s.num_decided();
  ASSERT_EQ(stable_func_name(graph->funcs[next].name), "blur_y");
  const auto &loops = s.bounds(0).loops[0];
  ASSERT_GE(loops.size(), 3u);
  ASSERT_TRUE(loops[0].parallel);
  const LoopRef innermost_outer{0, 0, static_cast<int>(loops.size()) - 2};
  const std::vector<LoopRef> stores = s.store_options(innermost_outer);
  ASSERT_EQ(stores.size(), static_cast<size_t>(innermost_outer.loop + 1));
  EXPECT_EQ(stores.front(), innermost_outer);
  EXPECT_EQ(stores.back(), (LoopRef{0, 0, 0})) << "the parallel strip loop, not root";
}

TEST(SearchSpace, StorageIsOfferedAtMostMaxStorageHoistLoopsOut) {
  const auto graph = graph_of(testing::blur_chain_pipeline(1536, 2560));
  ScheduleState s(graph);
  FuncDecision sharp;  // serial strips: loops y_o, y_m, x_m, x_i
  sharp.placement = Placement::kRoot;
  sharp.stages = {StageTiling{{1536, 64}, {16, 1}, 0}};
  s.decide(sharp);
  auto hoisted = [&](const SearchSpace &space) {
    int n = 0;
    for (const Step &c : space.children(s)) {
      if (c.placement != Placement::kAt || c.store_at == c.compute_at) continue;
      EXPECT_FALSE(c.store_at.is_root());
      EXPECT_EQ(c.store_at.loop, c.compute_at.loop - 1) << "one loop out, in sharp's nest";
      ++n;
    }
    return n;
  };
  EXPECT_GT(hoisted(space_for_tests()), 0);
  SearchSpaceOptions o = space_for_tests().options();
  o.max_storage_hoist = 0;
  EXPECT_EQ(hoisted(SearchSpace(o)), 0);
  // blur_y computed per row of a strip: stored per strip (one loop out) is offered, at
  // root (two out) is legal in the state but not offered.
  FuncDecision blur_y;
  blur_y.placement = Placement::kAt;
  blur_y.compute_at = {0, 0, 1};
  blur_y.store_at = {0, 0, 0};
  blur_y.stages = {StageTiling{{1536, 1}, {16, 1}, 0}};
  EXPECT_EQ(space_for_tests().pruned_because(s, blur_y), "");
  blur_y.store_at = LoopRef{};
  EXPECT_EQ(s.check_decision(blur_y), "") << "legal in the state";
  EXPECT_EQ(space_for_tests().pruned_because(s, blur_y),
            "storage more than 1 loop(s) outside the compute loop, or outside its loop nest, "
            "is not offered (max_storage_hoist)");
}

TEST(SearchSpace, BoundaryConditionsAndInputReadersAreUnsafeToSlide) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  std::map<std::string, bool> unsafe;
  for (const FuncNode &f : graph->funcs)
    unsafe[stable_func_name(f.name)] = f.stages[0].unsafe_to_slide;
  EXPECT_EQ(unsafe, (std::map<std::string, bool>{{"sharp", false},
                                                 {"blur_y", false},
                                                 {"blur_x", false},
                                                 {"repeat_edge", true},
                                                 {"lambda", false},
                                                 {"in_im", true}}));
}

TEST(SearchSpace, AFuncUnsafeToSlideIsStoredWhereItIsComputed) {
  const auto graph = graph_of(testing::blur_chain_pipeline(1536, 2560));
  ScheduleState s(graph);
  auto whole_at_root = [&] {  // legal for every Func here; pruning does not matter
    FuncDecision d;
    d.placement = Placement::kRoot;
    for (const StageNode &st : graph->funcs[s.num_decided()].stages) {
      const Region loops = st.loop_region(graph->funcs[s.num_decided()].root_region);
      StageTiling t;
      for (int v = 0; v < st.num_pure; ++v) {
        t.tile.push_back(loops[v].extent());
        t.inner.push_back(1);
      }
      d.stages.push_back(t);
    }
    return d;
  };
  FuncDecision sharp;  // serial strips: nothing else stops storage moving out
  sharp.placement = Placement::kRoot;
  sharp.stages = {StageTiling{{1536, 64}, {16, 1}, 0}};
  s.decide(sharp);
  const LoopRef strip_rows{0, 0, 1};
  ASSERT_FALSE(graph->funcs[s.num_decided()].stages[0].unsafe_to_slide);
  EXPECT_EQ(s.store_options(strip_rows).size(), 3u) << "y_m, y_o, root";
  while (!s.complete() && !graph->funcs[s.num_decided()].stages[0].unsafe_to_slide) {
    s.decide(whole_at_root());
  }
  ASSERT_FALSE(s.complete()) << "the blur chain reads its input through boundary-condition Funcs";
  EXPECT_EQ(s.store_options(strip_rows), (std::vector<LoopRef>{strip_rows}));
}

// Halide 14's sliding window computed a random pipeline's c += g(k, y) * g(x, k) wrong
// (every output point) with g stored one loop outside its compute loop in c's update;
// g read through one index shape, or two Funcs, slide right.
TEST(SearchSpace, AFuncReadAtTwoIndexShapesIsStoredWhereItIsComputed) {
  for (bool same : {true, false}) {
    SCOPED_TRACE(same ? "g x g" : "g x h");
    const auto graph = graph_of(testing::product_pipeline(same));
    const StageNode &update = graph->funcs[0].stages[1];
    ASSERT_EQ(stable_func_name(graph->funcs[0].name), "c");
    EXPECT_EQ(update.reads_in_several_shapes.size(), same ? 1u : 0u);
    ScheduleState s(graph);
    FuncDecision c;  // serial tiles of 16 x 16 in both stages
    c.placement = Placement::kRoot;
    c.stages = {StageTiling{{16, 16}, {1, 1}, 0}, StageTiling{{16, 16}, {1, 1}, 0}};
    s.decide(c);
    const std::string next = stable_func_name(graph->funcs[s.num_decided()].name);
    ASSERT_TRUE(next == (same ? "g" : "h")) << next;  // g x h decides h first (call order)
    const LoopRef tile_columns{0, 1, 1};              // inside the tile rows of c's update
    EXPECT_EQ(s.store_options(tile_columns).size(), same ? 1u : 3u);
  }
}

TEST(SearchSpace, OvercomputeReadsPastInputsFollowsUnclampedIndices) {
  auto hazards = [](Halide::Pipeline p) {
    std::map<std::string, bool> h;
    const auto graph = graph_of(p);
    for (const FuncNode &f : graph->funcs)
      h[stable_func_name(f.name)] = f.overcompute_reads_past_inputs;
    return h;
  };
  // The blur chain reads its input through repeat_edge's clamp: the wrapper Func it clamps
  // (lambda) reads the input as it is, repeat_edge and its consumers do not.
  EXPECT_EQ(hazards(testing::blur_chain_pipeline()),
            (std::map<std::string, bool>{{"sharp", false},
                                         {"blur_y", false},
                                         {"blur_x", false},
                                         {"repeat_edge", false},
                                         {"lambda", true},
                                         {"in_im", true}}));
  // The convolution reads its weights and bias as they are: growing it grows those reads.
  EXPECT_EQ(hazards(testing::conv_relu_pipeline()),
            (std::map<std::string, bool>{{"relu", true},
                                         {"conv", true},
                                         {"constant_exterior", false},
                                         {"repeat_edge", false},
                                         {"lambda", true},
                                         {"in_im", true},
                                         {"weights_im", true},
                                         {"bias_im", true}}));
}

// Rounding a split's inner tail up computes past the Func's region in that dimension only:
// what that reads is followed dimension by dimension, and only reads of an input past its
// estimated region forbid it.
TEST(SearchSpace, RoundUpReadsPastInputsFollowsOneDimension) {
  auto hazards = [](Halide::Pipeline p) {
    std::map<std::string, std::vector<bool>> h;
    const auto graph = graph_of(p);
    for (const FuncNode &f : graph->funcs)
      h[stable_func_name(f.name)] = f.round_up_reads_past_inputs;
    return h;
  };
  using Dims = std::vector<bool>;
  EXPECT_EQ(hazards(testing::blur_chain_pipeline()),
            (std::map<std::string, Dims>{{"sharp", {false, false}},
                                         {"blur_y", {false, false}},
                                         {"blur_x", {false, false}},
                                         {"repeat_edge", {false, false}},
                                         {"lambda", {true, true}},
                                         {"in_im", {true, true}}}));
  // conv(co, x, y) reads weights(co, ...) and bias(co) as they are, and its input through
  // zero padding: rounded up in x or y it reads nothing new of an input, in co it does.
  // (overcompute_reads_past_inputs, every dimension at once, says conv is unsafe.)
  EXPECT_EQ(hazards(testing::conv_relu_pipeline()),
            (std::map<std::string, Dims>{{"relu", {true, false, false}},
                                         {"conv", {true, false, false}},
                                         {"constant_exterior", {false, false, false}},
                                         {"repeat_edge", {false, false, false}},
                                         {"lambda", {true, true, true}},
                                         {"in_im", {true, true, true}},
                                         {"weights_im", {true, true, true, true}},
                                         {"bias_im", {true}}}));
  // half_copy reads the output half, which Halide computes over its buffer alone: rounded
  // up, or computed over more than its region, the copy reads half past that buffer. (Both
  // clamped copies are named repeat_edge.)
  EXPECT_EQ(hazards(testing::chained_outputs_pipeline()),
            (std::map<std::string, Dims>{{"quarter", {false, false}},
                                         {"repeat_edge", {false, false}},
                                         {"half_copy", {true, true}},
                                         {"half", {false, false}},
                                         {"lambda", {true, true}},
                                         {"in_im", {true, true}}}));
  const auto chained = graph_of(testing::chained_outputs_pipeline());
  for (const FuncNode &f : chained->funcs) {
    if (stable_func_name(f.name) == "half_copy") {
      EXPECT_TRUE(f.overcompute_reads_past_inputs);
    }
  }
  const auto graph = graph_of(testing::conv_relu_pipeline());
  EXPECT_FALSE(graph->funcs[0].may_round_up(1)) << "an output's buffer is the caller's";
  EXPECT_TRUE(graph->funcs[1].may_round_up(1));
  EXPECT_FALSE(graph->funcs[1].may_round_up(0));
}

// Halide 14 computes a Func computed inside a guarded split's partial last tile for the
// whole tile: conv inside a 6-channel tile of a guarded 16-channel Func reads bias[12..17]
// (StateBounds.ConvolutionMatchesHalide: "Input buffer bias is accessed at 17, which is
// beyond the max (15)"). relu is the output, whose ragged tiles shift inwards
// (StageNode::shifts_tails): every tile of 6 channels is whole and inside the 16, so conv
// may be computed per tile.
TEST(SearchSpace, AFuncReadingInputsMayBeComputedInsideAnOutputsShiftedTiles) {
  const auto graph = graph_of(testing::conv_relu_pipeline());
  ASSERT_EQ(stable_func_name(graph->funcs[1].name), "conv");
  ASSERT_TRUE(graph->funcs[0].stages[0].shifts_tails);
  ASSERT_FALSE(graph->funcs[1].stages[0].shifts_tails);
  auto relu_tiled_by = [&](int64_t channels) {
    ScheduleState s(graph);
    FuncDecision relu;  // loops co_o, y_m, x_m, co_m over 16 x 24 x 16
    relu.placement = Placement::kRoot;
    relu.stages = {StageTiling{{channels, 24, 16}, {1, 1, 1}, 0}};
    s.decide(relu);
    return s;
  };
  FuncDecision conv;
  conv.placement = Placement::kAt;
  conv.compute_at = conv.store_at = {0, 0, 0};  // per tile of channels
  conv.stages.assign(2, StageTiling{{16, 24, 16}, {1, 1, 1}, 0});
  for (int64_t channels : {6, 8}) {
    const ScheduleState s = relu_tiled_by(channels);
    const Loop &tiles = s.bounds(0).loops[0][0];
    EXPECT_FALSE(tiles.has_tail) << channels;
    EXPECT_EQ(tiles.shifted_tail, channels == 6);
    EXPECT_EQ(s.check_decision(conv), "") << channels;
    int offered = 0;
    for (const Step &c : space_for_tests().children(s)) offered += c.placement == Placement::kAt;
    EXPECT_GT(offered, 0) << channels;
  }
}

// A Func computed per full tile of the output covers the same extents in every
// realization, so its own full tiles stay full there too: a Func it reads at following
// indices may be computed inside its split loops (nl_means' expert computes its patch
// distances that way), unless a tile around it is partial or the reads between change
// extents with the tile's offset.
TEST(SearchSpace, AFuncReadingInputsMayBeComputedInsideTheSplitLoopsOfFullTiles) {
  auto graph_reading_acc = [](bool by_thirds) {
    using namespace Halide;
    ImageParam in(Float(32), 2, "in");  // no boundary condition: over-compute reads past it
    Var x("x"), y("y");
    Func blur_x("blur_x"), acc("acc"), out("out");
    blur_x(x, y) = in(x, y) + in(x + 1, y);
    acc(x, y) = blur_x(x, y) + blur_x(x + 1, y);
    out(x, y) = (by_thirds ? acc(x / 3, y) : acc(x, y)) * 2.0f;
    in.set_estimates({{0, 66}, {0, 32}});
    out.set_estimates({{0, 64}, {0, 32}});
    return graph_of(Pipeline(out));
  };
  // out in tiles of `tile` columns; acc per tile, its columns in inner blocks of 8.
  auto out_in_tiles = [](std::shared_ptr<const PipelineGraph> graph, int64_t tile) {
    ScheduleState s(graph);
    FuncDecision out;
    out.placement = Placement::kRoot;
    out.stages = {StageTiling{{tile, 32}, {1, 1}, 1}};
    s.decide(out);
    return s;
  };
  FuncDecision acc;
  acc.placement = Placement::kAt;
  acc.compute_at = acc.store_at = {0, 0, 0};
  acc.stages = {StageTiling{{1 << 20, 32}, {8, 1}, 0}};
  const auto graph = graph_reading_acc(false);
  ASSERT_EQ(stable_func_name(graph->funcs[1].name), "acc");
  ASSERT_TRUE(graph->funcs[2].overcompute_reads_past_inputs);
  ASSERT_TRUE(graph->funcs[1].widens[2]);

  ScheduleState full = out_in_tiles(graph, 16);
  full.decide(acc);
  EXPECT_EQ(full.bounds(1).realizations, 4);
  ASSERT_TRUE(full.bounds(1).loops[0][1].split);  // acc's columns: 2 blocks of 8 per tile
  EXPECT_TRUE(full.same_size_realizations(1));
  EXPECT_EQ(full.compute_at_refusal({1, 0, 0}), nullptr);
  int offered = 0;
  for (const Step &c : space_for_tests().children(full)) {
    offered += c.placement == Placement::kAt && c.compute_at.func == 1;
  }
  EXPECT_GT(offered, 0);

  // 64 columns in tiles of 24 leave a last tile of 16, which the output shifts inwards to
  // a whole one: acc may still be computed per tile.
  EXPECT_EQ(out_in_tiles(graph, 24).check_decision(acc), "");
  // acc at root in guarded tiles of 24 columns: blur_x, which reads the input, may not be
  // computed per tile, where Halide would compute it for the whole last tile.
  const char *partial_tile =
      "compute_at a loop nest with a partial last tile, where Halide would compute it for the "
      "whole tile and read an input past its bounds";
  ScheduleState guarded = out_in_tiles(graph, 16);
  FuncDecision acc_at_root;
  acc_at_root.placement = Placement::kRoot;
  acc_at_root.stages = {StageTiling{{24, 32}, {1, 1}, 0}};
  guarded.decide(acc_at_root);
  ASSERT_TRUE(guarded.bounds(1).loops[0][0].has_tail);
  FuncDecision blur_x = acc;
  blur_x.compute_at = blur_x.store_at = {1, 0, 0};
  EXPECT_EQ(guarded.check_decision(blur_x), partial_tile);

  // Read as acc(x / 3), acc's realizations may differ in extents: tiles of 5 columns of
  // out read 2 or 3 of acc's.
  const auto thirds = graph_reading_acc(true);
  ASSERT_FALSE(thirds->funcs[1].reads_keep_size);
  ScheduleState resampled = out_in_tiles(thirds, 16);
  resampled.decide(acc);
  EXPECT_FALSE(resampled.same_size_realizations(1));
  EXPECT_STREQ(resampled.compute_at_refusal({1, 0, 0}), partial_tile);
}

// The same partial tiles are harmless where the tile's Func reads through a clamp: the
// blur chain's input wrapper computed per tile of repeat_edge reads only clamped points.
TEST(SearchSpace, APartialTileOfAClampingFuncDoesNotWidenWhatItReads) {
  const auto graph = graph_of(testing::blur_chain_pipeline());
  ScheduleState s(graph);
  while (stable_func_name(graph->funcs[s.num_decided()].name) != "lambda") {
    const FuncNode &f = graph->funcs[s.num_decided()];
    const Region loops = f.stages[0].loop_region(f.root_region);
    FuncDecision d;  // at root, a partial last tile in every variable
    d.placement = Placement::kRoot;
    d.stages = {StageTiling{{loops[0].extent() - 1, loops[1].extent() - 1}, {1, 1}, 0}};
    s.decide(d);
  }
  const int repeat_edge = s.num_decided() - 1;
  ASSERT_EQ(stable_func_name(graph->funcs[repeat_edge].name), "repeat_edge");
  ASSERT_TRUE(graph->funcs[s.num_decided()].overcompute_reads_past_inputs);
  ASSERT_FALSE(graph->funcs[repeat_edge].widens[s.num_decided()]);
  ASSERT_TRUE(s.bounds(repeat_edge).loops[0][0].has_tail);
  EXPECT_EQ(s.compute_at_refusal({repeat_edge, 0, 0}), nullptr);
  EXPECT_EQ(s.compute_at_refusal({repeat_edge, 0, 1}), nullptr);
}

}  // namespace
}  // namespace protuner
