// The analytic cost model ranks obviously better schedules better: parallel and vectorized
// beats serial scalar, and inlining a stencil of a stencil (49x recompute) loses to root.
// How well it ranks real, measured schedules is in tests/bench/analytic_model_bench.cpp.
#include <gtest/gtest.h>

#include <Halide.h>

#include "searcher/cost/analytic_model.h"
#include "tests/searcher/cost_test_support.h"
#include "tests/searcher/test_pipelines.h"
#include "tests/searcher/search_fixtures.h"

namespace protuner {
namespace {

using testing::graph_of;

// Every Func at root, all with one kind of tiling.
ScheduleState all_root(const std::shared_ptr<const PipelineGraph> &g, bool parallel_vector) {
  ScheduleState s(g);
  while (!s.complete()) s.decide(testing::root_decision(s, parallel_vector));
  return s;
}

// The output at root, serial, its x loop in tiles of tile_x with an inner loop of inner_x
// (vectorized when more than 1; a tile of 1 puts the y loop innermost); the rest inlined.
ScheduleState output_at_root(const std::shared_ptr<const PipelineGraph> &g, int64_t inner_x,
                             int64_t tile_x) {
  ScheduleState s(g);
  FuncDecision d = testing::root_decision(s, false);
  d.stages[0].inner[0] = inner_x;
  d.stages[0].tile[0] = tile_x;
  s.decide(d);
  while (!s.complete()) s.decide(testing::inline_decision());
  return s;
}

// Both schedules allocate the same root intermediates, whose page faults (serial, the same
// in both) would hide the difference; they are set aside here.
void expect_parallel_vector_faster(const std::shared_ptr<const PipelineGraph> &g) {
  AnalyticModelOptions options;
  options.page_fault_seconds_per_byte = 0;
  AnalyticModel model(g, MachineModel{}, options);
  const ScheduleState serial = all_root(g, false), fast = all_root(g, true);
  const std::vector<double> t = model.predict({&serial, &fast});
  EXPECT_GT(t[0], 0);
  EXPECT_LT(t[1] * 2, t[0]) << "serial " << t[0] << " s, parallel vectorized " << t[1] << " s";
}

TEST(AnalyticModel, PredictsParallelVectorizedBlurChainFaster) {
  expect_parallel_vector_faster(graph_of(testing::blur_chain_pipeline(1024, 1024)));
}

TEST(AnalyticModel, PredictsParallelVectorizedMatmulFaster) {
  expect_parallel_vector_faster(graph_of(testing::matmul_pipeline(256)));
}

TEST(AnalyticModel, PredictsInliningAStencilOfAStencilSlowerThanRoot) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func clamped = BoundaryConditions::repeat_edge(in);
  Func g("g");
  Expr sum_f = 0.0f, sum_g = 0.0f;
  for (int dy = -3; dy <= 3; ++dy) {
    for (int dx = -3; dx <= 3; ++dx) sum_f += clamped(x + dx, y + dy);
  }
  Func stencil("stencil");
  stencil(x, y) = sum_f;
  for (int dy = -3; dy <= 3; ++dy) {
    for (int dx = -3; dx <= 3; ++dx) sum_g += stencil(x + dx, y + dy);
  }
  g(x, y) = sum_g;
  in.set_estimates({{0, 512}, {0, 512}});
  g.set_estimates({{0, 512}, {0, 512}});
  auto graph = graph_of(Pipeline(g));
  ASSERT_EQ(stable_func_name(graph->funcs[1].name), "stencil");

