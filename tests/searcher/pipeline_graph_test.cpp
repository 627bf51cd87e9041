// The pipeline graph: order, stages, edges, and the regions its footprints predict,
// checked against the regions Halide itself realizes for the same (compute-root) schedule.
#include "common/pipeline/pipeline_graph.h"

#include <gtest/gtest.h>

#include <Halide.h>
#include <map>

#include "common/app.h"
#include "common/host_target.h"
#include "common/pipeline_io.h"

namespace protuner {
namespace {

using Halide::Func;
using Halide::Var;

// Realized regions per Func, as Halide's tracing reports them.
std::map<std::string, Region> &traced() {
  static std::map<std::string, Region> regions;
  return regions;
}

int32_t record_realization(Halide::JITUserContext *, const halide_trace_event_t *e) {
  if (e->event == halide_trace_begin_realization) {
    Region r;
    for (int d = 0; d < e->dimensions / 2; ++d) {
      r.push_back({e->coordinates[2 * d], e->coordinates[2 * d] + e->coordinates[2 * d + 1] - 1});
    }
    traced()[e->func] = r;
  }
  return 0;
}

// Schedules everything compute_root, realizes the outputs at their estimates on random
// inputs, and returns the region Halide realized for every non-output Func.
std::map<std::string, Region> halide_root_regions(Halide::Pipeline &p) {
  traced().clear();
  apply_root_schedule(p);
  for (auto &[name, fn] : Halide::Internal::build_environment([&] {
         std::vector<Halide::Internal::Function> o;
         for (const Func &f : p.outputs()) o.push_back(f.function());
         return o;
       }())) {
    Func(fn).trace_realizations();
  }
  bind_random_inputs(p, 3);
  Halide::Realization out = allocate_estimated_outputs(p);
  p.jit_handlers().custom_trace = record_realization;
  p.realize(out, host_target());
  return traced();
}

// The index of the Func a test named `name`: Halide appends "$<n>" to a name another Func
// of the process already has, so the graph's name depends on which tests ran before.
int find_named(const PipelineGraph &g, const std::string &name) {
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    if (stable_func_name(g.funcs[i].name) == name) return static_cast<int>(i);
  }
  return -1;
}

void expect_regions_match_halide(Halide::Pipeline &p) {
  const PipelineGraph g = analyze_pipeline(p);
  const auto halide = halide_root_regions(p);
  int compared = 0;
  for (const FuncNode &f : g.funcs) {
    auto it = halide.find(f.name);
    if (f.is_output || it == halide.end()) continue;
    ++compared;
    ASSERT_EQ(it->second.size(), f.root_region.size()) << f.name;
    for (size_t d = 0; d < f.root_region.size(); ++d) {
      EXPECT_EQ(f.root_region[d].min, it->second[d].min) << f.name << " dim " << d;
      EXPECT_EQ(f.root_region[d].max, it->second[d].max) << f.name << " dim " << d;
    }
  }
  EXPECT_GT(compared, 0) << "no Func was compared";
}

TEST(PipelineGraph, ListsFuncsConsumersFirstWithTheirEdges) {
  AppInstance app = AppInstance::create(
      {"test_blur", PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", {}}, host_target());
  const PipelineGraph g = analyze_pipeline(app.pipeline());
  ASSERT_GE(g.funcs.size(), 3u);  // output, blur_x, the boundary-condition wrapper
  EXPECT_TRUE(g.funcs[0].is_output);
  EXPECT_FALSE(g.funcs[0].inlinable());
  const int blur_x = find_named(g, "blur_x");
  ASSERT_GT(blur_x, 0);
  EXPECT_TRUE(g.funcs[blur_x].inlinable());
  EXPECT_EQ(g.funcs[blur_x].value_types, (std::vector<std::string>{"float32"}));
  EXPECT_EQ(g.funcs[0].producers, (std::vector<int>{blur_x}));
  EXPECT_EQ(g.funcs[blur_x].consumers, (std::vector<int>{0}));
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    for (int p : g.funcs[i].producers) EXPECT_GT(p, static_cast<int>(i)) << "producer first";
  }
  // The output is 512x256; blur_x is needed one row above and below.
  EXPECT_EQ(g.funcs[blur_x].root_region, (Region{{0, 511}, {-1, 256}}));
  expect_regions_match_halide(app.pipeline());
}

TEST(PipelineGraph, FootprintFollowsTheConsumerRegion) {
  AppInstance app = AppInstance::create(
      {"test_blur", PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", {}}, host_target());
  const PipelineGraph g = analyze_pipeline(app.pipeline());
  const StageNode &out = g.funcs[0].stages[0];
  ASSERT_EQ(out.footprints.size(), 1u);
  EXPECT_TRUE(out.footprints[0].exact());
  // A 16x8 tile of the output at (32, 64) needs rows 63..72 of blur_x.
  const Region need = out.footprints[0].eval({{32, 47}, {64, 71}}, {});
  EXPECT_EQ(need, (Region{{32, 47}, {63, 72}}));
}

// Shifted and scaled reads keep a box's extents wherever the box lies; so does halving
// (a box of t points reads (t + 1) / 2 or t / 2 + 1, alike at every offset). A division by
// 3 does not: [0, 4] / 3 reads two points, [5, 9] / 3 three. The input's Func is read as
// itself, but also by `thirds`, whose regions vary: so do its own.
TEST(PipelineGraph, MarksFuncsWhoseReadsKeepABoxsExtents) {
  Halide::ImageParam in(Halide::Float(32), 1, "in");
  Halide::Var x("x");
  Halide::Func shifted("shifted"), doubled("doubled"), halved("halved"), thirds("thirds"),
      out("out");
  shifted(x) = in(x) + 1.0f;
  doubled(x) = in(x) + 2.0f;
  halved(x) = in(x) + 3.0f;
  thirds(x) = in(x) + 4.0f;
  out(x) = shifted(x + 1) + doubled(2 * x) + halved(x / 2) + thirds(x / 3);
  in.set_estimates({{0, 256}});
  out.set_estimates({{0, 64}});
  Halide::Pipeline p(out);
  const PipelineGraph g = analyze_pipeline(p);
  std::map<std::string, bool> keeps;
  for (const FuncNode &f : g.funcs) keeps[stable_func_name(f.name)] = f.reads_keep_size;
  EXPECT_EQ(keeps, (std::map<std::string, bool>{{"out", true},
                                                {"in_im", false},
                                                {"shifted", true},
                                                {"doubled", true},
                                                {"halved", true},
                                                {"thirds", false}}));
}

// A matrix product reads a(k, y) over a reduction domain of constant size and over the
// output's rows, b(x, k) the other way round: Halide 14 allocates their copies at root as
// [64 x c.extent.1] and [c.extent.0 x 64], extents it knows only from the output buffer
// where they follow the output's.
TEST(PipelineGraph, MarksTheExtentsThatFollowTheOutputs) {
  Halide::ImageParam a(Halide::Float(32), 2, "a"), b(Halide::Float(32), 2, "b");
  Var x("x"), y("y");
  Halide::RDom k(0, 64, "k");
  Func c("c");
  c(x, y) = 0.0f;
  c(x, y) += a(k, y) * b(x, k);
  a.set_estimates({{0, 64}, {0, 128}});
  b.set_estimates({{0, 256}, {0, 64}});
  c.set_estimates({{0, 256}, {0, 128}});
  Halide::Pipeline p(c);
  const PipelineGraph g = analyze_pipeline(p);
  std::map<std::string, std::vector<bool>> follows;
  for (const FuncNode &f : g.funcs) follows[stable_func_name(f.name)] = f.extent_follows_outputs;
  EXPECT_EQ(follows, (std::map<std::string, std::vector<bool>>{
                         {"c", {true, true}}, {"a_im", {false, true}}, {"b_im", {true, false}}}));
}

TEST(PipelineGraph, UpdateStagesCarryReductionDomainsAndDataDependentWrites) {
  Func hist("hist"), out("out");
  Var x("x");
  Halide::ImageParam in(Halide::UInt(8), 1, "in");
  Halide::RDom r(0, in.dim(0).extent(), "r");
  hist(x) = 0;
  hist(in(r)) += 1;
  out(x) = hist(x) * 2;
  in.set_estimates({{0, 1000}});
  out.set_estimates({{0, 100}});
  Halide::Pipeline p(out);
  const PipelineGraph g = analyze_pipeline(p);
  const int h = find_named(g, "hist");
  ASSERT_GE(h, 0);
  ASSERT_EQ(g.funcs[h].stages.size(), 2u);
  EXPECT_FALSE(g.funcs[h].inlinable());
  EXPECT_EQ(g.funcs[h].stages[0].loop_vars, (std::vector<std::string>{"x"}));
  EXPECT_EQ(g.funcs[h].stages[1].num_pure, 0);
  EXPECT_EQ(g.funcs[h].stages[1].rvar_region, (Region{{0, 999}}));
  // The update writes wherever the data points: all 256 values of a uint8.
  EXPECT_EQ(g.funcs[h].root_region, (Region{{0, 255}}));
  expect_regions_match_halide(p);
}

TEST(PipelineGraph, PyramidRegionsMatchHalide) {
  Halide::ImageParam in(Halide::Float(32), 2, "in");
  Var x("x"), y("y");
  Func clamped = Halide::BoundaryConditions::repeat_edge(in);
  std::vector<Func> levels{clamped};
  for (int l = 1; l < 4; ++l) {
    Func down("down" + std::to_string(l)), dx("dx" + std::to_string(l));
    dx(x, y) =
        levels.back()(2 * x - 1, y) + levels.back()(2 * x, y) * 2 + levels.back()(2 * x + 1, y);
    down(x, y) = dx(x, 2 * y - 1) + dx(x, 2 * y) * 2 + dx(x, 2 * y + 1);
    levels.push_back(down);
  }
  Func up("up");
  up(x, y) = levels.back()(x / 8, y / 8) + levels[1](x / 2, y / 2);
  in.set_estimates({{0, 640}, {0, 480}});
  up.set_estimates({{0, 640}, {0, 480}});
  Halide::Pipeline p(up);
  expect_regions_match_halide(p);
}

TEST(PipelineGraph, ConvolutionWithScalarParamRegionsMatchHalide) {
  Halide::ImageParam in(Halide::Float(32), 3, "in"), w(Halide::Float(32), 4, "w");
  Halide::Param<int> k("k");
  Var c("c"), x("x"), y("y");
  Halide::RDom r(0, 8, 0, k, 0, k, "r");
  Func padded = Halide::BoundaryConditions::constant_exterior(in, 0.0f);
  Func conv("conv"), relu("relu");
  conv(c, x, y) = 0.0f;
  conv(c, x, y) += w(c, r.x, r.y, r.z) * padded(r.x, x + r.y - 1, y + r.z - 1);
  relu(c, x, y) = Halide::max(conv(c, x, y), 0.0f);
  in.set_estimates({{0, 8}, {0, 64}, {0, 48}});
  w.set_estimates({{0, 16}, {0, 8}, {0, 3}, {0, 3}});
  k.set_estimate(3);
  relu.set_estimates({{0, 16}, {0, 64}, {0, 48}});
  Halide::Pipeline p(relu);
  const PipelineGraph g = analyze_pipeline(p);
  const int conv_i = find_named(g, "conv");
  ASSERT_GE(conv_i, 0);
  EXPECT_EQ(g.funcs[conv_i].stages[1].rvar_region, (Region{{0, 7}, {0, 2}, {0, 2}}));
  EXPECT_EQ(g.funcs[conv_i].stages[1].num_pure, 3);
  expect_regions_match_halide(p);
}

// Indices Halide bounds through the values of a Func (a clamped intensity, scaled by a
// param, picks the grid level: bilateral_grid) and through float arithmetic (a grid
// sampled at (x + 0.5) / 8 - 0.5: bgu). Without the Funcs' value bounds the grid's level
// range came out empty, and without float support the grid's spatial range did.
TEST(PipelineGraph, DataDependentAndFloatIndexRegionsMatchHalide) {
  Halide::ImageParam in(Halide::Float(32), 2, "in");
  Halide::Param<float> scale("scale");
  Var x("x"), y("y"), z("z");
  Func clamped = Halide::BoundaryConditions::repeat_edge(in);
  Func value("value"), grid("grid"), blurred("blurred"), sliced("sliced");
  value(x, y) = Halide::clamp(clamped(x, y), 0.0f, 1.0f);
  grid(x, y, z) = Halide::cast<float>(x + y + z);
  blurred(x, y, z) = grid(x, y, z - 1) + grid(x, y, z + 1);
  const Halide::Expr level = Halide::cast<int>(value(x, y) * scale + 0.5f);
  const Halide::Expr gx = Halide::cast<int>(Halide::floor((Halide::cast<float>(x) + 0.5f) / 8.0f - 0.5f));
  const Halide::Expr gy = Halide::cast<int>(Halide::floor((Halide::cast<float>(y) + 0.5f) / 8.0f - 0.5f));
  sliced(x, y) = blurred(gx, gy, level) + blurred(gx + 1, gy + 1, level + 1);
  in.set_estimates({{0, 64}, {0, 48}});
  scale.set_estimate(6.0f);
  sliced.set_estimates({{0, 64}, {0, 48}});
  Halide::Pipeline p(sliced);
  const PipelineGraph g = analyze_pipeline(p);
  const int b = find_named(g, "blurred");
  ASSERT_GE(b, 0);
  // gx in [-1, 7] (+1 for the second tap), levels 0..6 (+1).
  EXPECT_EQ(g.funcs[b].root_region, (Region{{-1, 8}, {-1, 6}, {0, 7}}));
  expect_regions_match_halide(p);
}

}  // namespace
}  // namespace protuner
