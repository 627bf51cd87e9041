// Featurization: hand-computed values on small pipelines, inlined Funcs folding into their
// consumers, and the memoized features equal to fresh ones over random rollouts (a
// differential test with fixed seeds).
#include <gtest/gtest.h>

#include <Halide.h>
#include <cstring>
#include <functional>
#include <random>

#include "common/host_target.h"
#include "searcher/cost/featurizer.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/cost_test_support.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using F = ScheduledFeature;

// f(x, y) = g(x, y) + g(x + 1, y), g(x, y) = in(x, y) * 3, over n x n points.
std::shared_ptr<const PipelineGraph> two_tap_graph(int n = 64) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func g("g"), f("f");
  g(x, y) = in(x, y) * 3.0f;
  f(x, y) = g(x, y) + g(x + 1, y);
  in.set_estimates({{0, n + 1}, {0, n}});
  f.set_estimates({{0, n}, {0, n}});
  Pipeline p(f);
  return std::make_shared<const PipelineGraph>(analyze_pipeline(p));
}

TEST(Featurizer, ComputesHandCheckedValuesForARootStage) {
  auto graph = two_tap_graph();
  ASSERT_EQ(graph->funcs.size(), 3u);  // f, g, in_im
  const Featurizer fz(graph);
  ScheduleState s(graph);
  FuncDecision d = testing::root_decision(s, false);
  d.stages[0].inner[0] = 16;  // vectorize x by 16, serial otherwise
  s.decide(d);
  const StageFeatures &f = fz.featurize(s).stages[0];
  EXPECT_EQ(f[F::decided], 1);
  EXPECT_EQ(f[F::at_root], 1);
  EXPECT_EQ(f[F::points_total], 64 * 64);
  EXPECT_EQ(f[F::productions], 1);
  EXPECT_EQ(f[F::vector_width], 16);
  EXPECT_EQ(f[F::native_vector_width], 16);  // 512-bit vectors of float32
  EXPECT_EQ(f[F::lane_utilization], 1);
  EXPECT_EQ(f[F::ops_per_point], 1);  // the float add (the index x + 1 is an address)
  EXPECT_EQ(f[F::vector_ops_total], 64 * 64 / 16);
  EXPECT_EQ(f[F::scalar_ops_total], 0);
  EXPECT_EQ(f[F::loads_per_point], 2);
  // g is read over 65 x 64 points: the two taps overlap.
  EXPECT_EQ(f[F::bytes_read_per_production], 65 * 64 * 4);
  EXPECT_EQ(f[F::lines_read_per_production], 64 * 5);  // 260 bytes per row: 5 lines
  EXPECT_EQ(f[F::bytes_written_per_production], 64 * 64 * 4);
  EXPECT_EQ(f[F::alloc_bytes], 0);  // an output: the caller allocates it
  EXPECT_EQ(f[F::parallel_tasks], 1);
  EXPECT_EQ(f[F::core_utilization], 0.5f);  // one task on two cores
  // One block is one vector of x at one y: 17 values of g, 16 of f.
  EXPECT_EQ(f[F::working_set_block], (17 + 16) * 4);
  EXPECT_EQ(f[F::bytes_read_per_vector], 17 * 4);
  // Undecided Funcs: invariant features only.
  const StageFeatures &g = fz.featurize(s).stages[1];
  EXPECT_EQ(g[F::decided], 0);
  EXPECT_EQ(g[InvariantFeature::op_mul], 1);
  EXPECT_EQ(g[InvariantFeature::op_load_func], 1);
  EXPECT_EQ(g[InvariantFeature::access_pointwise], 1);
}

// What Funcs after the output are decided as, for vectorized_output_features.
enum class Rest { kUndecided, kInlined, kAtRoot };

// Stage 0 of the output `out` computed at root, vectorized by 16 along its innermost
// variable and serial otherwise (the next Func, if any, decided as `rest` says).
StageFeatures vectorized_output_features(Halide::Func out, Rest rest = Rest::kUndecided) {
  Halide::Pipeline p(out);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
  const Featurizer fz(graph);
  ScheduleState s(graph);
  FuncDecision d = testing::root_decision(s, false);
  d.stages[0].inner[0] = 16;  // one vector of the innermost variable
  s.decide(d);
  if (rest != Rest::kUndecided && s.num_decided() < static_cast<int>(graph->funcs.size())) {
    s.decide(rest == Rest::kInlined ? testing::inline_decision()
                                    : testing::root_decision(s, false));
  }
  return fz.featurize(s).stages[0];
}

