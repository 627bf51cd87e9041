// The pipeline graph of a small generator: order, stages, producer/consumer edges.
#include "searcher/pipeline_graph.h"

#include <gtest/gtest.h>

#include <Halide.h>

#include "common/app.h"

namespace protuner {
namespace {

TEST(PipelineGraph, ListsFuncsConsumersFirstWithTheirEdges) {
  AppInstance app = AppInstance::create(
      {"test_blur", PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", {}}, Halide::get_host_target());
  const PipelineGraph g = analyze_pipeline(app.pipeline());
  ASSERT_GE(g.funcs.size(), 3u);  // output, blur_x, the boundary-condition wrapper
  EXPECT_TRUE(g.funcs[0].is_output);
  EXPECT_FALSE(g.funcs[0].inlinable());
  const int blur_x = g.find("blur_x");
  ASSERT_GT(blur_x, 0);
  EXPECT_TRUE(g.funcs[blur_x].inlinable());
  EXPECT_EQ(g.funcs[blur_x].value_types, (std::vector<std::string>{"float32"}));
  EXPECT_EQ(g.funcs[0].producers, (std::vector<int>{blur_x}));
  EXPECT_EQ(g.funcs[blur_x].consumers, (std::vector<int>{0}));
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    for (int p : g.funcs[i].producers) EXPECT_GT(p, static_cast<int>(i)) << "producer before consumer";
  }
}

TEST(PipelineGraph, UpdateStagesCarryTheirReductionVariables) {
  Halide::Func hist("hist"), out("out");
  Halide::Var x("x");
  Halide::RDom r(0, 100, "r");
  Halide::ImageParam in(Halide::UInt(8), 1, "in");
  hist(x) = 0;
  hist(in(r)) += 1;
  out(x) = hist(x) * 2;
  Halide::Pipeline p(out);
  const PipelineGraph g = analyze_pipeline(p);
  const int h = g.find("hist");
  ASSERT_GE(h, 0);
  ASSERT_EQ(g.funcs[h].stages.size(), 2u);
  EXPECT_FALSE(g.funcs[h].inlinable());
  EXPECT_EQ(g.funcs[h].stages[0].pure_vars, (std::vector<std::string>{"x"}));
  EXPECT_EQ(g.funcs[h].stages[1].rvars.size(), 1u);
}

}  // namespace
}  // namespace protuner
