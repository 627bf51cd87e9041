// The correctness property of the schedule space: every complete schedule the space can
// produce computes exactly the output of the unscheduled pipeline. For each test pipeline,
// 50 random rollouts (fixed seeds) are applied, JIT-compiled with strict_float and compared
// bit for bit with Halide's default schedule, and none may store past a buffer it allocates.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "common/host_target.h"
#include "common/pipeline_io.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_directives.h"
#include "common/schedule/schedule_json.h"
#include "searcher/seeds/blocked_schedule.h"
#include "searcher/seeds/fallback_schedule.h"
#include "searcher/seeds/sliced_schedule.h"
#include "searcher/seeds/strip_schedule.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/guarded_allocations.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

constexpr int kSchedulesPerPipeline = 50;
constexpr uint64_t kInputSeed = 11;

Halide::Target strict_host() { return host_target().with_feature(Halide::Target::StrictFloat); }

// Every output of `p`, in the pipeline's order.
std::vector<Halide::Buffer<>> run_all(Halide::Pipeline &p) {
  bind_random_inputs(p, kInputSeed);
  Halide::Realization out = allocate_estimated_outputs(p);
  p.realize(out, strict_host());
  std::vector<Halide::Buffer<>> buffers;
  for (size_t i = 0; i < out.size(); ++i) buffers.push_back(out[i]);
  return buffers;
}

Halide::Buffer<> run(Halide::Pipeline &p) { return run_all(p)[0]; }

// The first bit of an output that differs from `expected`, or the first store past an
// allocation.
std::optional<std::string> check_all(const std::vector<Halide::Buffer<>> &expected,
                                     Halide::Pipeline &p) {
  testing::GuardedAllocations::install(p);
  const std::vector<Halide::Buffer<>> got = run_all(p);
  std::optional<std::string> diff;
  for (size_t i = 0; i < expected.size() && !diff; ++i) {
    diff = first_bitwise_difference(expected[i], got[i]);
    if (diff && expected.size() > 1) diff = "output " + std::to_string(i) + ": " + *diff;
  }
  const std::string overrun = testing::GuardedAllocations::take_overrun();
  if (!overrun.empty()) diff = (diff ? *diff + "; " : std::string()) + overrun;
  return diff;
}

std::optional<std::string> check(const Halide::Buffer<> &expected, Halide::Pipeline &p) {
  return check_all({expected}, p);
}

// `p` lowered for the strict host target, as Halide's text statement.
std::string lowered_stmt(Halide::Pipeline &p) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("protuner_lowered_" + std::to_string(::getpid()) + ".stmt");
  p.compile_to_lowered_stmt(file.string(), p.infer_arguments(), Halide::Text, strict_host());
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(file);
  return text.str();
}

// Runs `p`, scheduled by hand as the space must not, and expects Halide 14 to require its
// input out of bounds; `then` says what may change once it no longer does.
void expect_input_read_out_of_bounds(Halide::Pipeline &p, const std::string &then) {
  try {
    run(p);
    ADD_FAILURE() << "Halide 14 no longer reads the input out of bounds: " << then;
  } catch (const Halide::Error &e) {
    EXPECT_NE(std::string(e.what()).find("is accessed at"), std::string::npos) << e.what();
  }
}

// The index of the Func named `name` in `g` (failing the test when there is none).
int index_of(const std::shared_ptr<const PipelineGraph> &g, const std::string &name) {
  for (size_t f = 0; f < g->funcs.size(); ++f) {
    if (stable_func_name(g->funcs[f].name) == name) return static_cast<int>(f);
  }
  ADD_FAILURE() << "no Func " << name;
  return 0;
}

// Inlines every Func `state` has not decided yet.
void inline_the_rest(ScheduleState &state) {
  FuncDecision inlined;
  inlined.placement = Placement::kInline;
  while (!state.complete()) state.decide(inlined);
}

// How many of the schedules checked ran some update's reduction outside its tile
// (StageTiling::reduction_outside), how many unrolled one (unroll_reduction) and how many
// ran one in vector lanes (reduction_lanes), so tests of reductions can require each to be
// covered.
struct ReductionOrders {
  int outside = 0, unrolled = 0, lanes = 0;
};

// Checks kSchedulesPerPipeline random schedules.
ReductionOrders check_random_schedules(const std::function<Halide::Pipeline()> &build,
                                       uint64_t seed) {
  Halide::Pipeline reference = build();
  const std::vector<Halide::Buffer<>> expected = run_all(reference);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const SearchSpace space(SearchSpaceOptions::for_target(strict_host()));
  std::mt19937_64 rng(seed);
  ReductionOrders seen;
  for (int i = 0; i < kSchedulesPerPipeline; ++i) {
    ScheduleState state(graph);
    EXPECT_TRUE(space.random_rollout(state, rng)) << "rollout " << i << " hit a dead end";
    if (!state.complete()) return seen;
    bool outside = false, unrolled = false, lanes = false;
    for (int f = 0; f < state.num_decided(); ++f) {
      for (const StageTiling &t : state.decision(f).stages) {
        outside = outside || t.reduction_outside;
        unrolled = unrolled || t.unroll_reduction;
        lanes = lanes || t.reduction_lanes > 0;
      }
    }
    seen.outside += outside;
    seen.unrolled += unrolled;
    seen.lanes += lanes;
    Halide::Pipeline p = build();
    std::optional<std::string> diff;
    try {
      apply_schedule(state, p);
      diff = check_all(expected, p);
    } catch (const Halide::Error &e) {
      diff = std::string("Halide refused it: ") + e.what();
    }
    EXPECT_EQ(diff, std::nullopt) << "schedule " << i << ":\n" << schedule_source(state, "failing");
    if (diff) return seen;
  }
  return seen;
}

TEST(RandomSchedules, BlurChainComputesTheSameBits) {
  check_random_schedules([] { return testing::blur_chain_pipeline(); }, 1);
}

TEST(RandomSchedules, BilateralGridComputesTheSameBits) {
  check_random_schedules([] { return testing::bilateral_grid_pipeline(); }, 2);
}

TEST(RandomSchedules, ConvolutionWithReductionComputesTheSameBits) {
  // Its reduction over 8 input channels is a constant the algorithm fixes: unrolled too.
  const ReductionOrders seen = check_random_schedules([] { return testing::conv_relu_pipeline(); }, 3);
  EXPECT_GT(seen.outside, 0) << "no schedule ran the reduction outside its tile";
  EXPECT_GT(seen.unrolled, 0) << "no schedule unrolled the reduction";
}

TEST(RandomSchedules, MatrixMultiplyComputesTheSameBits) {
  // 64 points of k: too many to unroll; a float sum, which lanes would add up in another
  // order, never in lanes.
  const ReductionOrders seen = check_random_schedules([] { return testing::matmul_pipeline(); }, 4);
  EXPECT_GT(seen.outside, 0) << "no schedule ran the reduction outside its tile";
  EXPECT_EQ(seen.unrolled, 0);
  EXPECT_EQ(seen.lanes, 0);
}

// An update whose innermost reduction loop has a constant extent (conv_relu's 8 input
// channels) may unroll it: Halide's statement then has no loop over it, and the output is
// the same. One whose extent Halide learns at run time is never unrolled (Halide would
// refuse: "Can only unroll for loops over a constant extent").
TEST(AppliedSchedules, OnlyAConstantReductionUnrollsAndThenHasNoLoop) {
  Halide::Pipeline reference = testing::conv_relu_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const int conv = index_of(graph, "conv");
  EXPECT_TRUE(graph->funcs[conv].stages[1].constant_reduction_extent);
  const SearchSpace space(SearchSpaceOptions::for_target(strict_host()));
  std::mt19937_64 rng(21);
  std::optional<ScheduleState> unrolled;
  for (int i = 0; i < 200 && !unrolled; ++i) {
    ScheduleState state(graph);
    ASSERT_TRUE(space.random_rollout(state, rng));
    if (state.decision(conv).placement != Placement::kInline &&
        state.decision(conv).stages[1].unroll_reduction) {
      unrolled = state;
    }
  }
  ASSERT_TRUE(unrolled) << "200 rollouts and no unrolled reduction";
  Halide::Pipeline p = testing::conv_relu_pipeline();
  apply_schedule(*unrolled, p);
  const std::string source = schedule_source(*unrolled, "unrolled");
  EXPECT_NE(source.find(".unroll(RVar("), std::string::npos) << source;
  EXPECT_EQ(lowered_stmt(p).find("for (conv.s1.r$x"), std::string::npos) << source;
  EXPECT_EQ(check(expected, p), std::nullopt) << source;

  // The same convolution over as many channels as its input has: a run-time extent.
  const auto runtime_extent = [] {
    using namespace Halide;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    RDom r(0, in.dim(1).extent(), "r");
    Func sums("sums");
    sums(x, y) = 0.0f;
    sums(x, y) += in(x, r);
    sums.set_estimates({{0, 64}, {0, 8}});
    in.set_estimates({{0, 64}, {0, 8}});
    return Pipeline(sums);
  };
  Halide::Pipeline runtime = runtime_extent();
  auto runtime_graph = std::make_shared<const PipelineGraph>(analyze_pipeline(runtime));
  EXPECT_FALSE(runtime_graph->funcs[0].stages[1].constant_reduction_extent);
  for (int i = 0; i < 100; ++i) {
    ScheduleState state(runtime_graph);
    ASSERT_TRUE(space.random_rollout(state, rng));
    EXPECT_FALSE(state.decision(0).stages[1].unroll_reduction) << schedule_source(state, "s");
  }
}

// Associative reductions of a whole plane per channel: besides their plain orders, they
// run in vector lanes (partial reductions rfactored into a vector per channel, merged).
TEST(RandomSchedules, PerPlaneStatisticsComputeTheSameBits) {
  const ReductionOrders seen =
      check_random_schedules([] { return testing::plane_stats_pipeline(); }, 13);
  EXPECT_GT(seen.lanes, 0) << "no schedule ran a reduction in vector lanes";
}

// A reduction in lanes is what image_stats' expert writes: the partial reductions, a
// vector of accumulators, computed per channel inside the merge's loop; Halide's statement
// has their Func (rfactor's "_intm"), vectorized, and the output is the same.
TEST(AppliedSchedules, AReductionInLanesComputesAVectorOfPartialsPerPoint) {
  Halide::Pipeline reference = testing::plane_stats_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const int sums = index_of(graph, "sums");
  ASSERT_TRUE(graph->funcs[sums].stages[1].lane_rfactorable);
  ScheduleState state(graph);
  while (state.num_decided() < sums) {
    state.decide(fallback_decision(graph->funcs[state.num_decided()], SearchSpaceOptions{}));
  }
  const ScheduleState before = state;
  FuncDecision d;
  d.placement = Placement::kRoot;
  d.stages = {StageTiling{{3}, {1}, 0}, StageTiling{{1}, {1}, 1}};
  d.stages[1].reduction_lanes = 32;  // 256 columns: 8 vectors of 32 lanes
  ASSERT_EQ(state.check_decision(d), "");
  state.decide(d);
  while (!state.complete()) {
    state.decide(fallback_decision(graph->funcs[state.num_decided()], SearchSpaceOptions{}));
  }
  Halide::Pipeline p = testing::plane_stats_pipeline();
  apply_schedule(state, p);
  const std::string source = schedule_source(state, "lanes");
  EXPECT_NE(source.find(".rfactor("), std::string::npos) << source;
  const std::string stmt = lowered_stmt(p);
  EXPECT_NE(stmt.find("_intm"), std::string::npos) << stmt;
  EXPECT_NE(stmt.find("x32"), std::string::npos) << "no 32-lane vector:\n" << source;
  EXPECT_EQ(check(expected, p), std::nullopt) << source;
  // What a reduction in lanes needs, refused by name.
  FuncDecision odd = d;
  odd.stages[1].reduction_lanes = 48;  // 256 is no multiple of 48
  EXPECT_NE(before.check_decision(odd).find("multiple"), std::string::npos);
  FuncDecision tiled = d;
  tiled.stages[1].inner = {2};
  tiled.stages[1].tile = {2};
  EXPECT_NE(before.check_decision(tiled).find("inner tile"), std::string::npos);
}