// A row of a table picked per x by a lookup: out(k, x) = table(k, idx(x)). A vector along
// k loads the row densely (bgu's transform along its coefficients); the same read in
// out(x, k), vectorized along x, gathers a row per lane.
TEST(Featurizer, AGatheredIndexGathersOnlyAlongTheVariableItReads) {
  for (bool along_k : {true, false}) {
    using namespace Halide;
    ImageParam table(Float(32), 2, "table"), idx(Int(32), 1, "idx");
    Var k("k"), x("x");
    Func out("out");
    const Expr row = table(k, clamp(idx(x), 0, 63));
    if (along_k) {
      out(k, x) = row;
      out.set_estimates({{0, 16}, {0, 256}});
    } else {
      out(x, k) = row;
      out.set_estimates({{0, 256}, {0, 16}});
    }
    table.set_estimates({{0, 16}, {0, 64}});
    idx.set_estimates({{0, 256}});
    const StageFeatures f = vectorized_output_features(out);
    EXPECT_EQ(f[F::loads_per_point], 2) << along_k;
    EXPECT_EQ(f[F::gather_loads_per_point], along_k ? 0 : 1);
    // A vector: one index, and 16 table values (one row along k, one per row along x).
    EXPECT_EQ(f[F::bytes_read_per_vector], along_k ? 4 + 16 * 4 : 16 * 4 + 16 * 4);
    EXPECT_EQ(f[F::lines_read_per_vector], along_k ? 2 : 1 + 16);
  }
}

// A vector along x of out(x, y) = in(y, x) reads a column of `in`: Halide 14 loads it lane
// by lane (a scalar load and an insert per lane, read in its assembly), so it counts as a
// gather; a read at stride 2 along the innermost dimension is loaded densely and shuffled.
TEST(Featurizer, AReadAcrossRowsAlongTheVectorGathers) {
  enum Read { kPointwise, kTransposed, kStrideTwo };
  for (Read read : {kPointwise, kTransposed, kStrideTwo}) {
    using namespace Halide;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = read == kTransposed ? in(y, x) : read == kStrideTwo ? in(2 * x, y) : in(x, y);
    in.set_estimates({{0, 128}, {0, 64}});
    out.set_estimates({{0, 64}, {0, 64}});
    const StageFeatures f = vectorized_output_features(out);
    EXPECT_EQ(f[F::loads_per_point], 1) << read;
    EXPECT_EQ(f[F::gather_loads_per_point], read == kTransposed ? 1 : 0) << read;
    // Gathered lanes are not vector loads of the block.
    EXPECT_EQ(f[F::block_loads], read == kTransposed ? 0 : 1) << read;
  }
}

// Gathers per point of f(x, y), vectorized along x, defined by `define` (over inputs a
// and b, 64 x 64), with the Func decided after f inlined or computed at root.
double clamp_gathers(const std::function<void(Halide::Func, Halide::ImageParam, Halide::ImageParam,
                                              Halide::Var, Halide::Var)> &define,
                     bool inline_next) {
  using namespace Halide;
  ImageParam a(Float(32), 2, "a"), b(Float(32), 2, "b");
  Var x("x"), y("y");
  Func f("f");
  define(f, a, b, x, y);
  a.set_estimates({{0, 64}, {0, 65}});
  b.set_estimates({{0, 64}, {0, 65}});
  f.set_estimates({{0, 64}, {0, 64}});
  return vectorized_output_features(
      f, inline_next ? Rest::kInlined : Rest::kAtRoot)[F::gather_loads_per_point];
}

