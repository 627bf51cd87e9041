// The schedules an expert writes first are in the space: built decision by decision, each
// decision offered by the search space (not just legal), applied to Halide, and checked in
// the loop nest Halide reports.
#include <gtest/gtest.h>

#include <Halide.h>

#include "common/host_target.h"
#include "common/schedule/apply_schedule.h"
#include "searcher/space/search_space.h"

namespace protuner {
namespace {

int find_stable(const PipelineGraph &g, const std::string &name) {
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    if (stable_func_name(g.funcs[i].name) == name) return static_cast<int>(i);
  }
  return -1;
}

// Decides every remaining Func up to `func` by inlining it (all are inlinable helpers such
// as boundary conditions and input wrappers), then decides `func` with `d`, checking each
// decision is one the space offers.
void decide_offered(const SearchSpace &space, ScheduleState &state, const FuncDecision &d) {
  const std::string why = space.pruned_because(state, d);
  ASSERT_EQ(why, "") << "decision for " << state.graph().funcs[state.num_decided()].name;
  state.decide(d);
}

void inline_the_rest(const SearchSpace &space, ScheduleState &state) {
  while (!state.complete()) {
    FuncDecision d;
    d.placement = Placement::kInline;
    decide_offered(space, state, d);
  }
}

std::string loop_nest(Halide::Pipeline &p) {
  ::testing::internal::CaptureStderr();
  p.outputs()[0].print_loop_nest();
  return ::testing::internal::GetCapturedStderr();
}

// Where the loop nest has a loop of `kind` ("parallel", "vectorized", ...) whose full name
// (Halide prefixes the names of the loops it was split from) ends in `.name`.
size_t find_loop(const std::string &nest, const std::string &kind, const std::string &name) {
  for (size_t at = nest.find(kind + " "); at != std::string::npos;
       at = nest.find(kind + " ", at + 1)) {
    const size_t end = nest.find_first_of(" :", at + kind.size() + 1);
    const std::string loop = nest.substr(at + kind.size() + 1, end - at - kind.size() - 1);
    if (loop.size() > name.size() && loop.compare(loop.size() - name.size() - 1, std::string::npos,
                                                  "." + name) == 0) {
      return at;
    }
  }
  return std::string::npos;
}

StageTiling tiling(std::vector<int64_t> tile, std::vector<int64_t> inner, int parallel) {
  return StageTiling{std::move(tile), std::move(inner), parallel};
}

Halide::Pipeline two_stage_blur() {
  Halide::ImageParam in(Halide::Float(32), 2, "in");
  Halide::Var x("x"), y("y");
  Halide::Func clamped = Halide::BoundaryConditions::repeat_edge(in);
  Halide::Func blur_x("blur_x"), blur_y("blur_y");
  blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3.0f;
  blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3.0f;
  in.set_estimates({{0, 512}, {0, 256}});
  blur_y.set_estimates({{0, 512}, {0, 256}});
  return Halide::Pipeline(blur_y);
}

TEST(Reachability, ClassicTiledBlurIsInTheSpace) {
  Halide::Pipeline p = two_stage_blur();
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  ScheduleState state(graph);
  ASSERT_EQ(find_stable(*graph, "blur_y"), 0);
  ASSERT_EQ(find_stable(*graph, "blur_x"), 1);

  // blur_y: parallel strips of 16 rows, x vectorized 16 wide.
  FuncDecision out;
  out.placement = Placement::kRoot;
  out.stages = {tiling({512, 16}, {16, 1}, 1)};
  decide_offered(space, state, out);
  const auto &loops = state.bounds(0).loops[0];
  ASSERT_EQ(loops[0].name, "y_o");
  EXPECT_TRUE(loops[0].parallel);
  EXPECT_EQ(loops[0].extent, 16);

  // blur_x: computed per strip, vectorized.
  FuncDecision bx;
  bx.placement = Placement::kAt;
  bx.compute_at = bx.store_at = LoopRef{0, 0, 0};
  bx.stages = {tiling({512, 18}, {16, 1}, 0)};
  decide_offered(space, state, bx);
  EXPECT_EQ(state.bounds(1).region[1].extent(), 18) << "a strip needs 16 + 2 rows";
  EXPECT_EQ(state.bounds(1).realizations, 16);
  inline_the_rest(space, state);

  Halide::Pipeline fresh = two_stage_blur();
  apply_schedule(state, fresh);
  const std::string nest = loop_nest(fresh);
  const auto par = nest.find("parallel y.y_o");
  const auto produce_bx = nest.find("produce blur_x");
  ASSERT_NE(par, std::string::npos) << nest;
  ASSERT_NE(produce_bx, std::string::npos) << nest;
  EXPECT_LT(par, produce_bx) << "blur_x is computed inside each strip:\n" << nest;
  EXPECT_NE(nest.find("vectorized x.x_i", produce_bx), std::string::npos) << nest;
  EXPECT_NE(nest.rfind("vectorized x.x_i"), nest.find("vectorized x.x_i")) << "both vectorized:\n"
                                                                           << nest;
}

Halide::Pipeline matmul() {
  Halide::ImageParam a(Halide::Float(32), 2, "a"), b(Halide::Float(32), 2, "b");
  Halide::Var x("x"), y("y");
  Halide::RDom k(0, 256, "k");
  Halide::Func c("c");
  c(x, y) = 0.0f;
  c(x, y) += a(k, y) * b(x, k);
  a.set_estimates({{0, 256}, {0, 256}});
  b.set_estimates({{0, 256}, {0, 256}});
  c.set_estimates({{0, 256}, {0, 256}});
  return Halide::Pipeline(c);
}

TEST(Reachability, RegisterBlockedMatrixMultiplyIsInTheSpace) {
  Halide::Pipeline p = matmul();
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
  const SearchSpaceOptions options = SearchSpaceOptions::for_target(host_target());
  const SearchSpace space(options);
  ScheduleState state(graph);
  ASSERT_EQ(find_stable(*graph, "c"), 0);

  // Initialization: parallel row strips, vectorized. Update: an accumulator tile two
  // vectors wide (32 floats with AVX-512, 16 with AVX2) by 4 rows unrolled, with the
  // reduction loop around it, inside 64x32 cache tiles that run in parallel.
  const int64_t lanes = options.vector_bits / 32;
  FuncDecision c;
  c.placement = Placement::kRoot;
  c.stages = {tiling({256, 16}, {lanes, 1}, 1), tiling({64, 32}, {2 * lanes, 4}, 2)};
  decide_offered(space, state, c);
  const auto &update = state.bounds(0).loops[1];
  std::vector<std::string> names;
  for (const Loop &l : update) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"y_s1_o_x_s1_o", "y_s1_m", "x_s1_m", "k$x", "y_s1_i",
                                             "x_s1_i"}));
  inline_the_rest(space, state);

  Halide::Pipeline fresh = matmul();
  apply_schedule(state, fresh);
  const std::string nest = loop_nest(fresh);
  const auto par = find_loop(nest, "parallel", "y_s1_o_x_s1_o");
  const auto red = nest.find("for k in");
  const auto unrolled = find_loop(nest, "unrolled", "y_s1_i");
  const auto vec = find_loop(nest, "vectorized", "x_s1_i");
  ASSERT_NE(par, std::string::npos) << nest;
  ASSERT_NE(red, std::string::npos) << nest;
  ASSERT_NE(unrolled, std::string::npos) << nest;
  ASSERT_NE(vec, std::string::npos) << nest;
  EXPECT_LT(par, red) << nest;
  EXPECT_LT(red, unrolled) << "the reduction runs around the register block:\n" << nest;
  EXPECT_LT(unrolled, vec) << nest;
}

}  // namespace
}  // namespace protuner