// An RDom without a name takes a process-wide counter ("r156$x" here, "r161$x" in the next
// instance): schedules name reduction loops by position, so they apply to any instance.
Halide::Pipeline unnamed_reduction_pipeline() {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func sums("sums"), out("out");
  RDom r(0, 16, 0, 2);
  sums(x, y) = 0.0f;
  sums(x, y) += in(x + r.x, y + r.y);
  out(x, y) = sums(x, y) * 0.5f;
  in.set_estimates({{0, 79}, {0, 49}});
  out.set_estimates({{0, 64}, {0, 48}});
  return Pipeline(out);
}

TEST(RandomSchedules, UnnamedReductionDomainsComputeTheSameBits) {
  check_random_schedules(unnamed_reduction_pipeline, 6);
}

TEST(RandomSchedules, PyramidComputesTheSameBits) {
  check_random_schedules([] { return testing::pyramid_pipeline(); }, 5);
}

// Every output is compared; the first is also read by the second through a copy.
TEST(RandomSchedules, ChainedOutputsComputeTheSameBits) {
  check_random_schedules([] { return testing::chained_outputs_pipeline(); }, 12);
}

// A copy of the input read at clamped indices: the shape of every generator's input
// wrapper (`input_im`) under a boundary condition, as the random pipelines have it.
Halide::Pipeline input_copy_pipeline(Halide::Func *copy_out = nullptr) {
  using namespace Halide;
  ImageParam in(Float(32), 3, "in");
  Var x("x"), y("y"), c("c");
  Func copy("copy"), out("out");
  if (copy_out) *copy_out = copy;
  copy(x, y, c) = in(x, y, c);
  out(x, y, c) = copy(clamp(x, 0, in.width() - 1), clamp(y, 0, in.height() - 1),
                      clamp(c, 0, in.channels() - 1)) *
                 0.5f;
  in.set_estimates({{0, 96}, {0, 64}, {0, 3}});
  out.set_estimates({{0, 96}, {0, 64}, {0, 3}});
  return Pipeline(out);
}

TEST(RandomSchedules, ACopyOfTheInputAtClampedIndicesComputesTheSameBits) {
  check_random_schedules([] { return input_copy_pipeline(); }, 8);
}

// Random pipelines' clamped input copies, fused over their loops, read channels far
// outside the input's 3: Halide 14 bounds the outermost of fused loops over clamped
// regions loosely, and the copy then requires the input far outside what it computes.
// The space never fuses the
// loops of a Func whose region comes through a clamp and whose over-compute reaches an
// input.
TEST(AppliedSchedules, FusedLoopsOfAnInputCopyAreNotOffered) {
  using namespace Halide;
  Func in_copy;
  Pipeline fused = input_copy_pipeline(&in_copy);
  Var x("x"), y("y"), c("c"), xt, xo, xm, xi, yt, yo, ym, yi, t, t2;
  in_copy.compute_root()
      .split(x, xt, xi, 32, TailStrategy::GuardWithIf)
      .split(xt, xo, xm, 3, TailStrategy::GuardWithIf)
      .split(y, yt, yi, 2, TailStrategy::GuardWithIf)
      .split(yt, yo, ym, 6, TailStrategy::GuardWithIf)
      .reorder(xi, yi, xm, ym, xo, yo, c)
      .fuse(yo, c, t)
      .fuse(xo, t, t2)
      .parallel(t2);
  expect_input_read_out_of_bounds(fused, "the rule may go");

  Func copy;  // Halide names a second "copy" "copy$1"
  Pipeline unscheduled = input_copy_pipeline(&copy);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(unscheduled));
  const int f = graph->find(copy.name());
  ASSERT_GE(f, 0);
  EXPECT_FALSE(graph->funcs[f].may_fuse_parallel_loops());
  EXPECT_TRUE(graph->funcs[0].may_fuse_parallel_loops());  // the output: its own extents
  // A matrix multiply reads its inputs unclamped too, but over the output's own extents,
  // which Halide bounds tightly when fused.
  Pipeline matmul = testing::matmul_pipeline();
  EXPECT_TRUE(analyze_pipeline(matmul).funcs[0].may_fuse_parallel_loops());
  ScheduleState state(graph);
  state.decide(fallback_decision(graph->funcs[0], SearchSpaceOptions{}));
  ASSERT_EQ(state.num_decided(), f);
  FuncDecision d;
  d.placement = Placement::kRoot;
  d.stages = {StageTiling{{96, 12, 1}, {32, 2, 1}, 3}};
  EXPECT_NE(state.check_decision(d).find("no fused parallel loops"), std::string::npos);
  d.stages[0].parallel_loops = 1;
  EXPECT_EQ(state.check_decision(d), "");

  // Random rollouts never fuse its loops, never walk into a dead end for it, and at root
  // still run it in parallel (rule 2: 96 x 64 x 3 points), from one loop.
  const SearchSpace space(SearchSpaceOptions::for_target(strict_host()));
  std::mt19937_64 rng(9);
  int at_root = 0;
  for (int i = 0; i < 300; ++i) {
    ScheduleState rollout(graph);
    ASSERT_TRUE(space.random_rollout(rollout, rng)) << "rollout " << i;
    const FuncDecision &copy_decision = rollout.decision(f);
    if (copy_decision.placement != Placement::kRoot) continue;
    ++at_root;
    EXPECT_EQ(copy_decision.stages[0].parallel_loops, 1) << schedule_to_json(rollout);
  }
  EXPECT_GT(at_root, 20);
}

// The input's own Func computed inside a copy of the input read at clamped indices, that
// copy computed per tile of the output. Halide 14 bounds the copy's loops with min/max
// extents it cannot prove positive and requires the input up to about twice its width.
// With the copy at root it is right.
TEST(AppliedSchedules, AnInputIsNotCopiedInsideAClampedCopyComputedPerTile) {
  using namespace Halide;
  Func by_hand_copy;
  Pipeline by_hand = input_copy_pipeline(&by_hand_copy);
  Func out = by_hand.outputs()[0];
  Var x("x"), y("y"), c("c"), xo, xm, yt, yi, yo, ym, cm, ci;
  out.compute_root()
      .split(x, xo, xm, 4, TailStrategy::GuardWithIf)
      .split(y, yt, yi, 3, TailStrategy::GuardWithIf)
      .split(yt, yo, ym, 8, TailStrategy::GuardWithIf)
      .split(c, cm, ci, 3, TailStrategy::GuardWithIf)
      .reorder(yi, ci, xm, ym, cm, xo, yo)
      .parallel(yo);
  by_hand_copy.compute_at(out, ym);
  std::vector<Func> inputs;
  for (const auto &[name, fn] : Internal::build_environment({out.function()})) {
    if (name != out.name() && name != by_hand_copy.name()) inputs.emplace_back(fn);
  }
  ASSERT_EQ(inputs.size(), 1u);
  inputs[0].compute_at(by_hand_copy, c);
  expect_input_read_out_of_bounds(by_hand, "the rule against it may go");

  Func copy;
  Pipeline unscheduled = input_copy_pipeline(&copy);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(unscheduled));
  const int f = graph->find(copy.name());
  ASSERT_EQ(f, 1);
  ASSERT_TRUE(graph->funcs[f].region_from_clamps);
  ASSERT_TRUE(graph->funcs[2].overcompute_reads_past_inputs);
  const StageTiling whole{{1 << 20, 1 << 20, 1 << 20}, {1, 1, 1}, 0};
  for (bool copy_at_root : {false, true}) {
    ScheduleState state(graph);
    FuncDecision d;
    d.stages = {StageTiling{{4, 24, 3}, {1, 3, 1}, 1}};
    state.decide(d);
    d.stages = {whole};
    if (!copy_at_root) {
      d.placement = Placement::kAt;
      d.compute_at = d.store_at = LoopRef{0, 0, 1};
    }
    ASSERT_EQ(state.check_decision(d), "");
    state.decide(d);
    d.placement = Placement::kAt;
    d.compute_at = d.store_at = LoopRef{1, 0, 0};  // the copy's channel loop
    const std::string why = state.check_decision(d);
    if (!copy_at_root) {
      EXPECT_NE(why.find("clamps"), std::string::npos) << why;
      continue;
    }
    ASSERT_EQ(why, "");
    state.decide(d);
    Pipeline reference = input_copy_pipeline();
    const Buffer<> expected = run(reference);
    Pipeline p = input_copy_pipeline();
    apply_schedule(state, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "copy_at_root");
  }
}

// unsharp's shape: the output reads a copy of the input as itself, and a blur reads it
// through a second copy (a generator's repeat_edge of an input buffer wraps it in a Func
// of its own) and repeat_edge's clamp, bounded by the input's own extents. The copy's
// region per tile of the output is smaller at the image's edges.
Halide::Pipeline clamped_and_direct_copy_pipeline(Halide::Func *copy_out = nullptr) {
  using namespace Halide;
  ImageParam in(Float(32), 3, "in");
  Var x("x"), y("y"), c("c");
  Func copy("copy"), wrapper("wrapper"), gray("gray"), blur("blur"), out("out");
  if (copy_out) *copy_out = copy;
  copy(x, y, c) = in(x, y, c);
  wrapper(x, y, c) = copy(x, y, c);
  Func edge = BoundaryConditions::repeat_edge(wrapper, {{0, in.width()}, {0, in.height()}});
  gray(x, y) = edge(x, y, 0) + edge(x, y, 1) + edge(x, y, 2);
  blur(x, y) = gray(x, y - 4) + gray(x, y) + gray(x, y + 4);
  out(x, y, c) = blur(x, y) * copy(x, y, c);
  in.set_estimates({{0, 96}, {0, 96}, {0, 3}});
  out.set_estimates({{0, 96}, {0, 96}, {0, 3}});
  return Pipeline(out);
}