// Halide splits a vectorized loop at the edges of a hand-written clamp (dense vectors in
// between) only while the clamp sits in one load's index; once loads share it, common-
// subexpression elimination lifts it into a let and every vector of them gathers
// (interpolate runs much slower so). A boundary condition's clamp, tagged `likely`, is
// split either way. Each case's code is as Halide 14's lowered statement shows it.
TEST(Featurizer, AHandWrittenClampGathersOnceLoadsShareIt) {
  using namespace Halide;
  auto cx = [](Var x, int dx = 0) { return clamp(x + dx, 0, 63); };
  // One load: split.
  EXPECT_EQ(
      clamp_gathers([&](Func f, ImageParam a, ImageParam, Var x, Var y) { f(x, y) = a(cx(x), y); },
                    false),
      0);
  // A vertical stencil over one clamped x: both loads gather.
  EXPECT_EQ(clamp_gathers([&](Func f, ImageParam a, ImageParam, Var x,
                              Var y) { f(x, y) = a(cx(x), y) + a(cx(x), y + 1); },
                          false),
            2);
  // Two inputs at one clamped x.
  EXPECT_EQ(clamp_gathers([&](Func f, ImageParam a, ImageParam b, Var x,
                              Var y) { f(x, y) = a(cx(x), y) * b(cx(x), y); },
                          false),
            2);
  // A horizontal stencil: a clamp per tap.
  EXPECT_EQ(clamp_gathers([&](Func f, ImageParam a, ImageParam, Var x,
                              Var y) { f(x, y) = a(cx(x, -1), y) + a(cx(x, 1), y); },
                          false),
            0);
  // A boundary condition inlined into a vertical stencil.
  EXPECT_EQ(clamp_gathers(
                [&](Func f, ImageParam a, ImageParam, Var x, Var y) {
                  Func edge = BoundaryConditions::repeat_edge(a);
                  f(x, y) = edge(x, y) + edge(x, y + 1);
                },
                true),
            0);
  // A clamped call of a Func that loads twice: shared once the Func is inlined.
  auto two_loads = [&](Func f, ImageParam a, ImageParam b, Var x, Var y) {
    Func g("g");
    g(x, y) = a(x, y) + b(x, y);
    f(x, y) = g(cx(x), y);
  };
  EXPECT_EQ(clamp_gathers(two_loads, true), 2);
  EXPECT_EQ(clamp_gathers(two_loads, false), 0);
  // ... and of one that loads once: still one load.
  EXPECT_EQ(clamp_gathers(
                [&](Func f, ImageParam a, ImageParam, Var x, Var y) {
                  Func g("g");
                  g(x, y) = a(x, y) * 2.0f;
                  f(x, y) = g(cx(x), y);
                },
                true),
            0);
}

// Gathers per point of out(x, y) = padded(x - 1, y), with padded a zero-padded 64 x 64
// input (BoundaryConditions::constant_exterior, inlined), over `width` x 64 points from x =
// `min` on, computed at root and vectorized by `lanes` along x.
double padded_copy_gathers(int min, int width, int64_t lanes) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func out("out");
  out(x, y) = BoundaryConditions::constant_exterior(in, 0.0f)(x - 1, y);
  in.set_estimates({{0, 64}, {0, 64}});
  out.set_estimates({{min, width}, {0, 64}});
  Pipeline p(out);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
  ScheduleState s(graph);
  FuncDecision d = testing::root_decision(s, false);
  d.stages[0].inner[0] = lanes;
  s.decide(d);
  // The boundary condition's Funcs inlined, the input's copy (the last Func) at root: a
  // producer of known region, which tells whether the reads pass its edges.
  const int n = static_cast<int>(graph->funcs.size());
  while (s.num_decided() < n) {
    s.decide(s.num_decided() < n - 1 ? testing::inline_decision() : testing::root_decision(s, false));
  }
  return Featurizer(graph).featurize(s).stages[0][F::gather_loads_per_point];
}

// A boundary condition's clamp is split out of the vectorized loop, but the vector that
// straddles each edge of a row keeps it and loads lane by lane (Halide 14's lowered
// statement of depthwise_conv's padded copy): two vectors a row gather, a larger share
// of the row with wider vectors, and none where the row stays inside the input.
TEST(Featurizer, VectorsStraddlingABoundaryConditionsEdgeGather) {
  EXPECT_FLOAT_EQ(padded_copy_gathers(0, 66, 16), 2.0f * 16 / 66);  // reads [-1, 64]
  EXPECT_FLOAT_EQ(padded_copy_gathers(0, 66, 32), 2.0f * 32 / 66);
  EXPECT_EQ(padded_copy_gathers(1, 64, 16), 0);  // reads [0, 63]: inside the input
}

