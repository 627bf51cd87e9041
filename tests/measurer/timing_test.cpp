// time_runs: samples, repetition to a minimum sample length, statistics, bad settings.
#include "measurer/timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/errors.h"

namespace protuner {
namespace {

TEST(TimeRuns, TakesTheRequestedSamplesAndTheMinimumIsAtLeastTheRunTime) {
  int calls = 0;
  TimingSettings s;
  s.warmup_runs = 2;
  s.samples = 5;
  s.min_sample_seconds = 0;
  TimingResult r = time_runs(
      [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      },
      s);
  EXPECT_EQ(r.samples_ms.size(), 5u);
  EXPECT_EQ(r.runs_per_sample, 1);
  EXPECT_EQ(calls, 2 + 5);
  EXPECT_GE(r.min_ms, 2.0);
  EXPECT_LE(r.min_ms, r.median_ms);
  EXPECT_GE(r.relative_spread, 0.0);
}

TEST(TimeRuns, RepeatsShortRunsUntilASampleIsLongEnough) {
  TimingSettings s;
  s.samples = 3;
  s.min_sample_seconds = 0.02;
  TimingResult r = time_runs([] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }, s);
  EXPECT_GT(r.runs_per_sample, 1);
  EXPECT_LE(r.runs_per_sample, 20);
}

TEST(TimeRuns, OutOfRangeSettingsAreRefused) {
  TimingSettings s;
  s.samples = 0;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
  s = TimingSettings();
  s.warmup_runs = -1;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
}

}  // namespace
}  // namespace protuner
