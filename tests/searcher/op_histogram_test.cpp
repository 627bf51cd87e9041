// The operation histogram and access patterns of a stage, counted exactly on small
// hand-written Funcs: cost models read these as the schedule-invariant features.
#include <gtest/gtest.h>

#include <Halide.h>

#include "common/pipeline/pipeline_graph.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using namespace Halide;

// Halide uniquifies Func names within a process ("f$2"), so Funcs are found by stable name.
const StageNode &stage_of(const PipelineGraph &g, const std::string &func, int stage = 0) {
  for (const FuncNode &f : g.funcs) {
    if (stable_func_name(f.name) == func) return f.stages.at(stage);
  }
  throw std::runtime_error("no Func " + func);
}

double n(const OpHistogram &h, OpKind k, OpType t) {
  return h.counts[static_cast<int>(k)][static_cast<int>(t)];
}

const Access &access_to(const OpHistogram &h, const std::string &producer, int nth = 0) {
  for (const Access &a : h.accesses) {
    if (stable_func_name(a.producer) == producer && nth-- == 0) return a;
  }
  throw std::runtime_error("no access to " + producer);
}

TEST(OpHistogram, CountsAStencilByKindAndType) {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = in(x, y) * 2.0f + in(x + 1, y);
  in.set_estimates({{0, 64}, {0, 64}});
  f.set_estimates({{0, 63}, {0, 64}});
  Pipeline p(f);
  const PipelineGraph g = analyze_pipeline(p);
  const OpHistogram &h = stage_of(g, "f").ops;
  EXPECT_EQ(n(h, OpKind::kMul, OpType::kFloat32), 1);
  EXPECT_EQ(n(h, OpKind::kAdd, OpType::kFloat32), 1);
  // The index x + 1 is linear in the loop variables: code, not per-point work.
  EXPECT_EQ(n(h, OpKind::kAdd, OpType::kInt32), 0);
  EXPECT_EQ(h.linear_index_ops, 1);
  // An ImageParam is read through a Func of its own ("in_im"), which reads the buffer.
  EXPECT_EQ(n(h, OpKind::kLoadFunc, OpType::kFloat32), 2);
  EXPECT_EQ(n(h, OpKind::kConstant, OpType::kFloat32), 1);
  EXPECT_EQ(n(h, OpKind::kConstant, OpType::kInt32), 0);
  EXPECT_EQ(h.total(), 5);
  EXPECT_EQ(h.arithmetic(), 2);
  EXPECT_EQ(h.count(OpType::kFloat32), 5);
  ASSERT_EQ(h.accesses.size(), 2u);
  for (const Access &a : h.accesses) {
    EXPECT_FALSE(a.is_input);
    EXPECT_EQ(a.pattern, AccessPattern::kPointwise);
  }
  EXPECT_EQ(access_to(h, "in_im", 1).coefficients,
            (std::vector<std::vector<double>>{{1, 0}, {0, 1}}));
  EXPECT_EQ(access_to(h, "in_im", 1).offsets, (std::vector<double>{1, 0}));

  const OpHistogram &wrapper = stage_of(g, "in_im").ops;
  EXPECT_EQ(n(wrapper, OpKind::kLoadInput, OpType::kFloat32), 1);
  EXPECT_EQ(wrapper.total(), 1);
  EXPECT_TRUE(access_to(wrapper, "in").is_input);
  EXPECT_EQ(access_to(wrapper, "in").pattern, AccessPattern::kPointwise);
}