TEST(Featurizer, FoldsInlinedFuncsIntoTheirConsumers) {
  auto graph = two_tap_graph();
  const Featurizer fz(graph);
  ScheduleState s(graph);
  s.decide(testing::root_decision(s, false));
  s.decide(testing::inline_decision());  // g
  const PipelineFeatures pf = fz.featurize(s);
  const StageFeatures &f = pf.stages[0];
  EXPECT_EQ(pf.stages[1][F::inlined], 1);
  EXPECT_EQ(f[F::inlined_calls], 2);
  EXPECT_EQ(f[F::ops_per_point], 3);  // the float add, and a mul per call of g
  EXPECT_EQ(f[F::inlined_ops_per_point], 2);
  EXPECT_EQ(f[F::loads_per_point], 2);  // in_im, twice, composed through g
  EXPECT_EQ(f[F::bytes_read_per_production], 65 * 64 * 4);
  // in_im inlined too: the reads reach the input buffer itself.
  s.decide(testing::inline_decision());
  const StageFeatures &f2 = fz.featurize(s).stages[0];
  EXPECT_EQ(f2[F::inlined_calls], 4);
  EXPECT_EQ(f2[F::ops_per_point], 3);
  EXPECT_EQ(f2[F::loads_per_point], 2);
  EXPECT_EQ(f2[F::bytes_read_per_production], 65 * 64 * 4);
}

// f(x, y) = g(x, y) + g(x + 1, y) over 2048 x 2048 points, g either computed per row of f
// (8 KB: it stays in cache until f reads it) or at root (16 MB: it does not).
TEST(Featurizer, ValuesKeptInCacheUntilReadMoveNoMemoryTraffic) {
  const auto graph = two_tap_graph(2048);
  const Featurizer fz(graph);
  auto with_g = [&](bool per_row) {
    ScheduleState s(graph);
    s.decide(testing::root_decision(s, false));  // f: serial, its y loop outermost
    FuncDecision d = testing::root_decision(s, false);
    if (per_row) {
      d.placement = Placement::kAt;
      d.compute_at = d.store_at = LoopRef{0, 0, 0};
    }
    s.decide(d);
    s.decide(testing::inline_decision());  // in_im
    return fz.featurize(s);
  };
  const double row = 2048 * 4.0, g_row = 2049 * 4.0;
  // f's iterations over y each fit in L2 and load what is not resident there: per row,
  // its own output only when g's row stays in cache, g's row too when g is at root.
  EXPECT_EQ(with_g(true).stages[0][F::traffic_beyond_l2], 2048 * row);
  EXPECT_EQ(with_g(false).stages[0][F::traffic_beyond_l2], 2048 * (row + g_row));
  // g per row writes into a buffer that stays in L1; at root its 16 MB go out to L3.
  EXPECT_EQ(with_g(true).stages[1][F::alloc_bytes], g_row);
  EXPECT_EQ(with_g(true).stages[1][F::traffic_beyond_l1], 2048 * g_row);  // reads of in
  EXPECT_EQ(with_g(false).stages[1][F::traffic_beyond_l1], 2048 * 2 * g_row);
}

// g computed per half of f's rows: 1024 x 2049 floats, 8.4 MB, and as much input read,
// which fit the usable half of a shared 48 MB L3 once. Computed serially, one half at a
// time, g stays there until f reads it; computed in a parallel loop, a half per core at a
// time, both must fit, and they do not: f then reads g from memory too.
TEST(Featurizer, AllocationsInAParallelLoopShareTheL3OncePerCore) {
  const auto graph = two_tap_graph(2048);
  MachineModel machine;
  machine.cores = 2;
  machine.l3_bytes = 48 << 20;
  const Featurizer fz(graph, machine);
  auto features = [&](bool parallel) {
    ScheduleState s(graph);
    FuncDecision f = testing::root_decision(s, false);
    f.stages[0].tile[1] = 1024;  // f's rows in two tiles: the loop g is computed in
    f.stages[0].parallel_loops = parallel ? 1 : 0;
    s.decide(f);
    FuncDecision g = testing::root_decision(s, false);
    g.placement = Placement::kAt;
    g.compute_at = g.store_at = LoopRef{0, 0, 0};
    EXPECT_EQ(s.check_decision(g), "");
    s.decide(g);
    s.decide(testing::inline_decision());  // in_im
    return fz.featurize(s);
  };
  const PipelineFeatures serial = features(false), parallel = features(true);
  EXPECT_EQ(serial.stages[1][F::alloc_bytes], 1024 * 2049 * 4.0);
  EXPECT_EQ(parallel.stages[1][F::alloc_bytes], 1024 * 2049 * 4.0);
  const double out = 2048 * 2048 * 4.0, g_halves = 2 * 1024 * 2049 * 4.0;
  EXPECT_EQ(serial.stages[0][F::traffic_beyond_l3], out);
  EXPECT_EQ(parallel.stages[0][F::traffic_beyond_l3], out + g_halves);
  // L2 is per core, and holds neither.
  EXPECT_EQ(serial.stages[0][F::traffic_beyond_l2], out + g_halves);
  EXPECT_EQ(parallel.stages[0][F::traffic_beyond_l2], out + g_halves);
}