// unsharp's input copy (its reads reach rows far above the image otherwise): the copy
// computed per 32-row tile of the output, its rows split in shifted tiles of tiles. Its
// region there comes through the clamp: 40 rows inside the image, 36 at its edges (the
// space sized it by the first tile), and Halide 14 bounds the shifted tiles' positions over all of the output's tiles by
// interval arithmetic, losing how the region's extent and position move together. Read as
// itself by a reader whose own region varies, the copy's splits stay guarded
// (FuncNode::reads_keep_size holds only where it holds for every reader).
TEST(AppliedSchedules, ACopyReadThroughAClampDoesNotShiftInwards) {
  using namespace Halide;
  Func by_hand_copy;
  Pipeline by_hand = clamped_and_direct_copy_pipeline(&by_hand_copy);
  Func out = by_hand.outputs()[0];
  Var x("x"), y("y"), c("c"), yo, yi, yt, ym, yto;
  out.compute_root().split(y, yo, yi, 32, TailStrategy::ShiftInwards).reorder(x, yi, c, yo);
  by_hand_copy.compute_at(out, yo)
      .split(y, yt, yi, 2, TailStrategy::ShiftInwards)
      .split(yt, yto, ym, 2, TailStrategy::ShiftInwards);
  for (const auto &[name, fn] : Internal::build_environment({out.function()})) {
    const std::string stable = stable_func_name(name);
    if (stable == "gray" || stable == "blur") Func(fn).compute_at(out, yo);
  }
  expect_input_read_out_of_bounds(by_hand, "the copy's splits may shift inwards again");

  Func copy;
  Pipeline unscheduled = clamped_and_direct_copy_pipeline(&copy);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(unscheduled));
  const int f = graph->find(copy.name());
  ASSERT_GE(f, 0);
  EXPECT_FALSE(graph->funcs[f].reads_keep_size);
  EXPECT_TRUE(graph->funcs[0].reads_keep_size);  // the output and the blur keep sizes
  for (const FuncNode &node : graph->funcs) {
    if (stable_func_name(node.name) == "blur") {
      EXPECT_TRUE(node.reads_keep_size);
    }
  }

  // The output in parallel tiles of 32 rows, everything else computed in them.
  ScheduleState state(graph);
  FuncDecision d;
  d.stages = {StageTiling{{1 << 20, 32, 1 << 20}, {16, 1, 1}, 1}};
  state.decide(d);
  const std::vector<Loop> &loops = state.bounds(0).loops[0];
  ASSERT_TRUE(loops[0].parallel);
  while (!state.complete()) {
    FuncDecision at;
    at.placement = Placement::kAt;
    at.compute_at = at.store_at = LoopRef{0, 0, 0};
    const FuncNode &node = graph->funcs[state.num_decided()];
    const std::string name = stable_func_name(node.name);
    if (!node.inlinable() || state.num_decided() == f || name == "gray" || name == "blur") {
      at.stages.assign(node.stages.size(),
                       StageTiling{std::vector<int64_t>(node.dimensions, 1 << 20),
                                   std::vector<int64_t>(node.dimensions, 1), 0});
      if (state.num_decided() == f) at.stages[0].tile[1] = 4, at.stages[0].inner[1] = 2;
    } else {
      at.placement = Placement::kInline;
    }
    ASSERT_EQ(state.check_decision(at), "") << node.name;
    state.decide(at);
  }
  int copy_splits = 0;
  for (const Directive &dir : schedule_directives(state)) {
    if (dir.kind != Directive::Kind::kSplit || dir.func != f) continue;
    ++copy_splits;
    EXPECT_NE(dir.tail, Tail::kShiftInwards) << dir.vars[0];
  }
  EXPECT_EQ(copy_splits, 2);
  Pipeline reference = clamped_and_direct_copy_pipeline();
  const Buffer<> expected = run(reference);
  Pipeline p = clamped_and_direct_copy_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "copy_per_tile");
}

TEST(GuardedAllocations, ReportAStorePastTheEndWhenFreed) {
  Halide::Pipeline p = testing::blur_chain_pipeline();
  testing::GuardedAllocations::install(p);
  auto *bytes = static_cast<unsigned char *>(p.jit_handlers().custom_malloc(nullptr, 100));
  bytes[99] = 1;  // the last byte is its own
  p.jit_handlers().custom_free(nullptr, bytes);
  EXPECT_EQ(testing::GuardedAllocations::take_overrun(), "");
  bytes = static_cast<unsigned char *>(p.jit_handlers().custom_malloc(nullptr, 100));
  bytes[103] = 1;
  p.jit_handlers().custom_free(nullptr, bytes);
  EXPECT_EQ(testing::GuardedAllocations::take_overrun(),
            "a store 3 bytes past the end of a 100-byte allocation");
}

TEST(RandomSchedules, HistogramEqualizationComputesTheSameBits) {
  check_random_schedules([] { return testing::equalize_pipeline(); }, 7);
}

// The CDF's region is the constant 0..255. Tiles of 56 with vectorized inner tiles of 8
// leave a last tile of 32 points: split outer first, Halide 14 drops that tile's guard and
// stores cdf[256..279] (the guard survives when the region depends on the input's size).
TEST(AppliedSchedules, TheLastTileOfAConstantRegionStaysInsideItsBuffer) {
  Halide::Pipeline reference = testing::equalize_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(testing::equalize_pipeline());
  ScheduleState state(graph);
  FuncDecision root;  // out, and hist with its update serial
  root.stages = {StageTiling{{64, 48}, {1, 1}, 0}};
  state.decide(root);
  ASSERT_EQ(graph->funcs[1].name.rfind("cdf", 0), 0u) << graph->funcs[1].name;
  FuncDecision cdf;
  cdf.stages = {StageTiling{{56}, {8}, 1}, StageTiling{{}, {}, 0}};
  state.decide(cdf);
  FuncDecision hist;
  hist.stages = {StageTiling{{256}, {1}, 0}, StageTiling{{}, {}, 0}};
  state.decide(hist);
  FuncDecision input;  // the ImageParam's Func
  input.placement = Placement::kInline;
  state.decide(input);
  ASSERT_TRUE(state.complete());
  Halide::Pipeline p = testing::equalize_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt);
}

TEST(RandomSchedules, TwoPassScanComputesTheSameBits) {
  check_random_schedules([] { return testing::two_pass_scan_pipeline(); }, 10);
}

// iir_blur's scans (otherwise they read channel -23 of 3): a variable's own loop (a one-point
// tile) fused outside the outer loop of a variable split into outer, middle and inner
// loops. Halide 14 recovers the own variable by dividing the fused index by the other
// loop's extent, cannot prove that extent positive, and bounds the variable below its min
// by the fused extent. Fused the other way round, the own loop inside, it is bounded right.
TEST(AppliedSchedules, AVariablesOwnLoopFusesInsideTheOtherFusedLoops) {
  using namespace Halide;
  Func cols;
  Pipeline by_hand = testing::two_pass_scan_pipeline(64, 48, &cols);
  Var x("x"), c("c"), xt, xo, xm, xi, t;
  cols.compute_root()
      .update(0)
      .split(x, xt, xi, 8, TailStrategy::GuardWithIf)
      .split(xt, xo, xm, 2, TailStrategy::GuardWithIf)
      .fuse(xo, c, t)  // c's own loop outside: the order the loop nest has
      .parallel(t);
  expect_input_read_out_of_bounds(by_hand, "the reorder may go");

  Halide::Pipeline reference = testing::two_pass_scan_pipeline();
  const Halide::Buffer<> expected = run(reference);
  Func named;
  auto graph = testing::graph_of(testing::two_pass_scan_pipeline(64, 48, &named));
  const int f = graph->find(named.name());
  ASSERT_GE(f, 0);
  const StageTiling whole{{1 << 20, 1 << 20, 1 << 20}, {1, 1, 1}, 0};
  const StageTiling whole_update{{1 << 20, 1 << 20}, {1, 1}, 0};
  ScheduleState state(graph);
  while (!state.complete()) {
    const FuncNode &node = graph->funcs[state.num_decided()];
    FuncDecision d;
    if (state.num_decided() == f) {
      // 64 columns in outer loops of 16 (middle loops of 8-wide inner blocks), fused with
      // c's own loop: 4 x 3 tasks.
      d.stages = {whole, StageTiling{{16, 1}, {8, 1}, 2}, whole_update};
    } else if (node.inlinable()) {
      d.placement = Placement::kInline;
    } else {
      for (const StageNode &stage : node.stages) {
        d.stages.push_back(stage.index == 0 ? whole : whole_update);
      }
    }
    state.decide(d);
  }
  ASSERT_EQ(state.bounds(f).loops[1][0].name, "c_s1_x_s1_o");
  EXPECT_EQ(state.bounds(f).loops[1][0].extent, 12);

  bool fused_inside = false;
  for (const Directive &d : schedule_directives(state)) {
    if (d.kind == Directive::Kind::kFuse && d.func == f && d.stage == 1) {
      EXPECT_EQ(d.vars, (std::vector<std::string>{"c_s1", "x_s1_o", "c_s1_x_s1_o"}));
      fused_inside = true;
    }
  }
  EXPECT_TRUE(fused_inside);
  Halide::Pipeline p = testing::two_pass_scan_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "failing");
}

// A random rollout with AVX2's vectors: the ReLU of a convolution in tiles of 2 channels x 6
// columns, both tile loops fused into the parallel loop; the convolution per column tile,
// stored per row tile, so its window slides and the ReLU's splits are guarded; and the
// copy of the weights per reduction step of the convolution. Halide bounds the fused
// loops loosely and requires channel 29 of the 16 the weights have. The space refuses the
// sliding storage there (and would refuse the copy inside such loops, had the window slid
// before it was decided).
TEST(AppliedSchedules, NothingReadingPastAnInputGoesInsideFusedLoopsOverGuardedSplits) {
  const auto graph = testing::graph_of(testing::conv_relu_pipeline());
  const std::string json =
      R"({"decisions":[{"placement":"root","stages":[{"inner":[1,3,2],"parallel_loops":2,"tile":[2,6,16]}]},{"compute_at":{"func":0,"loop":2,"stage":0},"placement":"at","stages":[{"inner":[1,2,1],"parallel_loops":0,"tile":[2,2,2]},{"inner":[1,3,2],"parallel_loops":0,"reduction_outside":true,"tile":[2,3,2]}],"store_at":{"func":0,"loop":1,"stage":0}},{"compute_at":{"func":1,"loop":3,"stage":1},"placement":"at","stages":[{"inner":[1,2,1],"parallel_loops":0,"tile":[1,2,2]}],"store_at":{"func":1,"loop":2,"stage":1}},{"compute_at":{"func":2,"loop":1,"stage":0},"placement":"at","stages":[{"inner":[1,1,1],"parallel_loops":0,"tile":[1,1,1]}],"store_at":{"func":2,"loop":1,"stage":0}},{"compute_at":{"func":3,"loop":0,"stage":0},"placement":"at","stages":[{"inner":[1,1,1],"parallel_loops":0,"tile":[1,1,1]}],"store_at":{"func":3,"loop":0,"stage":0}},{"placement":"inline"},{"compute_at":{"func":1,"loop":0,"stage":1},"placement":"at","stages":[{"inner":[1,3,1,1],"parallel_loops":0,"tile":[1,6,2,1]}],"store_at":{"func":1,"loop":0,"stage":1}},{"compute_at":{"func":0,"loop":1,"stage":0},"placement":"at","stages":[{"inner":[1],"parallel_loops":0,"tile":[1]}],"store_at":{"func":0,"loop":1,"stage":0}}],"format":"protuner-schedule","pipeline":[{"dims":3,"name":"relu","stages":1,"types":["float32"]},{"dims":3,"name":"conv","stages":2,"types":["float32"]},{"dims":3,"name":"constant_exterior","stages":1,"types":["float32"]},{"dims":3,"name":"repeat_edge","stages":1,"types":["float32"]},{"dims":3,"name":"lambda","stages":1,"types":["float32"]},{"dims":3,"name":"in_im","stages":1,"types":["float32"]},{"dims":4,"name":"weights_im","stages":1,"types":["float32"]},{"dims":1,"name":"bias_im","stages":1,"types":["float32"]}],"version":1})";
  try {
    schedule_from_json(json, graph);
    ADD_FAILURE() << "the schedule was accepted";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("illegal decision for 'conv': store_at"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("slide in fused parallel loops"), std::string::npos)
        << e.what();
  }
  // Stored where it is computed, the convolution slides nothing, and the rest is legal.
  std::string per_tile = json;
  const std::string sliding = R"("store_at":{"func":0,"loop":1,"stage":0})";
  per_tile.replace(per_tile.find(sliding), sliding.size(),
                   R"("store_at":{"func":0,"loop":2,"stage":0})");
  EXPECT_NO_THROW(schedule_from_json(per_tile, graph));
}

