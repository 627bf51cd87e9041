// BoundExpr: compiled bounds evaluate like Halide's integer arithmetic, and anything it
// does not model is refused rather than evaluated wrongly.
#include "common/pipeline/bound_expr.h"

#include <gtest/gtest.h>

#include <Halide.h>

#include <cmath>

namespace protuner {
namespace {

using Halide::Expr;

Expr var(const char *name) { return Halide::Internal::Variable::make(Halide::Int(32), name); }

TEST(BoundExpr, EvaluatesArithmeticWithFloorDivisionAndModulo) {
  const std::map<std::string, int> slots{{"a", 0}, {"b", 1}};
  auto e = BoundExpr::compile(Halide::min(var("a") * 2 + 3, var("b")) - var("a") / 4, slots);
  ASSERT_TRUE(e.has_value());
  const int64_t v1[] = {10, 100};
  EXPECT_EQ(e->eval(v1), 23 - 2);
  const int64_t v2[] = {-7, 0};  // min(-11, 0) - floor(-7/4) = -11 - (-2)
  EXPECT_EQ(e->eval(v2), -9);
  auto m = BoundExpr::compile(var("a") % 4, slots);
  ASSERT_TRUE(m.has_value());
  const int64_t v3[] = {-7, 0};
  EXPECT_EQ(m->eval(v3), 1);
}

TEST(BoundExpr, SelectAndComparisons) {
  const std::map<std::string, int> slots{{"a", 0}};
  auto e = BoundExpr::compile(Halide::select(var("a") > 5, var("a"), 5 - var("a")), slots);
  ASSERT_TRUE(e.has_value());
  const int64_t big[] = {9}, small[] = {2};
  EXPECT_EQ(e->eval(big), 9);
  EXPECT_EQ(e->eval(small), 3);
}

// Upsampling by a float scale, as bgu and resizes index their grids: Halide's own
// bounds of such an index are float arithmetic, truncated to an integer.
TEST(BoundExpr, EvaluatesFloatIndexArithmeticLikeHalide) {
  const std::map<std::string, int> slots{{"a", 0}};
  using Halide::cast;
  const Expr g = (cast<float>(var("a")) + 0.5f) / 8.0f - 0.5f;
  auto floored = BoundExpr::compile(cast<int>(Halide::floor(g)), slots);
  auto truncated = BoundExpr::compile(cast<int>(g), slots);
  auto ceiled = BoundExpr::compile(cast<int>(Halide::ceil(g)) + cast<int>(Halide::round(g)), slots);
  auto compared = BoundExpr::compile(Halide::select(g < 1.0f, 7, Halide::max(var("a"), 9)), slots);
  ASSERT_TRUE(floored && truncated && ceiled && compared);
  for (int64_t a : {-20, -5, -1, 0, 3, 4, 11, 12, 100}) {
    const double gv = (static_cast<double>(a) + 0.5) / 8.0 - 0.5;
    const int64_t v[] = {a};
    EXPECT_EQ(floored->eval(v), static_cast<int64_t>(std::floor(gv))) << a;
    EXPECT_EQ(truncated->eval(v), static_cast<int64_t>(gv)) << a;  // toward zero
    EXPECT_EQ(ceiled->eval(v), static_cast<int64_t>(std::ceil(gv) + std::nearbyint(gv))) << a;
    EXPECT_EQ(compared->eval(v), gv < 1.0 ? 7 : std::max<int64_t>(a, 9)) << a;
  }
}

TEST(BoundExpr, UnknownVariablesAndCallsAreRefused) {
  const std::map<std::string, int> slots{{"a", 0}};
  EXPECT_FALSE(BoundExpr::compile(var("b") + 1, slots).has_value());
  EXPECT_FALSE(BoundExpr::compile(Halide::cast<int>(Halide::sqrt(Halide::cast<float>(var("a")))), slots));
  EXPECT_FALSE(BoundExpr::compile(Halide::Expr(1.5f) * var("a"), slots));  // not an integer
  Halide::Func f("f");
  Halide::Var x;
  f(x) = x;
  EXPECT_FALSE(BoundExpr::compile(f(var("a")), slots).has_value());
  EXPECT_FALSE(BoundExpr::compile(Halide::Expr(), slots).has_value());
}

}  // namespace
}  // namespace protuner