// A consumer finds a producer's values in a cache only if all that one production of the
// producer touches fits there, not its allocation alone: g at root is 16.8 MB, and its
// production streams as much input through the caches while it writes itself.
TEST(Featurizer, AProducersValuesStayCachedOnlyIfItsWholeProductionFits) {
  const auto graph = two_tap_graph(2048);
  auto f_beyond_l3 = [&](int64_t l3_bytes) {
    MachineModel machine;
    machine.l3_bytes = l3_bytes;
    const Featurizer fz(graph, machine);
    ScheduleState s(graph);
    s.decide(testing::root_decision(s, false));  // f
    s.decide(testing::root_decision(s, false));  // g
    s.decide(testing::inline_decision());        // in_im
    return fz.featurize(s).stages[0][F::traffic_beyond_l3];
  };
  const double out = 2048 * 2048 * 4.0, g = 2049 * 2048 * 4.0;
  // Half of 48 MB holds g (16.8 MB) but not g and its input (33.6 MB); half of 80 MB does.
  EXPECT_EQ(f_beyond_l3(48 << 20), out + g);
  EXPECT_EQ(f_beyond_l3(80 << 20), out);
}

// Points the blur chain's blur_x (3 rows per row of the output, 96 rows of 128 points)
// computes, computed per row of the output (sharp at root, serial, its y loop outermost;
// blur_y inlined), stored there or, when it slides, at root; its rows split into unrolled
// blocks of `inner_y`.
float blur_x_points_per_row_of_sharp(bool slides, int64_t inner_y) {
  Halide::Pipeline p = testing::blur_chain_pipeline(128, 96);
  const auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
  ScheduleState s(graph);
  s.decide(testing::root_decision(s, false));  // sharp
  int blur_x = -1;
  while (!s.complete()) {
    const int f = s.num_decided();
    const std::string name = stable_func_name(graph->funcs[f].name);
    FuncDecision d = testing::root_decision(s, false);
    if (name == "blur_y") d = testing::inline_decision();
    if (name == "blur_x") {
      blur_x = f;
      d.placement = Placement::kAt;
      d.compute_at = LoopRef{0, 0, 0};
      d.store_at = slides ? LoopRef{} : d.compute_at;
      d.stages[0].inner[1] = inner_y;
    }
    EXPECT_EQ(s.check_decision(d), "") << name;
    s.decide(d);
  }
  for (const StageFeatures &sf : Featurizer(graph).featurize(s).stages) {
    if (sf.func == blur_x) return sf[F::points_total];
  }
  ADD_FAILURE() << "no blur_x";
  return 0.0f;
}

// Stored per row of the output, blur_x computes 3 x 128 points per row; stored at root,
// Halide slides its window down the rows and computes each of its 98 rows once.
TEST(Featurizer, ASlidingWindowComputesEachPointOnce) {
  EXPECT_EQ(blur_x_points_per_row_of_sharp(false, 1), 96 * 3 * 128);
  EXPECT_EQ(blur_x_points_per_row_of_sharp(true, 1), 98 * 128);
}

// In unrolled blocks of two rows, which round up: per row of the output blur_x computes
// two blocks for its three rows, and sliding down the rows one block per step. Halide's
// own counts (trace_stores, the same schedule, JIT): 384 rows and 196 rows (its first
// window rounds three rows up to four).
TEST(Featurizer, ASplitThatRoundsUpComputesWholeInnerBlocks) {
  EXPECT_EQ(blur_x_points_per_row_of_sharp(false, 2), 96 * 4 * 128);
  EXPECT_NEAR(blur_x_points_per_row_of_sharp(true, 2), 196 * 128, 196 * 128 * 0.03);
}