// A scan computed per column of the output and stored per row (Halide slides its window
// along the columns) computes wrong values when the output's column split shifts inwards,
// though the split has no tail. Such a Func's loops keep guarded splits; without the
// sliding window they shift.
TEST(AppliedSchedules, SplitsUnderASlidingWindowDoNotShiftInwards) {
  Halide::Pipeline reference = testing::two_pass_scan_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(testing::two_pass_scan_pipeline());
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  for (bool slides : {true, false}) {
    ScheduleState state(graph);
    FuncDecision out;
    out.stages = {StageTiling{{32, 1 << 20, 1 << 20}, {1, 1, 1}, 1}};  // x_o, c, y, x_m
    state.decide(out);
    ASSERT_EQ(state.bounds(0).loops[0].size(), 4u);
    FuncDecision rows;
    rows.placement = Placement::kAt;
    rows.compute_at = LoopRef{0, 0, 3};
    rows.store_at = slides ? LoopRef{0, 0, 2} : rows.compute_at;
    for (const StageNode &stage : graph->funcs[1].stages) {
      rows.stages.push_back(StageTiling{std::vector<int64_t>(stage.num_pure, 1 << 20),
                                        std::vector<int64_t>(stage.num_pure, 1), 0});
    }
    ASSERT_EQ(state.check_decision(rows), "");
    state.decide(rows);
    while (!state.complete()) {
      state.decide(fallback_decision(graph->funcs[state.num_decided()], options));
    }
    for (const Directive &d : schedule_directives(state)) {
      if (d.kind == Directive::Kind::kSplit && d.func == 0) {
        EXPECT_EQ(d.tail == Tail::kShiftInwards, !slides);
      }
    }
    Halide::Pipeline p = testing::two_pass_scan_pipeline();
    apply_schedule(state, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "sliding");
  }
}

// iir_blur (a candidate of this shape requires its input at x = -896): the column scan
// computed per tile of the transposed image, whose splits are guarded (the scan slides
// along them), with the scan's own column split into shifted tiles. Halide 14 bounds the
// input over the loops of the guarded tiles by interval arithmetic, loses how the tile's
// extent and its position move together, and requires columns far before the first. Such
// a Func's splits stay guarded as well; inside shifted tiles they shift.
TEST(AppliedSchedules, AFuncComputedPerGuardedTileDoesNotShiftInwards) {
  const int width = 1536, height = 2560;
  auto graph = testing::graph_of(testing::two_pass_scan_pipeline(width, height));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  // Unscheduled, Halide computes each scan per point of its consumer: minutes at this size.
  // The fallback computes what it does (FallbackSchedule.ComputesTheSameBits...).
  Halide::Pipeline reference = testing::two_pass_scan_pipeline(width, height);
  apply_schedule(fallback_schedule(graph, options), reference);
  const Halide::Buffer<> expected = run(reference);
  const int transposed = 2, cols = 3;  // graph order: out, rows, transposed, cols, input
  ASSERT_EQ(stable_func_name(graph->funcs[transposed].name), "transposed");
  ASSERT_EQ(stable_func_name(graph->funcs[cols].name), "cols");
  for (bool slides : {true, false}) {
    ScheduleState state(graph);
    while (state.num_decided() < transposed) {
      state.decide(fallback_decision(graph->funcs[state.num_decided()], options));
    }
    FuncDecision t;  // c's own loop in parallel, y_o (tiles of 384 columns of cols)
    t.stages = {StageTiling{{1 << 20, 384, 1}, {1, 6, 1}, 1}};
    state.decide(t);
    const std::vector<Loop> &loops = state.bounds(transposed).loops[0];
    auto loop_named = [&](const std::string &name) {
      for (size_t k = 0; k < loops.size(); ++k) {
        if (loops[k].name == name) return static_cast<int>(k);
      }
      ADD_FAILURE() << "no loop " << name;
      return 0;
    };
    while (state.num_decided() < cols) {
      state.decide(fallback_decision(graph->funcs[state.num_decided()], options));
    }
    FuncDecision c = fallback_decision(graph->funcs[cols], options);
    c.placement = Placement::kAt;
    c.compute_at = LoopRef{transposed, 0, loop_named("y_o")};
    // Stored per channel, the window slides along the tiles and keeps their splits guarded.
    c.store_at = slides ? LoopRef{transposed, 0, loop_named("c")} : c.compute_at;
    c.stages[0] = StageTiling{{128, 1 << 20, 1 << 20}, {32, 1, 1}, 0};
    ASSERT_EQ(state.check_decision(c), "");
    state.decide(c);
    inline_the_rest(state);  // the input's Funcs: the scan reads the buffer
    for (const Directive &d : schedule_directives(state)) {
      if (d.kind == Directive::Kind::kSplit && (d.func == transposed || d.func == cols) &&
          d.stage == 0) {
        EXPECT_EQ(d.tail == Tail::kShiftInwards, !slides)
            << graph->funcs[d.func].name << " " << d.vars[0];
      }
    }
    Halide::Pipeline p = testing::two_pass_scan_pipeline(width, height);
    apply_schedule(state, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "guarded");
  }
}

// iir_blur, as beam search schedules it (requiring the input at x = -896 otherwise): the
// column scan computed per task of the transposed image's fused parallel loop (tiles of
// its columns, each channel's own loop inside), with the scan's columns in shifted tiles.
// Halide 14 divides the fused index by the channel loop's extent, which it cannot prove
// positive, and bounds the scan's region with a min and a max from different tasks; the
// shifted split then reaches below the region. The scan guards its splits there. (At this
// test's size Halide happens to bound it inside; the check is the directives and the bits.)
TEST(AppliedSchedules, AnInputReaderInsideFusedLoopsDoesNotShiftInwards) {
  const int width = 256, height = 64;
  Halide::Pipeline reference = testing::two_pass_scan_pipeline(width, height);
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(testing::two_pass_scan_pipeline(width, height));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const int transposed = index_of(graph, "transposed"), cols = index_of(graph, "cols");
  ScheduleState state(graph);
  while (state.num_decided() < transposed) {
    state.decide(fallback_decision(graph->funcs[state.num_decided()], options));
  }
  FuncDecision t;  // 4 tiles of 64 columns x 3 channels, fused: 12 tasks
  t.stages = {StageTiling{{1 << 20, 64, 1}, {1, 1, 1}, 2}};
  state.decide(t);
  const Loop &fused = state.bounds(transposed).loops[0][0];
  ASSERT_TRUE(fused.parallel);
  ASSERT_EQ(fused.vars.size(), 2u);
  ASSERT_EQ(fused.extent, 12);
  while (state.num_decided() < cols) {
    state.decide(fallback_decision(graph->funcs[state.num_decided()], options));
  }
  ASSERT_TRUE(graph->funcs[cols].overcompute_reads_past_inputs);
  FuncDecision c = fallback_decision(graph->funcs[cols], options);
  c.placement = Placement::kAt;
  c.compute_at = c.store_at = LoopRef{transposed, 0, 0};
  c.stages[0] = StageTiling{{32, 1 << 20, 1 << 20}, {8, 1, 1}, 0};  // 64 columns: 2 tiles
  ASSERT_EQ(state.check_decision(c), "");
  state.decide(c);
  inline_the_rest(state);  // the input's Funcs: the scan reads the buffer
  int splits = 0;
  for (const Directive &d : schedule_directives(state)) {
    if (d.kind != Directive::Kind::kSplit || d.stage != 0) continue;
    if (d.func == cols) {
      EXPECT_NE(d.tail, Tail::kShiftInwards) << d.vars[0];
      ++splits;
    }
    if (d.func == transposed) {
      EXPECT_EQ(d.tail, Tail::kShiftInwards) << d.vars[0];
    }
  }
  EXPECT_GE(splits, 1);
  Halide::Pipeline p = testing::two_pass_scan_pipeline(width, height);
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "fused");
}

// The blur chain's clamped input computed per 32 x 32 tile of the output: 34 x 34 points,
// two vectors of 16 and a tail of 2 per row. Computing past the tile in x reads the input
// through repeat_edge's clamp, so the tail rounds up (one more whole vector) and the
// 4.6 KB block is on the stack; the output's own splits never round up. Same bits either way.
TEST(AppliedSchedules, VectorTailsRoundUpWhereNoInputIsReadPastItsEnd) {
  Halide::Pipeline reference = testing::blur_chain_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(testing::blur_chain_pipeline());
  ScheduleState state(graph);
  FuncDecision sharp;  // loops y_o, x_o, y_m, x_m, x_i over 128 x 96
  sharp.stages = {StageTiling{{32, 32}, {16, 1}, 1}};
  state.decide(sharp);
  int clamped = -1;
  while (!state.complete()) {
    const int f = state.num_decided();
    const std::string name = stable_func_name(graph->funcs[f].name);
    FuncDecision d;
    d.placement = Placement::kInline;
    if (name == "repeat_edge") {
      clamped = f;
      d.placement = Placement::kAt;
      d.compute_at = d.store_at = LoopRef{0, 0, 1};
      d.stages = {StageTiling{{16, 1 << 20}, {16, 1}, 0}};
    } else if (name != "lambda" && name != "in_im") {
      d.placement = Placement::kAt;  // blur_x and blur_y per tile too
      d.compute_at = d.store_at = LoopRef{0, 0, 1};
      d.stages = {StageTiling{{32, 1 << 20}, {16, 1}, 0}};
    }
    ASSERT_EQ(state.check_decision(d), "") << name;
    state.decide(d);
  }
  ASSERT_GE(clamped, 0);
  ASSERT_EQ(state.bounds(clamped).region[0].extent(), 34);
  ASSERT_TRUE(graph->funcs[clamped].may_round_up(0));
  int rounded = 0, on_stack = 0;
  for (const Directive &d : schedule_directives(state)) {
    if (d.kind == Directive::Kind::kStoreOnStack && d.func == clamped) ++on_stack;
    if (d.kind != Directive::Kind::kSplit) continue;
    if (d.func == 0) {
      EXPECT_NE(d.tail, Tail::kRoundUp) << d.vars[0];
    }
    if (d.func == clamped && d.vars[0] == "_0") {
      EXPECT_EQ(d.tail, Tail::kRoundUp);
      ++rounded;
    }
  }
  EXPECT_EQ(rounded, 1);
  EXPECT_EQ(on_stack, 1);
  Halide::Pipeline p = testing::blur_chain_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "rounded");
}

// A 2x decimation in x of a scaled copy of the input: the copy's rows are read at stride 2.
Halide::Pipeline decimation_pipeline() {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func scaled("scaled"), out("out");
  scaled(x, y) = in(x, y) * 2.0f;
  out(x, y) = scaled(2 * x, y) + scaled(2 * x + 1, y) + scaled(2 * x + 2, y);
  in.set_estimates({{0, 64}, {0, 48}});
  out.set_estimates({{0, 16}, {0, 44}});
  return Pipeline(out);
}