  ScheduleState root(graph), inlined(graph);
  root.decide(testing::root_decision(root, true));
  inlined.decide(testing::root_decision(inlined, true));
  root.decide(testing::root_decision(root, true));
  inlined.decide(testing::inline_decision());
  while (!root.complete()) {
    root.decide(testing::root_decision(root, true));
    inlined.decide(testing::root_decision(inlined, true));
  }
  // The compute it recomputes, not the root intermediate's page faults, is what this
  // checks: they are set aside.
  AnalyticModelOptions options;
  options.page_fault_seconds_per_byte = 0;
  AnalyticModel model(graph, MachineModel{}, options);
  const std::vector<double> t = model.predict({&root, &inlined});
  EXPECT_LT(t[0] * 4, t[1]) << "root " << t[0] << " s, inlined " << t[1] << " s";
}

// LLVM vectorizes an unvectorized innermost loop over x by itself (Halide 14 leaves its
// loop vectorizer on; measured here, a pointwise chain runs as fast either way), so such a
// stage costs no more than a few times its explicitly vectorized schedule; a stage whose
// innermost loop walks y, across rows, stays scalar.
TEST(AnalyticModel, CountsLlvmVectorizingAnUnvectorizedLoopOverX) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func f("f");
  Expr v = in(x, y);
  for (int k = 0; k < 8; ++k) v = v * 1.01f + sqrt(v + k);
  f(x, y) = v;
  in.set_estimates({{0, 1024}, {0, 1024}});
  f.set_estimates({{0, 1024}, {0, 1024}});
  auto graph = graph_of(Pipeline(f));
  const ScheduleState vectorized = output_at_root(graph, 16, 1024),
                      scalar_x = output_at_root(graph, 1, 1024),
                      scalar_y = output_at_root(graph, 1, 1);
  AnalyticModel model(graph);
  const std::vector<double> t = model.predict({&vectorized, &scalar_x, &scalar_y});
  EXPECT_LT(t[1], 3 * t[0]) << "vectorized " << t[0] << " s, loop over x " << t[1] << " s";
  EXPECT_GT(t[2], 5 * t[0]) << "vectorized " << t[0] << " s, loop over y " << t[2] << " s";
}

// Every point a stage computes is stored: a fill of zeros has no arithmetic and no loads,
// and still takes a store per point when scalar (its innermost loop walks y, so LLVM does
// not vectorize it) and a store per vector when vectorized. (nl_means' patch sums start
// with such fills, and searches proposed them scalar.)
TEST(AnalyticModel, CountsAStorePerPointOrPerVector) {
  using namespace Halide;
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = 0.0f;
  f.set_estimates({{0, 1024}, {0, 1024}});
  auto graph = graph_of(Pipeline(f));
  const ScheduleState vectorized = output_at_root(graph, 16, 1024),
                      scalar_y = output_at_root(graph, 1, 1);
  const MachineModel machine;
  const AnalyticModelOptions o;
  const Featurizer fz(graph, machine);
  auto compute = [&](const ScheduleState &s) {
    return analytic_terms(fz.featurize(s), machine, o)[static_cast<int>(AnalyticTerm::kCompute)];
  };
  const double points = 1024.0 * 1024.0;
  // Scalar: a loop iteration and a store per point, at least.
  EXPECT_GE(compute(scalar_y),
            points * (o.cycles_per_block + o.cycles_per_store) / machine.clock_hz);
  EXPECT_LT(compute(vectorized), compute(scalar_y) / 8);
}

// A lookup gathers lane by lane in vector code; in scalar code (a loop over y, which LLVM
// does not vectorize) the same read is one load like any other, whatever a gathered lane
// costs. (Charged both, hist's serial scatter would cost more than a candidate's whole
// pipeline runs in.)
TEST(AnalyticModel, ChargesGatheredLanesOnlyInVectorCode) {
  using namespace Halide;
  ImageParam idx(Int(32), 2, "idx"), lut(Float(32), 1, "lut");
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = lut(idx(x, y));
  idx.set_estimates({{0, 1024}, {0, 1024}});
  lut.set_estimates({{0, 256}});
  f.set_estimates({{0, 1024}, {0, 1024}});
  auto graph = graph_of(Pipeline(f));
  const ScheduleState vectorized = output_at_root(graph, 16, 1024),
                      scalar_y = output_at_root(graph, 1, 1);
  const MachineModel machine;
  const Featurizer fz(graph, machine);
  AnalyticModelOptions dear;
  dear.cycles_per_gathered_lane = 100;
  auto compute = [&](const ScheduleState &s, const AnalyticModelOptions &o) {
    return analytic_terms(fz.featurize(s), machine, o)[static_cast<int>(AnalyticTerm::kCompute)];
  };
  EXPECT_EQ(compute(scalar_y, dear), compute(scalar_y, AnalyticModelOptions{}));
  EXPECT_GT(compute(vectorized, dear), 10 * compute(vectorized, AnalyticModelOptions{}));
}