// c(x, y) = sum over k < 64 of a(k, y) * b(x, k), 64 x 64, at root, with its update in a
// block of 2 vectors of x by `rows` rows of y: inside the reduction loop (the register
// blocks experts write) or, reduction outside, inside a loop over rows inside it.
StageFeatures blocked_update(int rows, bool reduction_outside) {
  const auto graph = testing::graph_of(testing::matmul_pipeline(64));
  const Featurizer fz(graph);  // 512-bit vectors: 32 registers of 16 floats
  ScheduleState s(graph);
  FuncDecision d = testing::root_decision(s, false);
  d.stages[1].inner = {32, rows};
  d.stages[1].tile = {64, 8};  // middle loops of 2 blocks each way
  d.stages[1].reduction_outside = reduction_outside;
  s.decide(d);
  return fz.featurize(s).stages[1];
}

TEST(Featurizer, CountsTheLoadsAndStoresOfARegisterBlock) {
  const StageFeatures in_registers = blocked_update(1, false);
  EXPECT_EQ(in_registers[F::block_accumulators], 2);  // 2 vectors of one row
  EXPECT_EQ(in_registers[F::accumulators_in_registers], 1);
  // Per k: the row's value (broadcast), 2 vectors of b; the accumulators loaded and stored
  // once per 64 k.
  EXPECT_FLOAT_EQ(in_registers[F::block_loads], 1 + 2 + 2.0f / 64);
  EXPECT_FLOAT_EQ(in_registers[F::block_stores], 2.0f / 64);
  EXPECT_EQ(in_registers[F::block_waits_for_previous], 1);  // 64 dependent sums

  // Rows of c are a symbolic stride apart: LLVM cannot tell 4 rows' accumulators apart
  // and loads and stores them every k.
  const StageFeatures across_rows = blocked_update(4, false);
  EXPECT_EQ(across_rows[F::block_accumulators], 8);
  EXPECT_EQ(across_rows[F::accumulators_in_registers], 0);
  EXPECT_EQ(across_rows[F::block_loads], 4 + 2 + 8);
  EXPECT_EQ(across_rows[F::block_stores], 8);
  EXPECT_EQ(across_rows[F::block_waits_for_previous], 1);

  // The loop around the block walks tiles of rows: every block loads and stores its sums.
  // The rows' 4 values do not move along that loop (over x): loaded once per its 2 steps.
  const StageFeatures in_memory = blocked_update(4, true);
  EXPECT_EQ(in_memory[F::accumulators_in_registers], 0);
  EXPECT_EQ(in_memory[F::block_loads], 4.0 / 2 + 2 + 8);
  EXPECT_EQ(in_memory[F::block_stores], 8);
  EXPECT_EQ(in_memory[F::block_waits_for_previous], 0);  // the next block sums other rows
}

// f(x, y) = in(x, y) * 2 over 1024 x 1024 floats at root, in tiles `width` wide and 64
// rows high: 8 MB through memory, more than the usable L3, whatever the tiles.
PipelineFeatures scaled_in_tiles(int64_t width) {
  const auto graph = testing::graph_of(testing::scale_pipeline(1024));
  ScheduleState s(graph);
  FuncDecision d = testing::root_decision(s, false);
  d.stages[0].tile = {width, 64};
  d.stages[0].inner = {16, 1};
  s.decide(d);
  s.decide(testing::inline_decision());  // in_im
  return Featurizer(graph).featurize(s);
}

TEST(Featurizer, CountsTheStreamsOfTrafficFromAndToMemory) {
  const double bytes = 2 * 1024 * 1024 * 4.0;  // the input read, the output written
  // Tiles of whole rows walk each buffer from start to end: a stream per page.
  const StageFeatures whole_rows = scaled_in_tiles(1024).stages[0];
  EXPECT_EQ(whole_rows[F::traffic_beyond_l3], bytes);
  EXPECT_EQ(whole_rows[F::memory_streams], bytes / 4096);
  // Tiles 128 wide jump to the next row after 512 bytes of each buffer.
  const StageFeatures narrow = scaled_in_tiles(128).stages[0];
  EXPECT_EQ(narrow[F::traffic_beyond_l3], bytes);
  EXPECT_EQ(narrow[F::memory_streams], bytes / 512);
}