// As RandomSchedules.ChainedOutputsComputeTheSameBits can draw it: the output in vectors
// of 16 columns and 4 unrolled rows, the copy computed per tile in rows of 33 points.
// Halide 14 loads the second row's stride-2 vectors with aligned loads at unaligned
// addresses, and the program dies; rows padded to 48 points load right.
TEST(AppliedSchedules, StridedVectorReadsOfUnrolledRowsStayAligned) {
  Halide::Pipeline reference = decimation_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(decimation_pipeline());
  ScheduleState state(graph);
  FuncDecision out;
  out.stages = {StageTiling{{16, 4}, {16, 4}, 0}};
  state.decide(out);
  const std::vector<Loop> &loops = state.bounds(0).loops[0];
  ASSERT_TRUE(std::any_of(loops.begin(), loops.end(), [](const Loop &l) { return l.vectorized; }));
  ASSERT_TRUE(std::any_of(loops.begin(), loops.end(), [](const Loop &l) { return l.unrolled; }));
  int tile_loop = -1;  // the innermost loop outside the vectors and unrolled rows
  for (size_t k = 0; k < loops.size(); ++k) {
    if (!loops[k].vectorized && !loops[k].unrolled) tile_loop = static_cast<int>(k);
  }
  ASSERT_GE(tile_loop, 0);
  const int scaled = index_of(graph, "scaled");
  while (!state.complete()) {
    FuncDecision d;
    d.placement = Placement::kInline;
    if (state.num_decided() == scaled) {
      d.placement = Placement::kAt;
      d.compute_at = d.store_at = LoopRef{0, 0, tile_loop};
      d.stages = {StageTiling{{1 << 20, 1 << 20}, {1, 1}, 0}};
    }
    ASSERT_EQ(state.check_decision(d), "");
    state.decide(d);
  }
  ASSERT_EQ(state.bounds(scaled).store_region[0].extent(), 33);
  int aligned = 0;
  for (const Directive &d : schedule_directives(state)) {
    if (d.kind != Directive::Kind::kAlignStorage) continue;
    EXPECT_EQ(d.func, scaled);
    EXPECT_EQ(d.vars, std::vector<std::string>{"x"});
    EXPECT_EQ(d.factor, 16);
    ++aligned;
  }
  EXPECT_EQ(aligned, 1);
  Halide::Pipeline p = decimation_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "aligned");
}

// A stencil of an input without a boundary condition, its output estimated inside the
// input and at extents no tile divides: edge_nms' shape in the corpus.
Halide::Pipeline ragged_stencil_pipeline() {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func blur_x("blur_x"), out("out");
  blur_x(x, y) = in(x, y) + in(x + 1, y) + in(x + 2, y);
  out(x, y) = blur_x(x, y) - blur_x(x, y + 2);
  in.set_estimates({{0, 64}, {0, 48}});
  out.set_estimates({{0, 61}, {0, 45}});
  return Pipeline(out);
}

// The output's ragged tiles (61 columns in tiles of 24 and vectors of 8, 45 rows in tiles
// of 8) shift inwards, so blur_x, which reads the input past its bounds wherever it is
// computed past what the output needs, may be computed per tile and stays in the input.
TEST(AppliedSchedules, AnInputReaderComputedPerRaggedOutputTileStaysInBounds) {
  Halide::Pipeline reference = ragged_stencil_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(ragged_stencil_pipeline());
  ASSERT_TRUE(graph->funcs[index_of(graph, "blur_x")].overcompute_reads_past_inputs);
  ScheduleState state(graph);
  FuncDecision out;
  out.stages = {StageTiling{{24, 8}, {8, 1}, 1}};
  state.decide(out);
  const std::vector<Loop> &loops = state.bounds(0).loops[0];
  int tile_loop = -1;  // the innermost loop outside the vectors
  for (size_t k = 0; k < loops.size(); ++k) {
    EXPECT_FALSE(loops[k].has_tail) << loops[k].name;
    if (!loops[k].vectorized) tile_loop = static_cast<int>(k);
  }
  ASSERT_TRUE(loops[0].shifted_tail);
  FuncDecision blur_x;
  blur_x.placement = Placement::kAt;
  blur_x.compute_at = blur_x.store_at = LoopRef{0, 0, tile_loop};
  blur_x.stages = {StageTiling{{1 << 20, 1 << 20}, {8, 1}, 0}};
  ASSERT_EQ(state.check_decision(blur_x), "");
  state.decide(blur_x);
  while (!state.complete()) {
    FuncDecision d;
    d.placement = Placement::kInline;
    state.decide(d);
  }
  int shifted = 0;
  for (const Directive &d : schedule_directives(state)) {
    if (d.kind == Directive::Kind::kSplit && d.func == 0) {
      EXPECT_EQ(d.tail, Tail::kShiftInwards) << d.vars[0];
      ++shifted;
    }
  }
  EXPECT_EQ(shifted, 3);  // x in tiles and in vectors, y in tiles
  Halide::Pipeline p = ragged_stencil_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "ragged");
}

// As in nl_means: a tile that is no multiple of its inner tile is split
// outer first, so its inner split divides a split's product, and Halide 14 refuses
// RoundUp there in an update ("It may redundantly recompute some values"). conv's update
// in tiles of 10 columns with unrolled blocks of 4 keeps that split guarded.
TEST(AppliedSchedules, OnlyAVariableItselfRoundsUpInAnUpdate) {
  Halide::Pipeline reference = testing::conv_relu_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(testing::conv_relu_pipeline());
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  ASSERT_EQ(stable_func_name(graph->funcs[1].name), "conv");
  ScheduleState state(graph);
  FuncDecision relu;  // loops x_o (two tiles of 12 columns), y, x_m, co over 16 x 24 x 16
  relu.stages = {StageTiling{{16, 12, 16}, {1, 1, 1}, 0}};
  state.decide(relu);
  FuncDecision conv;
  conv.placement = Placement::kAt;
  conv.compute_at = conv.store_at = LoopRef{0, 0, 0};
  conv.stages = {StageTiling{{16, 12, 16}, {1, 1, 1}, 0}, StageTiling{{16, 10, 16}, {1, 4, 1}, 0}};
  ASSERT_EQ(state.check_decision(conv), "");
  state.decide(conv);
  ASSERT_TRUE(graph->funcs[1].may_round_up(1));
  while (!state.complete()) {
    state.decide(fallback_decision(graph->funcs[state.num_decided()], options));
  }
  int splits = 0;
  for (const Directive &d : schedule_directives(state)) {
    if (d.kind == Directive::Kind::kSplit && d.func == 1 && d.stage == 1) {
      ++splits;
      EXPECT_NE(d.tail, Tail::kRoundUp) << d.vars[0];
    }
  }
  EXPECT_EQ(splits, 2);
  Halide::Pipeline p = testing::conv_relu_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "update_tiles");
}

// out(x) = sum over bins k of k * counts(x / 4, k): counts(c, k) is how many of cell c's
// 4 points fall in bin k of their value, and value (the input clamped to [0, 1]) is a Func,
// so only its definition bounds the bin index: a scatter, the shape of bilateral_grid's
// histogram.
Halide::Pipeline binned_counts_pipeline() {
  using namespace Halide;
  constexpr int n = 40100, cell = 4, bins = 10;
  ImageParam in(Float(32), 1, "in");
  Var x("x"), k("k");
  RDom r(0, cell, "r");
  Func clamped = BoundaryConditions::repeat_edge(in);
  Func value("value"), counts("counts"), out("out");
  value(x) = clamp(clamped(x), 0.0f, 1.0f);
  counts(x, k) = 0.0f;
  counts(x, cast<int>(value(x * cell + r) * (bins - 0.01f))) += 1.0f;
  Expr sum = 0.0f;
  for (int b = 0; b < bins; ++b) sum += counts(x / cell, b) * static_cast<float>(b);
  out(x) = sum;
  in.set_estimates({{0, n}});
  out.set_estimates({{0, n}});
  return Pipeline(out);
}

// bilateral_grid (rounded up, its measurement dies of a segfault): its histogram's update
// computed per tile of the output in blocks of columns. Rounded up, Halide 14 runs the
// last block whole but computes value only over the columns the tile needs, so the extra
// points read poison and store to bins far outside the buffer. A scatter's splits guard.
TEST(AppliedSchedules, AScatterNeverRoundsUp) {
  Halide::Pipeline reference = binned_counts_pipeline();
  const Halide::Buffer<> expected = run(reference);
  auto graph = testing::graph_of(binned_counts_pipeline());
  const int counts = index_of(graph, "counts"), value = index_of(graph, "value");
  ASSERT_TRUE(graph->funcs[counts].stages[1].scatters);
  ASSERT_FALSE(graph->funcs[counts].stages[0].scatters);
  ScheduleState state(graph);
  // Loops x_o, x_m over 40100 points: 5 tiles of 8020, 2005 cells each, on the heap (the
  // poison is in heap buffers alone).
  FuncDecision out;
  out.stages = {StageTiling{{8020}, {1}, 0}};
  state.decide(out);
  while (!state.complete()) {
    const int f = state.num_decided();
    FuncDecision d;
    d.placement = Placement::kInline;
    if (f == counts || f == value) {
      d.placement = Placement::kAt;
      d.compute_at = d.store_at = LoopRef{0, 0, 0};
      d.stages = f == value ? std::vector<StageTiling>{StageTiling{{1 << 20}, {1}, 0}}
                            : std::vector<StageTiling>{StageTiling{{1 << 20, 1 << 20}, {1, 1}, 0},
                                                       StageTiling{{1 << 20}, {8}, 0}};
    }
    ASSERT_EQ(state.check_decision(d), "") << graph->funcs[f].name;
    state.decide(d);
  }
  ASSERT_TRUE(graph->funcs[counts].may_round_up(0));
  ASSERT_EQ(state.bounds(counts).region[0].extent(), 2005);  // 250 blocks of 8 and 5 points
  int splits = 0;
  for (const Directive &d : schedule_directives(state)) {
    if (d.kind == Directive::Kind::kSplit && d.func == counts && d.stage == 1) {
      ++splits;
      EXPECT_EQ(d.tail, Tail::kGuard) << d.vars[0];
    }
  }
  EXPECT_EQ(splits, 1);
  Halide::Pipeline p = binned_counts_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "scatter");
}

// c += g(k, y) * g(x, k), g a vertical stencil of p, p pointwise of the input: a product of
// a Func with itself (one Func read at two index shapes), the shape of random_192's matmul
// of a convolution with itself. `p_out` receives p.
Halide::Pipeline self_product_pipeline(Halide::Func *p_out = nullptr) {
  using namespace Halide;
  constexpr int n = 16;
  ImageParam a(Float(32), 2, "a");
  Var x("x"), y("y");
  RDom k(0, n, "k");
  Func in_im("in_im"), p("p"), g("g"), c("c");
  if (p_out) *p_out = p;
  in_im(x, y) = a(x, y);
  p(x, y) = in_im(x, y) * 2.0f + 1.0f;
  g(x, y) = p(x, y) + p(x, y + 1) * 0.5f;
  c(x, y) = 0.0f;
  c(x, y) += g(k, y) * g(x, k);
  a.set_estimates({{0, n}, {0, n + 1}});
  c.set_estimates({{0, n}, {0, n}});
  return Pipeline(c);
}