TEST(OpHistogram, CountsClampedAndHalvedIndicesAsWorkAndLinearOnesAsCode) {
  ImageParam in(Float(32), 2, "in");
  Param<int> w("w");
  Var x("x"), y("y");
  Func f("f");
  // 2 * x - 1 and y + 1 are linear: strength-reduced. The clamp's min and max and the
  // quotient's shift run per point.
  f(x, y) = in(2 * x - 1, y + 1) + in(clamp(x, 0, w - 1), y / 2);
  in.set_estimates({{0, 128}, {0, 128}});
  f.set_estimates({{0, 64}, {0, 64}});
  w.set_estimate(64);
  Pipeline p(f);
  const PipelineGraph g = analyze_pipeline(p);
  const OpHistogram &h = stage_of(g, "f").ops;
  EXPECT_EQ(h.linear_index_ops, 4);  // 2 * x, - 1, + 1, and the loop-invariant w - 1
  EXPECT_EQ(n(h, OpKind::kMin, OpType::kInt32), 1);
  EXPECT_EQ(n(h, OpKind::kMax, OpType::kInt32), 1);
  EXPECT_EQ(n(h, OpKind::kDiv, OpType::kInt32), 1);
  EXPECT_EQ(n(h, OpKind::kAdd, OpType::kFloat32), 1);
  EXPECT_EQ(h.arithmetic(), 4);
}

// A hand-written clamp is remembered by its bounds (what tells two loads sharing one apart
// from loads with clamps of their own); a boundary condition's, tagged `likely`, is not.
TEST(OpHistogram, RemembersHandWrittenClampsByTheirBounds) {
  ImageParam in(Float(32), 2, "in");
  Param<int> w("w");
  Var x("x"), y("y");
  Func edge = BoundaryConditions::repeat_edge(in);
  Func f("f");
  f(x, y) = in(clamp(x, 0, w - 1), y) + in(clamp(x + 1, 0, w - 1), clamp(y, 0, 7)) +
            in(min(x, w - 1), y) + edge(x, y) + in(x, y);
  in.set_estimates({{0, 64}, {0, 64}});
  f.set_estimates({{0, 64}, {0, 64}});
  w.set_estimate(64);
  Pipeline p(f);
  const PipelineGraph g = analyze_pipeline(p);
  const OpHistogram &h = stage_of(g, "f").ops;
  const Access &clamped = access_to(h, "in_im", 0), &shifted = access_to(h, "in_im", 1);
  const Access &only_min = access_to(h, "in_im", 2), &plain = access_to(h, "in_im", 3);
  EXPECT_NE(clamped.clamps[0], 0u);
  EXPECT_EQ(clamped.clamps[1], 0u);
  // The same bounds around x + 1: the same hash, told apart by the offset.
  EXPECT_EQ(shifted.clamps[0], clamped.clamps[0]);
  EXPECT_EQ(shifted.offsets[0], 1);
  EXPECT_NE(shifted.clamps[1], 0u);
  EXPECT_NE(shifted.clamps[1], clamped.clamps[0]);
  EXPECT_NE(only_min.clamps[0], 0u);
  EXPECT_NE(only_min.clamps[0], clamped.clamps[0]);
  EXPECT_EQ(plain.clamps, (std::vector<uint64_t>{0, 0}));
  // repeat_edge of an ImageParam reads it through a lambda of its own.
  const Access &boundary = access_to(stage_of(g, stable_func_name(edge.name())).ops, "lambda");
  EXPECT_TRUE(boundary.affine[0]);
  EXPECT_EQ(boundary.clamps, (std::vector<uint64_t>{0, 0}));
  // ...and is marked as a boundary condition's, where a hand-written one is not.
  EXPECT_EQ(boundary.edge_clamped, (std::vector<bool>{true, true}));
  EXPECT_EQ(clamped.edge_clamped, (std::vector<bool>{false, false}));
  EXPECT_EQ(plain.edge_clamped, (std::vector<bool>{false, false}));
}

