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

void expect_parallel_vector_faster(const std::shared_ptr<const PipelineGraph> &g) {
  AnalyticModel model(g);
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
  AnalyticModel model(graph);
  const std::vector<double> t = model.predict({&root, &inlined});
  EXPECT_LT(t[0] * 4, t[1]) << "root " << t[0] << " s, inlined " << t[1] << " s";
}

TEST(AnalyticModel, PredictsTheSameForABatchAsOneAtATime) {
  auto g = graph_of(testing::blur_chain_pipeline(256, 256));
  const ScheduleState a = all_root(g, false), b = all_root(g, true);
  AnalyticModel batched(g), single(g);
  const std::vector<double> both = batched.predict({&a, &b});
  EXPECT_EQ(both[0], single.predict({&a})[0]);
  EXPECT_EQ(both[1], single.predict({&b})[0]);
}

}  // namespace
}  // namespace protuner