// A tile 128 wide streams each row of its input and output in runs of 512 bytes; tiles of
// whole rows stream a page at a time. The bytes are the same; each stream costs
// memory_stream_seconds more.
TEST(AnalyticModel, ChargesEachStreamFromAndToMemory) {
  auto graph = graph_of(testing::scale_pipeline(1024));
  const ScheduleState whole_rows = output_at_root(graph, 16, 1024),
                      narrow = output_at_root(graph, 16, 128);
  const MachineModel machine;
  const Featurizer fz(graph, machine);
  const AnalyticModelOptions options;
  auto memory = [&](const ScheduleState &s) {
    return analytic_terms(fz.featurize(s), machine,
                          options)[static_cast<int>(AnalyticTerm::kMemoryTraffic)];
  };
  const double bytes = 2 * 1024 * 1024 * 4.0;  // serial: one core, no speedup
  EXPECT_NEAR(memory(narrow) - memory(whole_rows),
              (bytes / 512 - bytes / 4096) * options.memory_stream_seconds, 1e-9);
  AnalyticModel model(graph, machine, options);
  const std::vector<double> t = model.predict({&whole_rows, &narrow});
  EXPECT_LT(t[0], t[1]);
}

TEST(AnalyticModel, PredictsTheSameForABatchAsOneAtATime) {
  auto g = graph_of(testing::blur_chain_pipeline(256, 256));
  const ScheduleState a = all_root(g, false), b = all_root(g, true);
  AnalyticModel batched(g), single(g);
  const std::vector<double> both = batched.predict({&a, &b});
  EXPECT_EQ(both[0], single.predict({&a})[0]);
  EXPECT_EQ(both[1], single.predict({&b})[0]);
}

// glibc hands the heap's free top back to the kernel once it exceeds 128 KiB: two 70 KB
// buffers freed together at the end of every tile page-fault afresh in every tile, though
// neither alone would. Stored at loops of other depths, or in disjoint pipelines, they are
// freed apart.
TEST(AnalyticModel, HeapBuffersFreedTogetherPastTheTrimThresholdPageFault) {
  using F = ScheduledFeature;
  auto buffer = [](double bytes, double depth) {
    StageFeatures s;
    auto set = [&](F f, double v) { s.scheduled[static_cast<int>(f)] = static_cast<float>(v); };
    set(F::decided, 1);
    set(F::alloc_bytes, bytes);
    set(F::realizations, 128);
    set(F::store_depth, depth);
    set(F::alloc_bytes_total, bytes * 128);
    return s;
  };
  const AnalyticModelOptions options;
  ASSERT_LT(70e3, options.page_fault_min_bytes);
  ASSERT_GT(140e3, options.page_fault_min_bytes);
  auto faults = [&](const PipelineFeatures &p) {
    return analytic_terms(p, MachineModel{}, options)[static_cast<int>(AnalyticTerm::kPageFaults)];
  };
  PipelineFeatures together;
  together.stages = {buffer(70e3, 2), buffer(70e3, 2)};
  together.edges = {{1, 0}};
  EXPECT_EQ(heap_bytes_freed_together(together, options), (std::vector<double>{140e3, 140e3}));
  EXPECT_DOUBLE_EQ(faults(together), 2 * 70e3 * 128 * options.page_fault_seconds_per_byte);

  PipelineFeatures apart;
  apart.stages = {buffer(70e3, 2), buffer(70e3, 1)};
  apart.edges = {{1, 0}};
  EXPECT_EQ(faults(apart), 0);
  PipelineFeatures disjoint = together;  // two pipelines side by side
  disjoint.edges.clear();
  EXPECT_EQ(faults(disjoint), 0);
  PipelineFeatures alone;
  alone.stages = {buffer(70e3, 2)};
  EXPECT_EQ(faults(alone), 0);
  PipelineFeatures big;
  big.stages = {buffer(140e3, 2)};
  EXPECT_GT(faults(big), 0);
}

}  // namespace
}  // namespace protuner