TEST(OpHistogram, CountsCastsComparesSelectsMathAndBitwise) {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func f("f");
  Expr v = in(x, y);
  f(x, y) = cast<uint8_t>(select(v > 0.5f, sqrt(v), v) * 255.0f) & cast<uint8_t>(3);
  in.set_estimates({{0, 64}, {0, 64}});
  f.set_estimates({{0, 64}, {0, 64}});
  Pipeline p(f);
  const PipelineGraph g = analyze_pipeline(p);
  const OpHistogram &h = stage_of(g, "f").ops;
  EXPECT_EQ(n(h, OpKind::kCompare, OpType::kFloat32), 1);  // typed by its operands
  EXPECT_EQ(n(h, OpKind::kSelect, OpType::kFloat32), 1);
  EXPECT_EQ(n(h, OpKind::kMath, OpType::kFloat32), 1);
  EXPECT_EQ(n(h, OpKind::kMul, OpType::kFloat32), 1);
  EXPECT_EQ(n(h, OpKind::kCast, OpType::kUInt8), 1);  // cast<uint8_t>(3) is a constant
  EXPECT_EQ(n(h, OpKind::kConstant, OpType::kUInt8), 1);
  EXPECT_EQ(n(h, OpKind::kLogical, OpType::kUInt8), 1);
  EXPECT_EQ(n(h, OpKind::kLoadFunc, OpType::kFloat32), 1);  // v is shared: loaded once
}

TEST(OpHistogram, ClassifiesAccessPatterns) {
  ImageParam in(Float(32), 2, "in"), bias(Float(32), 1, "bias");
  ImageParam idx(Int(32), 2, "idx");
  Var x("x"), y("y");
  Func src("src"), f("f");
  src(x, y) = in(x, y);
  f(x, y) = src(y, x) + src(2 * x, y) + src(x / 2, y / 2) + bias(y) + src(idx(x, y), y) +
            src(x, y - 1) + src(clamp(x + 1, 0, 63), y);
  in.set_estimates({{0, 128}, {0, 128}});
  idx.set_estimates({{0, 64}, {0, 64}});
  bias.set_estimates({{0, 64}});
  f.set_estimates({{0, 64}, {0, 64}});
  Pipeline p(f);
  const PipelineGraph g = analyze_pipeline(p);
  const OpHistogram &h = stage_of(g, "f").ops;
  EXPECT_EQ(access_to(h, "src", 0).pattern, AccessPattern::kTransposed);
  EXPECT_EQ(access_to(h, "src", 1).pattern, AccessPattern::kStrided);
  EXPECT_EQ(access_to(h, "src", 1).coefficients[0][0], 2.0);
  EXPECT_EQ(access_to(h, "src", 2).pattern, AccessPattern::kStrided);
  EXPECT_EQ(access_to(h, "src", 2).coefficients[1][1], 0.5);
  EXPECT_EQ(access_to(h, "bias_im").pattern, AccessPattern::kBroadcast);
  EXPECT_EQ(access_to(h, "src", 3).pattern, AccessPattern::kGather);
  EXPECT_FALSE(access_to(h, "src", 3).affine[0]);
  // src(idx(x, y), y): the gathered index reads x and y through the value it loads.
  EXPECT_EQ(access_to(h, "src", 3).index_vars, (std::vector<uint64_t>{0b11, 0b10}));
  EXPECT_EQ(access_to(h, "src", 0).index_vars, (std::vector<uint64_t>{0b10, 0b01}));
  EXPECT_EQ(access_to(h, "idx_im").pattern, AccessPattern::kPointwise);
  EXPECT_EQ(access_to(h, "src", 4).pattern, AccessPattern::kPointwise);
  EXPECT_EQ(access_to(h, "src", 5).pattern, AccessPattern::kPointwise);  // a clamped index
  EXPECT_EQ(n(h, OpKind::kLoadFunc, OpType::kFloat32), 7);               // src x6, bias_im
  EXPECT_EQ(n(h, OpKind::kLoadFunc, OpType::kInt32), 1);                 // idx_im
  EXPECT_EQ(n(h, OpKind::kDiv, OpType::kInt32), 2);
  EXPECT_EQ(n(h, OpKind::kMin, OpType::kInt32), 1);
  EXPECT_EQ(n(h, OpKind::kMax, OpType::kInt32), 1);
}

