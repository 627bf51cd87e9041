// The measurer keeps Halide's autoscheduler contract with generators written the way
// Halide's apps are (tests/fixtures/contract_generators.cpp): every schedule but the
// generator's own goes onto the pipeline built with auto_schedule=true, outputs sit where
// their estimates put them, constraints win over estimates, and a generator that schedules
// itself anyway is refused by name. Real measure children, as a search would use them.
#include <gtest/gtest.h>

#include <string>

#include "measurer/isolated_measurer.h"
#include "tests/measurer/quick_request.h"
#include "tests/measurer/random_schedule.h"

namespace protuner {
namespace {

MeasureRequest contract_request(const std::string &generator, ScheduleSpec schedule) {
  return quick_request(PROTUNER_TEST_GENERATOR_LIBRARY, generator, std::move(schedule));
}

IsolatedMeasurerOptions contract_options() {
  IsolatedMeasurerOptions o;
  o.cache_dir = PROTUNER_TEST_CACHE_DIR;
  o.use_result_cache = false;
  return o;
}

std::string describe(const MeasureResult &r) {
  return std::string(status_name(r.status)) + ": " + r.error.substr(0, 600);
}

// Every kind of schedule, and random protuner schedules, measure ok and match the
// reference: none of them fails because of the generator's style.
void expect_every_schedule_measures(const std::string &generator) {
  IsolatedMeasurer m(contract_options());
  for (ScheduleKind kind : {ScheduleKind::kOwn, ScheduleKind::kDefault, ScheduleKind::kRoot}) {
    const MeasureResult r = m.measure(contract_request(generator, {kind}));
    EXPECT_TRUE(r.ok()) << generator << " " << static_cast<int>(kind) << ": " << describe(r);
  }
  for (uint64_t seed : {1, 2, 3, 4}) {
    const std::string json =
        random_protuner_schedule(PROTUNER_TEST_GENERATOR_LIBRARY, generator, seed);
    const MeasureResult r = m.measure(contract_request(generator, {ScheduleKind::kProtuner, json}));
    EXPECT_TRUE(r.ok()) << generator << " random schedule " << seed << ": " << describe(r) << "\n"
                        << json;
  }
}

// The estimate-min case: outputs allocated at min 0 read the input at -1 and failed every
// reference; the hand schedule applied underneath protuner's failed every candidate.
TEST(GeneratorContract, OutputsEstimatedInsideTheInputAndAHandScheduleMeasure) {
  expect_every_schedule_measures("test_estimate_min");
}

TEST(GeneratorContract, BufferConstraintsWinOverEstimates) {
  expect_every_schedule_measures("test_constrained_output");
}

TEST(GeneratorContract, AnInterleavedInputIsBoundInItsLayout) {
  expect_every_schedule_measures("test_interleaved_input");
}

// A candidate calling the library's extern function loads only with the library, which
// the runner loads for it (and for no other candidate).
TEST(GeneratorContract, APipelineCallingTheLibrarysExternFunctionMeasures) {
  expect_every_schedule_measures("test_extern_call");
}

// Even its own schedule: the reference it is checked against is the compute-root schedule
// of the unscheduled pipeline, which this generator cannot give.
TEST(GeneratorContract, AGeneratorThatSchedulesItselfIsRefusedByName) {
  IsolatedMeasurer m(contract_options());
  for (ScheduleKind kind : {ScheduleKind::kRoot, ScheduleKind::kDefault, ScheduleKind::kOwn}) {
    const MeasureResult r = m.measure(contract_request("test_always_scheduled", {kind}));
    EXPECT_EQ(r.status, MeasureStatus::kBadRequest) << describe(r);
    EXPECT_NE(r.error.find("Func 'doubled': compute_root"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("if (!auto_schedule)"), std::string::npos) << r.error;
  }
}

}  // namespace
}  // namespace protuner