// A random pipeline's shape (it computes NaN otherwise): a Func computed per row of the
// update of c += g(k, y) * g(x, k), g computed per point, and stored outside that row.
// Its footprint per row is the union of the two reads' footprints, which Halide 14 slides
// wrong. The space stores nothing outside a loop of such a stage.
TEST(AppliedSchedules, NothingSlidesAlongTheLoopsOfAProductOfAFuncWithItself) {
  using namespace Halide;
  Pipeline reference = self_product_pipeline();
  const Buffer<> expected = run(reference);

  Func by_hand_p;
  Pipeline by_hand = self_product_pipeline(&by_hand_p);
  Func c = by_hand.outputs()[0];
  Var x("x"), y("y"), xs("x_s1"), ys("y_s1");
  c.compute_root();
  c.update(0).rename(x, xs).rename(y, ys);
  for (const auto &[name, fn] : Internal::build_environment({c.function()})) {
    if (name == "g") Func(fn).compute_at(LoopLevel(c, xs));
  }
  by_hand_p.compute_at(LoopLevel(c, ys)).store_root();
  EXPECT_NE(check(expected, by_hand), std::nullopt)
      << "Halide 14 no longer slides it wrong: the rule against it may go";

  auto graph = testing::graph_of(self_product_pipeline());
  ASSERT_EQ(graph->funcs[0].stages[1].reads_in_several_shapes.size(), 1u);
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  ScheduleState state(graph);
  FuncDecision whole;  // serial, the reduction innermost: the update's loops are y, x, k
  whole.stages = {StageTiling{{1 << 20, 1 << 20}, {1, 1}, 0},
                  StageTiling{{1 << 20, 1 << 20}, {1, 1}, 0}};
  state.decide(whole);
  const std::vector<Loop> &loops = state.bounds(0).loops[1];
  auto loop_named = [&](const std::string &name) {
    for (size_t k = 0; k < loops.size(); ++k) {
      if (loops[k].name == name) return LoopRef{0, 1, static_cast<int>(k)};
    }
    ADD_FAILURE() << "no loop " << name;
    return LoopRef{};
  };
  const LoopRef rows = loop_named("y_s1"), columns = loop_named("x_s1");
  ASSERT_EQ(stable_func_name(graph->funcs[1].name), "g");
  FuncDecision g;  // serial and scalar, one tile: only where it is computed matters here
  g.stages = {whole.stages[0]};
  g.placement = Placement::kAt;
  g.compute_at = g.store_at = columns;
  ASSERT_EQ(state.check_decision(g), "");
  state.decide(g);
  ASSERT_EQ(stable_func_name(graph->funcs[2].name), "p");
  EXPECT_EQ(state.store_options(rows), (std::vector<LoopRef>{rows}));
  EXPECT_EQ(state.store_options(columns), (std::vector<LoopRef>{columns}));
  FuncDecision p = g;
  p.compute_at = rows;
  p.store_at = LoopRef{};
  EXPECT_NE(state.check_decision(p), "");
  p.store_at = rows;
  ASSERT_EQ(state.check_decision(p), "");
  state.decide(p);
  while (!state.complete()) {
    state.decide(fallback_decision(graph->funcs[state.num_decided()], options));
  }
  Pipeline scheduled = self_product_pipeline();
  apply_schedule(state, scheduled);
  EXPECT_EQ(check(expected, scheduled), std::nullopt) << schedule_source(state, "per_row");
}

// Every pipeline of test_pipelines.h, for checks of one schedule per pipeline.
std::vector<std::function<Halide::Pipeline()>> every_test_pipeline() {
  return {[] { return testing::blur_chain_pipeline(); },
          [] { return testing::bilateral_grid_pipeline(); },
          [] { return testing::conv_relu_pipeline(); },
          [] { return testing::matmul_pipeline(); },
          [] { return testing::pyramid_pipeline(); },
          [] { return testing::equalize_pipeline(); },
          [] { return testing::two_pass_scan_pipeline(); },
          [] { return testing::conv_stack_pipeline(); },
          [] { return testing::patch_window_pipeline(); }};
}

// The schedule tuning measures first must be right on every pipeline, and be the parallel,
// vectorized compute_root schedule it claims to be.
TEST(FallbackSchedule, ComputesTheSameBitsAtRootInParallelAndVectorized) {
  const std::vector<std::function<Halide::Pipeline()>> builds = every_test_pipeline();
  for (size_t i = 0; i < builds.size(); ++i) {
    Halide::Pipeline reference = builds[i]();
    const Halide::Buffer<> expected = run(reference);
    const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
    const ScheduleState state =
        fallback_schedule(graph, SearchSpaceOptions::for_target(strict_host()));
    ASSERT_TRUE(state.complete());
    bool parallel = false, vectorized = false;
    for (int f = 0; f < state.num_decided(); ++f) {
      EXPECT_EQ(state.decision(f).placement, Placement::kRoot) << graph->funcs[f].name;
      for (const auto &loops : state.bounds(f).loops) {
        for (const Loop &l : loops) {
          parallel = parallel || l.parallel;
          vectorized = vectorized || l.vectorized;
        }
      }
    }
    EXPECT_TRUE(parallel) << "pipeline " << i;
    EXPECT_TRUE(vectorized) << "pipeline " << i;
    Halide::Pipeline p = builds[i]();
    apply_schedule(state, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << "pipeline " << i << ":\n"
                                                << schedule_source(state, "fallback");
  }
}

// The fallback counts a histogram of min_parallel_points or more in parallel bands (a
// partial histogram per band by rfactor, merged after), and it counts the same; with fewer
// points it counts serially. (The unscheduled reference recomputes the histogram per
// output point: at 64 x 48 pixels that takes a second, at 256 x 128 minutes.)
TEST(FallbackSchedule, AWholeImageHistogramCountsTheSameInParallelBands) {
  SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  Halide::Pipeline reference = testing::equalize_pipeline();
  const Halide::Buffer<> expected = run(reference);
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const int hist = index_of(graph, "hist");
  ASSERT_LT(64 * 48, options.min_parallel_points);
  EXPECT_FALSE(fallback_schedule(graph, options).bounds(hist).loops[1][0].parallel);

  options.min_parallel_points = 64 * 48;
  const ScheduleState state = fallback_schedule(graph, options);
  const std::vector<Loop> &loops = state.bounds(hist).loops[1];
  ASSERT_FALSE(loops.empty());
  EXPECT_TRUE(loops[0].parallel);
  EXPECT_EQ(loops[0].extent, 24);  // 48 rows in bands of ceil(48 / 32) = 2
  Halide::Pipeline p = testing::equalize_pipeline();
  apply_schedule(state, p);
  EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "bands");
}

// Strip seeds (strip_schedule.h) compute the same bits, and have the shape they claim:
// the output in parallel strips, every Func not inlined computed per strip or at root.
TEST(StripSchedules, ComputeTheSameBitsInParallelStrips) {
  const std::vector<std::function<Halide::Pipeline()>> builds = every_test_pipeline();
  for (size_t i = 0; i < builds.size(); ++i) {
    Halide::Pipeline reference = builds[i]();
    const Halide::Buffer<> expected = run(reference);
    const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
    const std::vector<ScheduleState> seeds =
        strip_schedules(graph, SearchSpaceOptions::for_target(strict_host()));
    ASSERT_FALSE(seeds.empty()) << "pipeline " << i;
    // The fewest strips and the most: the JIT compiles dominate this test's time.
    for (size_t k : std::set<size_t>{0, seeds.size() - 1}) {
      const ScheduleState &state = seeds[k];
      ASSERT_TRUE(state.complete());
      const LoopRef strip{0, static_cast<int>(graph->funcs[0].stages.size()) - 1, 0};
      EXPECT_TRUE(state.bounds(0).loops[strip.stage][0].parallel)
          << "pipeline " << i << ", seed " << k << ": " << schedule_to_json(state);
      for (int f = 1; f < state.num_decided(); ++f) {
        const FuncDecision &d = state.decision(f);
        if (d.placement == Placement::kAt) {
          EXPECT_TRUE(d.compute_at == strip) << graph->funcs[f].name;
        }
      }
      Halide::Pipeline p = builds[i]();
      apply_schedule(state, p);
      EXPECT_EQ(check(expected, p), std::nullopt) << "pipeline " << i << ", seed " << k << ":\n"
                                                  << schedule_source(state, "strips");
    }
  }
}

// In the blur chain, blur_y (read once per point by its one consumer) is inlined and
// blur_x (read at three rows by it) is computed per strip; the histogram a whole image
// feeds is computed at root (per strip it would be computed once per strip).
TEST(StripSchedules, StencilsGoPerStripPointwiseReadsInlineWholeImageReductionsAtRoot) {
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const auto blur = testing::graph_of(testing::blur_chain_pipeline());
  const std::vector<ScheduleState> blur_seeds = strip_schedules(blur, options);
  ASSERT_FALSE(blur_seeds.empty());
  EXPECT_EQ(blur_seeds[0].decision(index_of(blur, "blur_y")).placement, Placement::kInline);
  EXPECT_EQ(blur_seeds[0].decision(index_of(blur, "blur_x")).placement, Placement::kAt);

  const auto equalize = testing::graph_of(testing::equalize_pipeline());
  const std::vector<ScheduleState> eq_seeds = strip_schedules(equalize, options);
  ASSERT_FALSE(eq_seeds.empty());
  EXPECT_EQ(eq_seeds[0].decision(index_of(equalize, "hist")).placement, Placement::kRoot);
}

// A convolution's padding (a select per load) is stored, not inlined into the reduction,
// which would evaluate each padded point once per output channel and filter tap (resnet50's
// block-in-tile seed runs faster with its paddings stored). A wrapper that only loads
// an input stays inlined however often the reduction reads it: storing it adds a copy.
TEST(SeedInlines, AConvolutionsPaddingIsStoredAndABareLoadInlined) {
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const auto placements = [&](const std::shared_ptr<const PipelineGraph> &graph,
                              const std::string &name) {
    std::vector<ScheduleState> seeds = blocked_in_tile_schedules(graph, options);
    for (ScheduleState &s : strip_schedules(graph, options)) seeds.push_back(std::move(s));
    std::vector<Placement> out;
    for (const ScheduleState &s : seeds) {
      for (size_t f = 0; f < graph->funcs.size(); ++f) {
        if (stable_func_name(graph->funcs[f].name) == name) {
          out.push_back(s.decision(static_cast<int>(f)).placement);
        }
      }
    }
    return out;
  };

  // Two paddings, each a select (constant_exterior) over a clamp (repeat_edge).
  const std::vector<Placement> padding =
      placements(testing::graph_of(testing::conv_stack_pipeline()), "constant_exterior");
  ASSERT_GE(padding.size(), 4u);
  for (Placement p : padding) EXPECT_NE(p, Placement::kInline);

  Halide::ImageParam in(Halide::Float(32), 3, "in"), w(Halide::Float(32), 4, "w");
  Halide::Var c("c"), x("x"), y("y");
  Halide::RDom r(0, 8, 0, 3, 0, 3, "r");
  Halide::Func wrapped("wrapped"), conv("conv");
  wrapped(c, x, y) = in(c, x, y);
  conv(c, x, y) = 0.0f;
  conv(c, x, y) += w(c, r.x, r.y, r.z) * wrapped(r.x, x + r.y, y + r.z);
  in.set_estimates({{0, 8}, {0, 26}, {0, 10}});
  w.set_estimates({{0, 32}, {0, 8}, {0, 3}, {0, 3}});
  conv.set_estimates({{0, 32}, {0, 24}, {0, 8}});
  const auto graph = testing::graph_of(Halide::Pipeline(conv));
  const std::vector<Placement> wrapper = placements(graph, "wrapped");
  ASSERT_FALSE(wrapper.empty());
  for (Placement p : wrapper) EXPECT_EQ(p, Placement::kInline);
}

