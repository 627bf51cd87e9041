// The isolated measurer end to end: real helper processes measuring the small test
// generators. Each bad candidate (crash, hang, unbounded allocation, wrong answer, bad
// request) gets its status, and the same measurer then measures a good candidate.
#include <gtest/gtest.h>

#include <Halide.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>

#include "common/app.h"
#include "common/errors.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/pipeline_io.h"
#include "common/schedule/schedule_json.h"
#include "measurer/child_protocol.h"
#include "measurer/isolated_measurer.h"
#include "measurer/measure_child.h"
#include "measurer/output_check.h"
#include "searcher/space/search_space.h"
#include "tests/measurer/quick_request.h"
#include "tests/measurer/random_schedule.h"

namespace protuner {
namespace {

MeasureRequest request(const std::string &library, const std::string &generator,
                       ScheduleKind kind, const std::string &schedule_json = "") {
  return quick_request(library, generator, {kind, schedule_json});
}

MeasureRequest blur(ScheduleKind kind = ScheduleKind::kOwn) {
  return request(PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", kind);
}

MeasureRequest faulty(const std::string &generator) {
  return request(PROTUNER_TEST_FAULTY_LIBRARY, generator, ScheduleKind::kOwn);
}

// A measurer without the result cache, sharing reference outputs with the other test
// processes.
IsolatedMeasurerOptions test_options() {
  IsolatedMeasurerOptions o;
  o.cache_dir = PROTUNER_TEST_CACHE_DIR;
  o.use_result_cache = false;
  return o;
}

// A random complete protuner schedule for test_blur, in its serialized form.
std::string random_blur_schedule() {
  return random_protuner_schedule(PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", 7);
}

void expect_good_candidate_ok(IsolatedMeasurer &m) {
  const MeasureResult r = m.measure(blur());
  EXPECT_EQ(status_name(r.status), std::string("ok")) << r.error;
}

#define EXPECT_STATUS(result, expected) \
  EXPECT_EQ(status_name((result).status), std::string(status_name(expected))) << (result).error

TEST(IsolatedMeasurer, AGoodCandidateIsTimedOnTheMeasurersCpus) {
  IsolatedMeasurer m(test_options());
  const MeasureResult r = m.measure(blur());
  EXPECT_STATUS(r, MeasureStatus::kOk);
  EXPECT_EQ(r.timing.samples_ms.size(), 3u);
  EXPECT_GT(r.timing.min_ms, 0);
  EXPECT_LE(r.timing.min_ms, r.timing.median_ms);
  EXPECT_GT(r.compile_seconds, 0);
  EXPECT_EQ(r.cpus, m.cpus());
  EXPECT_EQ(r.host.logical_cpus, static_cast<int>(m.cpus().size()));
  EXPECT_TRUE(r.error.empty());
  EXPECT_FALSE(r.from_cache);
}

TEST(IsolatedMeasurer, PinsTheChildToAnExplicitCpuList) {
  IsolatedMeasurerOptions o = test_options();
  o.cpus = {0};
  IsolatedMeasurer m(o);
  const MeasureResult r = m.measure(blur());
  EXPECT_STATUS(r, MeasureStatus::kOk);
  EXPECT_EQ(r.cpus, std::vector<int>{0});
  EXPECT_EQ(r.host.logical_cpus, 1);
}

TEST(IsolatedMeasurer, RefusesCpusThisProcessCannotUse) {
  IsolatedMeasurerOptions o = test_options();
  o.cpus = {CPU_SETSIZE - 1};
  EXPECT_THROW(IsolatedMeasurer{o}, ConfigError);
}

TEST(IsolatedMeasurer, MeasuresEveryScheduleKind) {
  IsolatedMeasurer m(test_options());
  EXPECT_STATUS(m.measure(blur(ScheduleKind::kDefault)), MeasureStatus::kOk);
  EXPECT_STATUS(m.measure(blur(ScheduleKind::kRoot)), MeasureStatus::kOk);
  MeasureRequest tuned = blur(ScheduleKind::kProtuner);
  tuned.schedule.schedule_json = random_blur_schedule();
  EXPECT_STATUS(m.measure(tuned), MeasureStatus::kOk);
}

TEST(IsolatedMeasurer, ASegfaultIsARuntimeCrashAndTheMeasurerGoesOn) {
  IsolatedMeasurer m(test_options());
  const MeasureResult r = m.measure(faulty("test_segfault"));
  EXPECT_STATUS(r, MeasureStatus::kRuntimeCrash);
  EXPECT_NE(r.error.find("signal 11"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("while running"), std::string::npos) << r.error;
  expect_good_candidate_ok(m);
}

TEST(IsolatedMeasurer, AnEndlessLoopTimesOutAndTheMeasurerGoesOn) {
  IsolatedMeasurer m(test_options());
  MeasureRequest spin = faulty("test_spin_forever");
  spin.settings.run_timeout_seconds = 1.5;
  const auto start = std::chrono::steady_clock::now();
  const MeasureResult r = m.measure(spin);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_STATUS(r, MeasureStatus::kTimeout);
  EXPECT_NE(r.error.find("run phase limit is 1.5 s"), std::string::npos) << r.error;
  EXPECT_LT(took, 30);
  expect_good_candidate_ok(m);
}

TEST(IsolatedMeasurer, ASlowCompileTimesOutInTheCompilePhase) {
  IsolatedMeasurer m(test_options());
  MeasureRequest r = blur();
  r.settings.check_output = false;
  r.settings.compile_timeout_seconds = 0.05;  // less than starting the helper takes
  const MeasureResult result = m.measure(r);
  EXPECT_STATUS(result, MeasureStatus::kTimeout);
  EXPECT_NE(result.error.find("phase limit is 0.05 s"), std::string::npos) << result.error;
}

TEST(IsolatedMeasurer, UnboundedAllocationIsOutOfMemoryAndTheMeasurerGoesOn) {
  IsolatedMeasurer m(test_options());
  MeasureRequest hog = faulty("test_allocate_forever");
  hog.settings.memory_limit_mb = 768;
  const MeasureResult r = m.measure(hog);
  EXPECT_STATUS(r, MeasureStatus::kOutOfMemory);
  expect_good_candidate_ok(m);
}

TEST(IsolatedMeasurer, HalideRunningOutOfMemoryIsOutOfMemory) {
  IsolatedMeasurer m(test_options());
  MeasureRequest huge = faulty("test_huge_buffer");
  huge.settings.memory_limit_mb = 512;
  huge.settings.check_output = false;  // the root reference needs the same huge buffer
  const MeasureResult r = m.measure(huge);
  EXPECT_STATUS(r, MeasureStatus::kOutOfMemory);
  EXPECT_NE(r.error.find("Out of memory"), std::string::npos) << r.error;
}

TEST(IsolatedMeasurer, AScheduleBugIsWrongOutputNamingTheFirstBadPoint) {
  IsolatedMeasurer m(test_options());
  const MeasureResult r = m.measure(faulty("test_wrong_scan"));
  EXPECT_STATUS(r, MeasureStatus::kWrongOutput);
  EXPECT_NE(r.error.find("output 'output"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("first at ("), std::string::npos) << r.error;
  EXPECT_TRUE(r.timing.samples_ms.empty());  // never reported as fast
  // The bug is not float rounding: the check with strict_float finds it too.
  EXPECT_NE(r.error.find("with strict_float too"), std::string::npos) << r.error;
  // The same algorithm under its correct (compute-root) schedule passes.
  MeasureRequest root = faulty("test_wrong_scan");
  root.schedule.kind = ScheduleKind::kRoot;
  EXPECT_STATUS(m.measure(root), MeasureStatus::kOk);
}

// What a schedule computes on the standard inputs, in this process.
Halide::Buffer<> output_of(const std::string &generator, bool own) {
  AppInstance app = AppInstance::create({generator, PROTUNER_TEST_FAULTY_LIBRARY, generator, {}},
                                        host_target(),
                                        own ? GeneratorSchedule::kOwn : GeneratorSchedule::kUnscheduled);
  Halide::Pipeline &p = app.pipeline();
  if (!own) apply_root_schedule(p);
  bind_random_inputs(p, ChildMeasureOptions{}.input_seed);
  Halide::Realization out = allocate_estimated_outputs(p);
  p.realize(out, host_target());
  return out[0];
}

TEST(IsolatedMeasurer, AnOutputOffOnlyByFloatContractionIsRight) {
  // The fixture still does what it is for: without strict_float the first check refuses it.
  const std::optional<std::string> diff =
      compare_output("output", output_of("test_contracted_quantize", false),
                     output_of("test_contracted_quantize", true));
  ASSERT_TRUE(diff.has_value()) << "the fixture's schedules no longer differ";
  IsolatedMeasurer m(test_options());
  const MeasureResult r = m.measure(faulty("test_contracted_quantize"));
  EXPECT_STATUS(r, MeasureStatus::kOk);
  EXPECT_FALSE(r.timing.samples_ms.empty());
}

TEST(IsolatedMeasurer, BadRequestsSayWhatIsWrong) {
  IsolatedMeasurer m(test_options());
  const MeasureResult unknown =
      m.measure(request(PROTUNER_TEST_GENERATOR_LIBRARY, "nope", ScheduleKind::kOwn));
  EXPECT_STATUS(unknown, MeasureStatus::kBadRequest);
  EXPECT_NE(unknown.error.find("has no generator 'nope'"), std::string::npos) << unknown.error;

  const MeasureResult missing = m.measure(request("/no/such/lib.so", "g", ScheduleKind::kRoot));
  EXPECT_STATUS(missing, MeasureStatus::kBadRequest);
  EXPECT_NE(missing.error.find("/no/such/lib.so"), std::string::npos) << missing.error;

  // A schedule for test_blur sent with another pipeline.
  const MeasureResult other = m.measure(request(PROTUNER_TEST_FAULTY_LIBRARY, "test_wrong_scan",
                                                ScheduleKind::kProtuner, random_blur_schedule()));
  EXPECT_STATUS(other, MeasureStatus::kBadRequest);

  MeasureRequest bad_target = blur();
  bad_target.target = "x86-64-linux-notafeature";
  EXPECT_STATUS(m.measure(bad_target), MeasureStatus::kBadRequest);
  expect_good_candidate_ok(m);
}

// Halide's Mullapudi2016 autoscheduler, run in the child: a real schedule, checked against
// the reference and timed; its time counts as compile time.
TEST(IsolatedMeasurer, AHalideAutoschedulerIsMeasuredLikeAnyCandidate) {
  IsolatedMeasurer m(test_options());
  MeasureRequest r = blur(ScheduleKind::kAutoscheduler);
  r.schedule.autoscheduler = "Mullapudi2016";
  const MeasureResult result = m.measure(r);
  EXPECT_STATUS(result, MeasureStatus::kOk);
  EXPECT_GT(result.timing.min_ms, 0);
  EXPECT_GT(result.compile_seconds, 0);
}

TEST(IsolatedMeasurer, AnUnknownAutoschedulerIsABadRequest) {
  IsolatedMeasurer m(test_options());
  MeasureRequest r = blur(ScheduleKind::kAutoscheduler);
  r.schedule.autoscheduler = "Fastest2030";
  const MeasureResult unknown = m.measure(r);
  EXPECT_STATUS(unknown, MeasureStatus::kBadRequest);
  EXPECT_NE(unknown.error.find("unknown autoscheduler 'Fastest2030'"), std::string::npos)
      << unknown.error;
  r.schedule.autoscheduler_plugin = "/no/such/libautoschedule_fastest.so";
  const MeasureResult missing = m.measure(r);
  EXPECT_STATUS(missing, MeasureStatus::kBadRequest);
  EXPECT_NE(missing.error.find("/no/such/libautoschedule_fastest.so"), std::string::npos)
      << missing.error;
}

// An autoscheduler that outlives the compile limit is a timeout, like a slow compile:
// Adams2019 takes seconds on test_blur, far beyond 0.2 s.
TEST(IsolatedMeasurer, AnAutoschedulerPastTheCompileLimitTimesOut) {
  IsolatedMeasurer m(test_options());
  MeasureRequest r = blur(ScheduleKind::kAutoscheduler);
  r.schedule.autoscheduler = "Adams2019";
  r.settings.check_output = false;
  r.settings.compile_timeout_seconds = 0.2;
  const MeasureResult result = m.measure(r);
  EXPECT_STATUS(result, MeasureStatus::kTimeout);
  EXPECT_NE(result.error.find("while compiling"), std::string::npos) << result.error;
}

TEST(MeasureChild, MalformedRequestTextIsABadRequest) {
  ChildMeasureOptions o;
  o.cache_dir = PROTUNER_TEST_CACHE_DIR;
  std::vector<std::string> phases;
  const MeasureResult r =
      measure_in_this_process("{\"app\": ", o, [&](const char *p) { phases.push_back(p); });
  EXPECT_STATUS(r, MeasureStatus::kBadRequest);
  EXPECT_NE(r.error.find("not valid JSON"), std::string::npos) << r.error;
  EXPECT_EQ(phases, std::vector<std::string>{child_protocol::kPhaseLoad});
}

TEST(IsolatedMeasurer, RepeatsAreAnsweredFromTheCacheButCrashesAreNot) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("protuner_result_cache_test_" + std::to_string(getpid()));
  IsolatedMeasurerOptions o = test_options();
  o.cache_dir = dir.string();
  o.use_result_cache = true;
  IsolatedMeasurer m(o);
  MeasureRequest r = blur();
  r.settings.check_output = false;
  const MeasureResult first = m.measure(r);
  const MeasureResult second = m.measure(r);
  EXPECT_STATUS(first, MeasureStatus::kOk);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.timing.min_ms, first.timing.min_ms);
  // Another schedule, other settings: a different key.
  r.settings.timing.samples = 4;
  EXPECT_FALSE(m.measure(r).from_cache);

  MeasureRequest crash = faulty("test_segfault");
  crash.settings.check_output = false;
  EXPECT_FALSE(m.measure(crash).from_cache);
  const MeasureResult again = m.measure(crash);
  EXPECT_STATUS(again, MeasureStatus::kRuntimeCrash);
  EXPECT_FALSE(again.from_cache);
  std::filesystem::remove_all(dir);
}

TEST(IsolatedMeasurer, RequireSmtOffRefusesWhenSmtIsOn) {
  IsolatedMeasurerOptions o = test_options();
  o.smt_override = "on";
  IsolatedMeasurer m(o);
  MeasureRequest r = blur();
  r.settings.require_smt_off = true;
  const MeasureResult refused = m.measure(r);
  EXPECT_STATUS(refused, MeasureStatus::kBadRequest);
  EXPECT_NE(refused.error.find("SMT is on"), std::string::npos) << refused.error;
  EXPECT_EQ(refused.host.smt, "on");
  // Without the requirement it measures, and records the SMT state it ran under.
  r.settings.require_smt_off = false;
  const MeasureResult measured = m.measure(r);
  EXPECT_STATUS(measured, MeasureStatus::kOk);
  EXPECT_EQ(measured.host.smt, "on");
}

TEST(IsolatedMeasurer, AHelperThatDoesNotStartIsAMeasurerErrorNeverCached) {
  // The helper was there when the measurer started and then could not be run (rebuilt
  // under a running dataset build, exec gives 127): the candidate was never tried, so the
  // result must not say compile_error, nor be cached as one.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("protuner_helper_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto helper = dir / "protuner-measure-child";
  std::ofstream(helper) << "#!/bin/sh\nexit 127\n";
  std::filesystem::permissions(helper, std::filesystem::perms::owner_all);
  IsolatedMeasurerOptions o = test_options();
  o.cache_dir = (dir / "cache").string();
  o.use_result_cache = true;
  o.child_executable = helper.string();
  IsolatedMeasurer m(o);
  const MeasureResult first = m.measure(blur());
  EXPECT_STATUS(first, MeasureStatus::kMeasurerError);
  EXPECT_NE(first.error.find("did not start (exit code 127)"), std::string::npos) << first.error;
  const MeasureResult second = m.measure(blur());
  EXPECT_STATUS(second, MeasureStatus::kMeasurerError);
  EXPECT_FALSE(second.from_cache);
  std::filesystem::remove_all(dir);
}

TEST(IsolatedMeasurer, AMissingHelperExecutableIsAConfigError) {
  IsolatedMeasurerOptions o = test_options();
  o.child_executable = "/no/such/protuner-measure-child";
  EXPECT_THROW(IsolatedMeasurer{o}, ConfigError);
}

}  // namespace
}  // namespace protuner