// h(x) = 0; h(x) += (in(x) - w(k))^2 over a 16-point k: the block is one vector of x with
// the k loop around it.
StageFeatures nearest_update(int64_t lanes = 16) {
  using namespace Halide;
  ImageParam in(Float(32), 1, "in"), w(Float(32), 1, "w");
  Var x("x");
  RDom k(0, 16, "k");
  Func h("h");
  h(x) = 0.0f;
  h(x) += (in(x) - w(k)) * (in(x) - w(k));
  in.set_estimates({{0, 1024}});
  w.set_estimates({{0, 16}});
  h.set_estimates({{0, 1024}});
  const auto graph = testing::graph_of(Pipeline(h));
  ScheduleState s(graph);
  FuncDecision d = testing::root_decision(s, false);
  for (StageTiling &t : d.stages) t.tile = t.inner = {lanes};
  s.decide(d);
  while (s.num_decided() < static_cast<int>(graph->funcs.size()))
    s.decide(testing::inline_decision());
  return Featurizer(graph).featurize(s).stages[1];
}

TEST(Featurizer, LoadsThatDoNotMoveWithTheSerialLoopAreHoistedOutOfIt) {
  const StageFeatures f = nearest_update();
  EXPECT_EQ(f[F::accumulators_in_registers], 1);
  // Per k: w(k), broadcast; in(x) and the accumulator once per pass of the 16 k.
  EXPECT_FLOAT_EQ(f[F::block_loads], 1 + 1.0f / 16 + 1.0f / 16);
}

// The same block of 4 rows in prod, computed per tile of 8 rows of c = prod, c's tile
// `columns` wide: LLVM keeps the block in registers only where it can tell the rows apart,
// in a buffer whose row stride Halide knows as a constant.
StageFeatures block_in_tile(int columns) {
  const auto graph = testing::graph_of(testing::matmul_copy_pipeline(64));
  const Featurizer fz(graph);
  ScheduleState s(graph);
  FuncDecision c = testing::root_decision(s, false);
  c.stages[0].tile = {columns, 8};
  s.decide(c);
  FuncDecision prod = testing::root_decision(s, false);
  prod.placement = Placement::kAt;
  // Inside c's innermost tile loop: of y alone for whole rows, of x inside y's otherwise.
  prod.compute_at = prod.store_at = LoopRef{0, 0, columns < 64 ? 1 : 0};
  prod.stages[1].inner = {32, 4};
  prod.stages[1].tile = {columns, 8};
  s.decide(prod);
  return fz.featurize(s).stages[2];
}

TEST(Featurizer, ABlockAcrossRowsStaysInRegistersWhereTheRowStrideIsAConstant) {
  // Tiles 32 columns wide: 32 x 8 floats (Halide 14 allocates prod[float32 * 256]).
  const StageFeatures tiled = block_in_tile(32);
  EXPECT_EQ(tiled[F::block_accumulators], 8);
  EXPECT_EQ(tiled[F::accumulators_in_registers], 1);
  EXPECT_FLOAT_EQ(tiled[F::block_stores], 8.0f / 64);
  // Tiles of whole rows: every column of the output, a width the caller passes in
  // (prod[float32 * c.extent.0 * 8]); the compiled loop loads and stores all 8 sums every k.
  const StageFeatures whole_rows = block_in_tile(64);
  EXPECT_EQ(whole_rows[F::block_accumulators], 8);
  EXPECT_EQ(whole_rows[F::accumulators_in_registers], 0);
  EXPECT_EQ(whole_rows[F::block_stores], 8);
}