// Root-strip seeds (strip_schedule.h) compute the same bits on every pipeline they are made
// for, and have the shape they claim: every Func computed per strip is computed in loop 0
// (the strip loop) of a Func at root whose strip loop is parallel.
TEST(RootStripSchedules, ComputeTheSameBitsWithProducersPerStripOfAFuncAtRoot) {
  const std::vector<std::function<Halide::Pipeline()>> builds = every_test_pipeline();
  int made_for = 0;
  for (size_t i = 0; i < builds.size(); ++i) {
    Halide::Pipeline reference = builds[i]();
    const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
    const std::vector<ScheduleState> seeds =
        root_strip_schedules(graph, SearchSpaceOptions::for_target(strict_host()));
    if (seeds.empty()) continue;
    ++made_for;
    const Halide::Buffer<> expected = run(reference);
    // The fewest strips only: the JIT compiles dominate this test's time.
    for (size_t k : {size_t{0}}) {
      const ScheduleState &state = seeds[k];
      ASSERT_TRUE(state.complete());
      bool beside_output = false;
      for (int f = 1; f < state.num_decided(); ++f) {
        const FuncDecision &d = state.decision(f);
        if (d.placement != Placement::kAt) continue;
        const LoopRef &at = d.compute_at;
        EXPECT_EQ(at.loop, 0) << graph->funcs[f].name;
        EXPECT_EQ(state.decision(at.func).placement, Placement::kRoot) << graph->funcs[f].name;
        EXPECT_TRUE(state.bounds(at.func).loops[at.stage][0].parallel) << graph->funcs[f].name;
        beside_output = beside_output || at.func != 0;
      }
      EXPECT_TRUE(beside_output) << "pipeline " << i << ", seed " << k;
      Halide::Pipeline p = builds[i]();
      apply_schedule(state, p);
      EXPECT_EQ(check(expected, p), std::nullopt) << "pipeline " << i << ", seed " << k << ":\n"
                                                  << schedule_source(state, "root_strips");
    }
  }
  EXPECT_GE(made_for, 1);
  std::cout << "root-strip seeds made for " << made_for << " of " << builds.size()
            << " pipelines\n";
}

// In a pyramid each level is computed at root in strips and its horizontal pass per strip
// of it, the expert's shape; a strip seed computes the pass per strip of the output, or at
// root.
TEST(RootStripSchedules, APyramidLevelComputesItsHorizontalPassPerStrip) {
  const auto graph = testing::graph_of(testing::pyramid_pipeline(256, 192, 3));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const std::vector<ScheduleState> seeds = root_strip_schedules(graph, options);
  ASSERT_FALSE(seeds.empty());
  for (int l = 1; l <= 2; ++l) {
    const int level = index_of(graph, "down" + std::to_string(l));
    const int pass = index_of(graph, "down_x" + std::to_string(l));
    EXPECT_EQ(seeds[0].decision(level).placement, Placement::kRoot) << l;
    EXPECT_EQ(seeds[0].decision(pass).placement, Placement::kAt) << l;
    EXPECT_EQ(seeds[0].decision(pass).compute_at.func, level) << l;
    for (const ScheduleState &strip_seed : strip_schedules(graph, options)) {
      const FuncDecision &d = strip_seed.decision(pass);
      EXPECT_TRUE(d.placement != Placement::kAt || d.compute_at.func == 0) << l;
    }
  }
}

// A recursive filter's updates scan, down and up; its first definition, a convolution's
// sum, a histogram (self at a data-dependent bin) and a transpose do not. The root-strip seed
// stores the transpose a scan feeds at root in strips and computes the scan per strip of it, and
// the second scan per strip of the output, as iir_blur's expert does; inlined, the transpose would
// gather across rows inside the second scan. Both transposes work in vector squares.
TEST(RootStripSchedules, AScanIsComputedPerStripOfTheTransposeReadingIt) {
  const auto graph = testing::graph_of(testing::two_pass_scan_pipeline());
  const int cols = index_of(graph, "cols"), transposed = index_of(graph, "transposed"),
            rows = index_of(graph, "rows");
  const std::vector<StageNode> &cols_stages = graph->funcs[cols].stages;
  ASSERT_EQ(cols_stages.size(), 3u);
  EXPECT_FALSE(cols_stages[0].scans);
  EXPECT_TRUE(cols_stages[1].scans);  // cols(x, down) from cols(x, down - 1)
  EXPECT_TRUE(cols_stages[2].scans);  // and back up: cols(x, y_up) from cols(x, y_up + 1)
  EXPECT_FALSE(graph->funcs[transposed].stages[0].scans);
  const std::vector<std::function<Halide::Pipeline()>> others = {
      [] { return testing::conv_relu_pipeline(); },
      [] { return testing::bilateral_grid_pipeline(); }};
  for (const auto &build : others) {
    const auto other = testing::graph_of(build());
    for (const FuncNode &f : other->funcs) {
      for (const StageNode &s : f.stages) EXPECT_FALSE(s.scans) << f.name;
    }
  }

  const std::vector<ScheduleState> seeds =
      root_strip_schedules(graph, SearchSpaceOptions::for_target(strict_host()));
  ASSERT_FALSE(seeds.empty());
  const ScheduleState &seed = seeds[0];
  EXPECT_EQ(seed.decision(transposed).placement, Placement::kRoot);
  EXPECT_TRUE(seed.bounds(transposed).loops[0][0].parallel);
  // The transposes work in blocks of one vector square.
  for (int f : {0, transposed}) {
    const std::vector<int64_t> &inner = seed.decision(f).stages[0].inner;
    EXPECT_EQ(inner[0],
              native_lanes(graph->funcs[f], SearchSpaceOptions::for_target(strict_host())));
    EXPECT_EQ(inner[1], inner[0]) << graph->funcs[f].name;
  }
  EXPECT_EQ(seed.decision(cols).placement, Placement::kAt);
  EXPECT_EQ(seed.decision(cols).compute_at.func, transposed);
  EXPECT_EQ(seed.decision(rows).placement, Placement::kAt);
  EXPECT_EQ(seed.decision(rows).compute_at.func, 0);
}

// Sliced seeds (sliced_schedule.h) compute the same bits, in the two shapes of nl_means'
// fast schedules: the output in parallel tiles and the weighted sum per tile, either with
// its window loops outside the tile's pixels and every per-offset patch distance computed
// at the innermost window loop, or around row segments of registers with the box sums
// per offset of a segment and the squared differences sliding down the tile's rows. The
// weight is inlined, the clamped input per tile. No other test pipeline has distances to
// slice.
TEST(SlicedSchedules, ThePatchDistancesAreComputedPerOffsetInTheTile) {
  const auto build = [] { return testing::patch_window_pipeline(); };
  Halide::Pipeline reference = build();
  const Halide::Buffer<> expected = run(reference);
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const std::vector<ScheduleState> seeds = sliced_reduction_schedules(graph, options);
  ASSERT_EQ(seeds.size(), std::size(kSliceShapes));
  const int acc = index_of(graph, "acc"), weight = index_of(graph, "weight"),
            diff = index_of(graph, "diff");
  const LoopRef tile_loop{0, 0, 0};
  for (size_t k = 0; k < seeds.size(); ++k) {
    const ScheduleState &seed = seeds[k];
    const SliceShape &shape = kSliceShapes[k];
    const std::string source = schedule_source(seed, "sliced");
    ASSERT_TRUE(seed.complete());
    const Loop &tiles = seed.bounds(0).loops[0][0];
    EXPECT_TRUE(tiles.parallel) << source;
    EXPECT_EQ(tiles.kind, LoopKind::kOuter) << source;
    ASSERT_EQ(seed.decision(acc).placement, Placement::kAt) << source;
    EXPECT_TRUE(seed.decision(acc).compute_at == tile_loop) << source;
    ASSERT_EQ(seed.decision(acc).stages.size(), 2u);
    const StageTiling &sum = seed.decision(acc).stages[1];
    EXPECT_EQ(sum.reduction_outside, shape.row_vectors == 0) << source;
    // The update's loops: s.y and s.x outside the tile's rows and columns, or inside them
    // around a vectorized row segment.
    const std::vector<Loop> &update = seed.bounds(acc).loops[1];
    std::vector<int> window;
    for (int l = 0; l < static_cast<int>(update.size()); ++l) {
      if (update[l].kind == LoopKind::kReduction) window.push_back(l);
    }
    ASSERT_EQ(window.size(), 2u) << source;
    EXPECT_EQ(window[1], window[0] + 1) << source;
    if (shape.row_vectors == 0) {
      EXPECT_EQ(window[0], 0) << source;
    } else {
      EXPECT_EQ(sum.inner[0], shape.row_vectors * native_lanes(graph->funcs[acc], options));
      EXPECT_EQ(window[1] + 2, static_cast<int>(update.size())) << source;
      EXPECT_TRUE(update.back().vectorized) << source;
    }
    const LoopRef slice{acc, 1, window[1]};
    for (const std::string name : {"blur_x", "blur_y", "diff"}) {
      const int f = index_of(graph, name);
      const FuncDecision &d = seed.decision(f);
      ASSERT_EQ(d.placement, Placement::kAt) << name << "\n" << source;
      if (f == diff && shape.row_vectors > 0) {
        // The box sum down the columns reads 3 rows of it per row segment: computed per
        // row, stored per tile.
        EXPECT_TRUE(d.compute_at == (LoopRef{acc, 1, 0})) << source;
        EXPECT_TRUE(d.store_at == tile_loop) << source;
        continue;
      }
      EXPECT_TRUE(d.compute_at == slice) << name << "\n" << source;
      // One offset's slice: pixels (and the patch halo) by one offset.
      const Region region = seed.region_at(f, slice);
      EXPECT_EQ(region[2].extent(), 1) << name;
      EXPECT_EQ(region[3].extent(), 1) << name;
    }
    EXPECT_EQ(seed.decision(weight).placement, Placement::kInline) << source;
    bool clamped_per_tile = false;
    for (int f = 0; f < seed.num_decided(); ++f) {
      clamped_per_tile |= seed.decision(f).placement == Placement::kAt &&
                          seed.decision(f).compute_at == tile_loop && f != acc;
    }
    EXPECT_TRUE(clamped_per_tile) << source;
    Halide::Pipeline p = build();
    apply_schedule(seed, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << source;
  }
  const std::vector<std::function<Halide::Pipeline()>> builds = every_test_pipeline();
  for (size_t i = 0; i + 1 < builds.size(); ++i) {  // the last is patch_window_pipeline
    EXPECT_TRUE(sliced_reduction_schedules(testing::graph_of(builds[i]()), options).empty())
        << "pipeline " << i;
  }
}

// Register-blocked seeds (blocked_schedule.h) compute the same bits, and block what they
// claim: the reduction update's innermost loops a vectorized and an unrolled one, the
// reduction loops around them. Pipelines without a 2-D reduction get none.
TEST(BlockedSchedules, ComputeTheSameBitsWithTheReductionAroundTheBlock) {
  for (const auto &build : every_test_pipeline()) {
    Halide::Pipeline reference = build();
    const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
    const std::vector<ScheduleState> seeds =
        blocked_schedules(graph, SearchSpaceOptions::for_target(strict_host()));
    // A 2-D reduction at least one block (a vector by the fewest rows) long in each.
    const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
    int fewest_rows = kRegisterBlocks[0].rows;
    for (const RegisterBlock &b : kRegisterBlocks) fewest_rows = std::min(fewest_rows, b.rows);
    bool has_2d_reduction = false;
    for (const FuncNode &f : graph->funcs) {
      for (const StageNode &s : f.stages) {
        if (s.index == 0 || s.num_pure < 2 || static_cast<int>(s.loop_vars.size()) == s.num_pure) {
          continue;
        }
        const Region loops = s.loop_region(f.root_region);
        has_2d_reduction |=
            loops[0].extent() >= native_lanes(f, options) && loops[1].extent() >= fewest_rows;
      }
    }
    if (!has_2d_reduction) {
      EXPECT_TRUE(seeds.empty()) << graph->funcs[0].name;
      continue;
    }
    ASSERT_FALSE(seeds.empty()) << graph->funcs[0].name;
    const Halide::Buffer<> expected = run(reference);
    for (const ScheduleState &state : seeds) {
      bool blocked = false;
      for (int f = 0; f < state.num_decided(); ++f) {
        for (const auto &loops : state.bounds(f).loops) {
          const size_t n = loops.size();
          if (n < 3 || !loops[n - 1].vectorized || !loops[n - 2].unrolled) continue;
          blocked |= loops[n - 3].kind == LoopKind::kReduction;
        }
      }
      EXPECT_TRUE(blocked) << schedule_source(state, "blocked");
      Halide::Pipeline p = build();
      apply_schedule(state, p);
      EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "blocked");
    }
  }
}

