// Halide 14 is wired: a pipeline JIT-compiles for the host and computes the right values.
#include <gtest/gtest.h>

#include <Halide.h>
#include "common/host_target.h"

namespace protuner {
namespace {

TEST(HalideJit, ScheduledPipelineComputesExpectedValues) {
  Halide::Var x("x"), y("y");
  Halide::Func f("f"), g("g");
  f(x, y) = x + 10 * y;
  g(x, y) = f(x, y) * 2 + f(x + 1, y);
  f.compute_at(g, y).vectorize(x, 8);
  g.parallel(y).vectorize(x, 8);
  Halide::Buffer<int> out = g.realize({64, 16}, host_target());
  for (int j = 0; j < 16; ++j) {
    for (int i = 0; i < 64; ++i) {
      ASSERT_EQ(out(i, j), (i + 10 * j) * 2 + (i + 1 + 10 * j)) << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace protuner
