// Finding directives on a pipeline that should be unscheduled (unscheduled_check.h), on
// generators built both ways and on hand-made Funcs.
#include "common/unscheduled_check.h"

#include <gtest/gtest.h>

#include <Halide.h>

#include "common/app.h"
#include "common/errors.h"
#include "common/host_target.h"

namespace protuner {
namespace {

AppInstance make(const std::string &generator, GeneratorSchedule schedule) {
  return AppInstance::create({generator, PROTUNER_TEST_GENERATOR_LIBRARY, generator, {}},
                             host_target(), schedule);
}

TEST(UnscheduledCheck, AGeneratorBuiltForAnAutoschedulerIsUnscheduled) {
  for (const char *g : {"test_blur", "test_estimate_min", "test_constrained_output"}) {
    AppInstance app = make(g, GeneratorSchedule::kUnscheduled);
    EXPECT_EQ(first_scheduling_directive(app.pipeline()), std::nullopt) << g;
    EXPECT_NO_THROW(require_unscheduled(app.pipeline())) << g;
  }
}

TEST(UnscheduledCheck, FindsTheGeneratorsOwnSchedule) {
  AppInstance app = make("test_estimate_min", GeneratorSchedule::kOwn);
  const auto found = first_scheduling_directive(app.pipeline());
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(found->find("Func '"), std::string::npos) << *found;
}

TEST(UnscheduledCheck, RefusesAGeneratorThatSchedulesAlwaysNamingTheFunc) {
  AppInstance app = make("test_always_scheduled", GeneratorSchedule::kUnscheduled);
  try {
    require_unscheduled(app.pipeline());
    FAIL() << "accepted a scheduled pipeline";
  } catch (const ConfigError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Func 'doubled': compute_root"), std::string::npos) << what;
    EXPECT_NE(what.find("if (!auto_schedule)"), std::string::npos) << what;
  }
}

// A scan's update has its reduction variable among its arguments: that is its own loop,
// not a reorder.
TEST(UnscheduledCheck, AnUnscheduledScanIsUnscheduled) {
  Halide::Var x("x");
  Halide::Func hist("hist"), cdf("cdf");
  Halide::RDom r(1, 255);
  hist(x) = x * 2;
  cdf(x) = hist(x);
  cdf(r) = cdf(r - 1) + hist(r);
  EXPECT_EQ(first_scheduling_directive(Halide::Pipeline(cdf)), std::nullopt);
  cdf.update().unroll(r, 5);
  EXPECT_NE(first_scheduling_directive(Halide::Pipeline(cdf)), std::nullopt);
}

// Each kind of directive, alone on an otherwise unscheduled two-stage pipeline.
TEST(UnscheduledCheck, NamesEachKindOfDirective) {
  const std::vector<std::pair<std::string, std::function<void(Halide::Func &, Halide::Func &)>>>
      cases = {
          {"split/tile of x",
           [](Halide::Func &, Halide::Func &out) {
             Halide::Var xo, xi;
             out.split(out.args()[0], xo, xi, 8);
           }},
          {"a non-serial loop over",
           [](Halide::Func &, Halide::Func &out) { out.parallel(out.args()[1]); }},
          {"reorder",
           [](Halide::Func &, Halide::Func &out) { out.reorder(out.args()[1], out.args()[0]); }},
          {"compute_root", [](Halide::Func &f, Halide::Func &) { f.compute_root(); }},
          {"compute_at out.y",
           [](Halide::Func &f, Halide::Func &out) { f.compute_at(out, out.args()[1]); }},
          {"store_in",
           [](Halide::Func &f, Halide::Func &) { f.store_in(Halide::MemoryType::Stack); }},
          {"reorder_storage",
           [](Halide::Func &f, Halide::Func &) { f.reorder_storage(f.args()[1], f.args()[0]); }},
          {"update 0: a non-serial loop",
           [](Halide::Func &, Halide::Func &out) { out.update(0).parallel(out.args()[1]); }},
      };
  for (const auto &[expected, schedule] : cases) {
    Halide::Var x("x"), y("y");
    Halide::Func f("f"), out("out");
    f(x, y) = x + y;
    out(x, y) = f(x, y) * 2;
    out(x, y) += 1;
    EXPECT_EQ(first_scheduling_directive(Halide::Pipeline(out)), std::nullopt) << expected;
    schedule(f, out);
    const auto found = first_scheduling_directive(Halide::Pipeline(out));
    ASSERT_TRUE(found.has_value()) << expected;
    EXPECT_NE(found->find(expected), std::string::npos) << *found;
  }
}

}  // namespace
}  // namespace protuner