// Block-in-tile seeds: a convolution whose output is its ReLU gets the convolution computed
// per register block of the output's tiles, the reduction around the block, every loop
// outside the tiles fused into one parallel loop, and computes the same bits (also where
// the convolution is computed inside fused loops); a pipeline whose output is the
// reduction itself gets none, nor does a scan or a sum that shares no operand in a block.
TEST(BlockedSchedules, AReductionMappedPointwiseIsComputedPerBlockOfTheOutput) {
  const auto build = [] { return testing::conv_relu_pipeline(8, 64, 64, 16); };
  Halide::Pipeline reference = build();
  const Halide::Buffer<> expected = run(reference);
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const std::vector<ScheduleState> seeds = blocked_in_tile_schedules(graph, options);
  ASSERT_FALSE(seeds.empty());
  bool conv_inside_fused_loop = false;
  for (const ScheduleState &state : seeds) {
    ASSERT_TRUE(state.complete());
    const std::vector<Loop> &out = state.bounds(0).loops[0];
    EXPECT_TRUE(out[0].parallel) << schedule_source(state, "in_tile");
    for (size_t l = 1; l < out.size(); ++l) EXPECT_NE(out[l].kind, LoopKind::kOuter);
    int conv = -1;
    for (int f = 0; f < state.num_decided(); ++f) {
      if (stable_func_name(graph->funcs[f].name) == "conv") conv = f;
    }
    ASSERT_GE(conv, 0);
    const FuncDecision &d = state.decision(conv);
    ASSERT_EQ(d.placement, Placement::kAt);
    EXPECT_EQ(d.compute_at.func, 0);
    EXPECT_EQ(out[d.compute_at.loop].kind, LoopKind::kMiddle);
    conv_inside_fused_loop |= out[0].vars.size() > 1;
    const std::vector<Loop> &update = state.bounds(conv).loops[1];
    ASSERT_GE(update.size(), 3u);
    EXPECT_TRUE(update.back().vectorized) << schedule_source(state, "in_tile");
    EXPECT_EQ(update[update.size() - 3].kind, LoopKind::kReduction)
        << schedule_source(state, "in_tile");
    // The output's tiles divide it, so they shift inwards and Halide knows they are whole:
    // the convolution's accumulator is a constant-size block.
    for (const Directive &dir : schedule_directives(state)) {
      if (dir.kind != Directive::Kind::kSplit) continue;
      if (dir.func == 0) {
        EXPECT_EQ(dir.tail, Tail::kShiftInwards) << dir.vars[0];
      }
      // An update's tail would run its reduction twice over the shifted points.
      if (dir.func == conv && dir.stage == 1) {
        EXPECT_NE(dir.tail, Tail::kShiftInwards) << dir.vars[0];
      }
    }
    Halide::Pipeline p = build();
    apply_schedule(state, p);
    const std::string stmt = lowered_stmt(p);
    std::smatch alloc;
    ASSERT_TRUE(std::regex_search(stmt, alloc, std::regex(R"(allocate conv(\$\d+)?\[([^\]]*)\])")))
        << stmt;
    EXPECT_TRUE(std::regex_match(alloc[2].str(), std::regex(R"(float32( \* \d+)+)")))
        << alloc[0] << "\n" << schedule_source(state, "in_tile");
    EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "in_tile");
  }
  // A block narrower than the 64 channels leaves a channel-tile loop to fuse with the rows.
  EXPECT_TRUE(conv_inside_fused_loop);
  EXPECT_TRUE(
      blocked_in_tile_schedules(testing::graph_of(testing::matmul_pipeline()), options).empty());
  // A scan's reduction walks a dimension of its Func: it is no accumulator block, even read
  // one point per point (transposed) by its consumer.
  EXPECT_TRUE(
      blocked_in_tile_schedules(testing::graph_of(testing::two_pass_scan_pipeline()), options)
          .empty());
  // nl_means' shape: a sum over a window of a weight and a pixel per output point shares no
  // operand between the accumulators of a block.
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), dx("dx"), dy("dy");
  RDom s(0, 5, 0, 5, "s");
  Func weight("weight"), acc("acc"), out("out");
  weight(x, y, dx, dy) = exp(-abs(in(x, y) - in(x + dx, y + dy)));
  acc(x, y) = 0.0f;
  acc(x, y) += weight(x, y, s.x, s.y) * in(x + s.x, y + s.y);
  out(x, y) = acc(x, y);
  in.set_estimates({{0, 132}, {0, 132}});
  out.set_estimates({{0, 128}, {0, 128}});
  EXPECT_TRUE(blocked_in_tile_schedules(testing::graph_of(Pipeline(out)), options).empty());
}

// A block-in-tile seed's tiles run several rows of the convolution deep, so the stencil's
// input rows and the copied filter panel are reused over them, while they stay at least
// kInTileTasksPerCore tasks per core; with too few tiles for the cores they are one row.
TEST(BlockedSchedules, InTileSeedsTileRowsDeepWhileTheTilesStayEnoughTasks) {
  const auto build = [] { return testing::conv_relu_pipeline(8, 64, 64, 64); };
  Halide::Pipeline reference = build();
  const Halide::Buffer<> expected = run(reference);
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const std::vector<ScheduleState> seeds = blocked_in_tile_schedules(graph, options);
  ASSERT_FALSE(seeds.empty());
  for (const ScheduleState &state : seeds) {
    const StageTiling &t = state.decision(0).stages[0];
    EXPECT_GT(t.tile[2], 1) << schedule_source(state, "deep");
    EXPECT_LE(t.tile[2], kInTileDepth);
    EXPECT_GE((64 / t.tile[0]) * (64 / t.tile[1]) * (64 / t.tile[2]),
              kInTileTasksPerCore * options.cores)
        << schedule_source(state, "deep");
    Halide::Pipeline p = build();
    apply_schedule(state, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "deep");
  }
  options.cores = 64;
  for (const ScheduleState &state : blocked_in_tile_schedules(graph, options)) {
    EXPECT_EQ(state.decision(0).stages[0].tile[2], 1) << schedule_source(state, "shallow");
  }
}

// Every Func that maps a reduction pointwise gets it per block: both layers of a stack of
// convolutions, the first one's ReLU at root in parallel tiles, its convolution inside.
TEST(BlockedSchedules, EveryConvolutionOfAStackIsComputedPerBlockOfItsReLU) {
  const auto build = [] { return testing::conv_stack_pipeline(); };
  Halide::Pipeline reference = build();
  const Halide::Buffer<> expected = run(reference);
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const std::vector<ScheduleState> seeds =
      blocked_in_tile_schedules(graph, SearchSpaceOptions::for_target(strict_host()));
  ASSERT_FALSE(seeds.empty());
  for (const ScheduleState &state : seeds) {
    int per_block = 0;
    for (int f = 0; f < state.num_decided(); ++f) {
      const std::string name = stable_func_name(graph->funcs[f].name);
      if (name != "conv1" && name != "conv2") continue;
      const FuncDecision &d = state.decision(f);
      ASSERT_EQ(d.placement, Placement::kAt) << name;
      const std::string consumer = stable_func_name(graph->funcs[d.compute_at.func].name);
      EXPECT_EQ(consumer, name == "conv1" ? "relu1" : "relu2");
      EXPECT_EQ(state.decision(d.compute_at.func).placement, Placement::kRoot);
      EXPECT_TRUE(state.bounds(d.compute_at.func).loops[0][0].parallel);
      ++per_block;
    }
    EXPECT_EQ(per_block, 2) << schedule_source(state, "stack");
    Halide::Pipeline p = build();
    apply_schedule(state, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "stack");
  }
}

// A matrix multiply's B, whose rows its blocks load as vectors at each k, is copied per tile
// of the output in one seed per block shape; A, which they broadcast, is not. Both compute
// the same bits.
TEST(BlockedSchedules, ThePanelTheBlocksLoadAsVectorsIsCopiedPerTile) {
  const auto build = [] { return testing::matmul_copy_pipeline(); };
  Halide::Pipeline reference = build();
  const Halide::Buffer<> expected = run(reference);
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(strict_host());
  const int a_im = index_of(graph, "a_im"), b_im = index_of(graph, "b_im");
  int with_panel = 0, without = 0;
  for (const ScheduleState &state : blocked_in_tile_schedules(graph, options)) {
    const FuncDecision &b = state.decision(b_im);
    const bool panel = b.placement == Placement::kAt && b.compute_at == LoopRef{0, 0, 0};
    (panel ? with_panel : without) += 1;
    if (panel) {
      EXPECT_TRUE(state.bounds(0).loops[0][0].parallel);
      // Its region: the tile's columns of every row k.
      const Region r = state.bounds(b_im).region;
      EXPECT_EQ(r[0].extent(), state.decision(0).stages[0].tile[0]);
      EXPECT_EQ(r[1].extent(), 128);
      EXPECT_EQ(state.bounds(b_im).loops[0].back().vectorized, true);
    }
    EXPECT_FALSE(state.decision(a_im).compute_at == (LoopRef{0, 0, 0}));
    Halide::Pipeline p = build();
    apply_schedule(state, p);
    EXPECT_EQ(check(expected, p), std::nullopt) << schedule_source(state, "panel");
  }
  EXPECT_GT(with_panel, 0);
  EXPECT_EQ(with_panel, without);
}

}  // namespace
}  // namespace protuner