TEST(OpHistogram, CountsAnUpdateWithItsSelfReadAndReductionVariables) {
  // c(x, y) += a(k, y) * b(x, k) over 32 x 32 x 32 (test_pipelines.h)
  Pipeline p = testing::matmul_pipeline(32);
  const PipelineGraph g = analyze_pipeline(p);
  const OpHistogram &pure = stage_of(g, "c", 0).ops;
  EXPECT_EQ(pure.total(), 1);  // the constant 0
  const OpHistogram &h = stage_of(g, "c", 1).ops;
  EXPECT_EQ(n(h, OpKind::kAdd, OpType::kFloat32), 1);
  EXPECT_EQ(n(h, OpKind::kMul, OpType::kFloat32), 1);
  EXPECT_EQ(n(h, OpKind::kLoadFunc, OpType::kFloat32), 3);  // c itself, a_im, b_im
  EXPECT_EQ(h.total(), 5);
  EXPECT_TRUE(access_to(h, "c").is_self);
  EXPECT_EQ(access_to(h, "c").pattern, AccessPattern::kPointwise);
  EXPECT_EQ(access_to(h, "a_im").pattern, AccessPattern::kTransposed);  // a(k, y): k outside x
  EXPECT_EQ(access_to(h, "b_im").pattern, AccessPattern::kBroadcast);   // b(x, k): reused over y
  // Loop variables: x, y, then k.
  EXPECT_EQ(access_to(h, "b_im").coefficients,
            (std::vector<std::vector<double>>{{1, 0, 0}, {0, 0, 1}}));
}

TEST(OpHistogram, CountsDataDependentUpdateIndices) {
  ImageParam in(UInt(8), 1, "in");
  Var i("i");
  RDom r(0, 100, "r");
  Func hist("hist");
  hist(i) = 0;
  hist(cast<int>(in(r)) / 2) += 1;
  in.set_estimates({{0, 100}});
  hist.set_estimates({{0, 128}});
  Pipeline p(hist);
  const PipelineGraph g = analyze_pipeline(p);
  const OpHistogram &h = stage_of(g, "hist", 1).ops;
  // The index is computed once, shared by the left-hand side and reading hist back.
  EXPECT_EQ(n(h, OpKind::kLoadFunc, OpType::kUInt8), 1);
  EXPECT_EQ(n(h, OpKind::kCast, OpType::kInt32), 1);
  EXPECT_EQ(n(h, OpKind::kAdd, OpType::kInt32), 1);
  EXPECT_EQ(n(h, OpKind::kLoadFunc, OpType::kInt32), 1);
  EXPECT_EQ(access_to(h, "hist").pattern, AccessPattern::kGather);
}

// A gathered index bounded by its own arithmetic reaches only that many elements: a clamp
// to a 16-entry palette, a uint8 lookup 256; an index computed in float reaches any.
TEST(OpHistogram, BoundsTheReachOfAGatheredIndexByItsOwnArithmetic) {
  ImageParam idx(UInt(8), 2, "idx"), pal(Float(32), 2, "pal"), lut(Float(32), 1, "lut");
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), c("c");
  Func f("f"), g("g"), h("h");
  f(x, y, c) = pal(c, clamp(cast<int>(idx(x, y)), 0, 15));
  g(x, y) = lut(idx(x, y));
  h(x, y) = lut(cast<int>(in(x, y) * 100.0f));
  idx.set_estimates({{0, 64}, {0, 64}});
  pal.set_estimates({{0, 3}, {0, 16}});
  lut.set_estimates({{0, 256}});
  in.set_estimates({{0, 64}, {0, 64}});
  f.set_estimates({{0, 64}, {0, 64}, {0, 3}});
  g.set_estimates({{0, 64}, {0, 64}});
  h.set_estimates({{0, 64}, {0, 64}});
  Pipeline p({f, g, h});
  const PipelineGraph graph = analyze_pipeline(p);
  const Access &palette = access_to(stage_of(graph, "f").ops, "pal_im");
  ASSERT_EQ(palette.reach.size(), 2u);
  EXPECT_EQ(palette.reach[0], 0);  // affine: its extent follows the loops
  EXPECT_FALSE(palette.affine[1]);
  EXPECT_EQ(palette.reach[1], 16);
  EXPECT_EQ(access_to(stage_of(graph, "g").ops, "lut_im").reach[0], 256);
  EXPECT_EQ(access_to(stage_of(graph, "h").ops, "lut_im").reach[0], 0);
}

}  // namespace
}  // namespace protuner
