// BoundExpr: compiled bounds evaluate like Halide's integer arithmetic, and anything it
// does not model is refused rather than evaluated wrongly.
#include "searcher/bound_expr.h"

#include <gtest/gtest.h>

#include <Halide.h>

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

TEST(BoundExpr, UnknownVariablesFloatsAndCallsAreRefused) {
  const std::map<std::string, int> slots{{"a", 0}};
  EXPECT_FALSE(BoundExpr::compile(var("b") + 1, slots).has_value());
  EXPECT_FALSE(BoundExpr::compile(Halide::cast<int>(Halide::Expr(1.5f) * var("a")), slots));
  Halide::Func f("f");
  Halide::Var x;
  f(x) = x;
  EXPECT_FALSE(BoundExpr::compile(f(var("a")), slots).has_value());
  EXPECT_FALSE(BoundExpr::compile(Halide::Expr(), slots).has_value());
}

}  // namespace
}  // namespace protuner