// Parallel tiles of 4 of 5 rows, guarded: tasks of 4 rows and of 1, which keep two cores
// busy 1.25 times one core's speed, not twice. An output shifts its last tile inwards
// instead: tasks of 4 rows each.
TEST(Featurizer, APartialLastParallelTileIsASmallerTask) {
  auto utilization = [](int rows, int tile, bool of_output) {
    using namespace Halide;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), f("f");
    g(x, y) = in(x, y) * 2.0f;
    f(x, y) = g(x, y) + 1.0f;
    in.set_estimates({{0, 64}, {0, rows}});
    f.set_estimates({{0, 64}, {0, rows}});
    Pipeline p(f);
    auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
    const Featurizer fz(graph);
    ScheduleState s(graph);
    FuncDecision d = testing::root_decision(s, false);
    d.stages[0].tile = {64, tile};
    d.stages[0].parallel_loops = 1;
    s.decide(of_output ? d : testing::root_decision(s, false));
    s.decide(of_output ? testing::root_decision(s, false) : d);
    return fz.featurize(s).stages[of_output ? 0 : 1][F::core_utilization];
  };
  EXPECT_FLOAT_EQ(utilization(5, 4, false), 1.25f / 2);
  EXPECT_FLOAT_EQ(utilization(8, 4, false), 1);
  // Three tasks (4, 4, 1 rows): two rounds, the second only a quarter as long.
  EXPECT_FLOAT_EQ(utilization(9, 4, false), 2.25f / (2 * 1.25f));
  EXPECT_FLOAT_EQ(utilization(3, 4, false), 0.5f);  // one partial task on two cores
  EXPECT_FLOAT_EQ(utilization(5, 4, true), 1);
  EXPECT_FLOAT_EQ(utilization(9, 4, true), 0.75f);  // three whole tasks in two rounds
}

TEST(Featurizer, ListsEveryStageAndTheStageDag) {
  auto graph = std::make_shared<const PipelineGraph>([] {
    Halide::Pipeline p = testing::matmul_pipeline(32);
    return analyze_pipeline(p);
  }());
  const Featurizer fz(graph);
  const PipelineFeatures &inv = fz.invariant();
  // c (2 stages), a_im, b_im.
  ASSERT_EQ(inv.stages.size(), 4u);
  EXPECT_EQ(inv.stages[1][InvariantFeature::is_update], 1);
  EXPECT_EQ(inv.stages[1][InvariantFeature::reduction_points], 32);
  std::vector<std::pair<int, int>> edges = inv.edges;
  std::sort(edges.begin(), edges.end());
  EXPECT_EQ(edges, (std::vector<std::pair<int, int>>{{0, 1}, {2, 1}, {3, 1}}));
}

bool same_features(const PipelineFeatures &a, const PipelineFeatures &b) {
  if (a.stages.size() != b.stages.size()) return false;
  for (size_t i = 0; i < a.stages.size(); ++i) {
    if (std::memcmp(a.stages[i].scheduled.data(), b.stages[i].scheduled.data(),
                    sizeof(ScheduledFeatures)) != 0 ||
        std::memcmp(a.stages[i].invariant.data(), b.stages[i].invariant.data(),
                    sizeof(a.stages[i].invariant)) != 0) {
      return false;
    }
  }
  return a.edges == b.edges;
}

// Rollouts that branch like a tree search: at every step several children are featurized
// through one shared cache, then one of them is followed.
void check_memoized_equals_fresh(const std::function<Halide::Pipeline()> &build, uint64_t seed) {
  Halide::Pipeline p = build();
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
  const Featurizer fz(graph);
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  FeatureCache cache;
  std::mt19937_64 rng(seed);
  for (int rollout = 0; rollout < 10; ++rollout) {
    ScheduleState s(graph);
    while (!s.complete()) {
      std::vector<ScheduleState> children;
      for (int k = 0; k < 3; ++k) {
        const auto d = space.random_decision(s, rng);
        ASSERT_TRUE(d.has_value()) << "dead end";
        children.push_back(s.with_decision(*d));
      }
      for (const ScheduleState &c : children) {
        ASSERT_TRUE(same_features(fz.featurize(c, cache), fz.featurize(c)))
            << "rollout " << rollout << ", Func " << c.num_decided() - 1;
      }
      s = children[0];
    }
  }
  EXPECT_GT(cache.hits(), cache.misses());
}

TEST(Featurizer, MemoizedEqualsFreshOnBlurChain) {
  check_memoized_equals_fresh([] { return testing::blur_chain_pipeline(); }, 1);
}
TEST(Featurizer, MemoizedEqualsFreshOnBilateralGrid) {
  check_memoized_equals_fresh([] { return testing::bilateral_grid_pipeline(); }, 2);
}
TEST(Featurizer, MemoizedEqualsFreshOnConvolution) {
  check_memoized_equals_fresh([] { return testing::conv_relu_pipeline(); }, 3);
}
TEST(Featurizer, MemoizedEqualsFreshOnPyramid) {
  check_memoized_equals_fresh([] { return testing::pyramid_pipeline(); }, 5);
}

}  // namespace
}  // namespace protuner
