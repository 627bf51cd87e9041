// time_runs: samples, repetition to a minimum sample length, confirming the minimum,
// stopping above a stop line (and early, far above it), statistics, bad settings.
#include "measurer/timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/errors.h"

namespace protuner {
namespace {

// Times runs of 1 ms and up, each 20% longer than the one before, so no two samples agree
// and the minimum never confirms; `runs` counts them.
TimingResult time_lengthening_runs(const TimingSettings &s, int *runs = nullptr) {
  double us = 1000;
  return time_runs(
      [&] {
        if (runs) ++*runs;
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int>(us)));
        us *= 1.2;
      },
      s);
}

TEST(TimeRuns, TakesTheRequestedSamplesAndTheMinimumIsAtLeastTheRunTime) {
  int calls = 0;
  TimingSettings s;
  s.warmup_runs = 2;
  s.samples = 5;
  s.max_samples = 5;
  s.min_sample_seconds = 0;
  TimingResult r = time_runs(
      [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      },
      s);
  EXPECT_EQ(r.samples_ms.size(), 5u);
  EXPECT_EQ(r.runs_per_sample, 1);
  EXPECT_EQ(calls, 2 + 1 + 5);  // warm-up, the run that sizes samples, samples
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

TEST(TimeRuns, SamplesAreSizedByARunAfterTheWarmUp) {
  // A first run 40x slower than the rest (thread pool start-up, page faults) must not make
  // every sample shorter than min_sample_seconds.
  int calls = 0;
  TimingSettings s;
  s.warmup_runs = 1;
  s.samples = 2;
  s.max_samples = 2;
  s.min_sample_seconds = 0.02;
  TimingResult r = time_runs(
      [&] {
        std::this_thread::sleep_for(std::chrono::microseconds(calls++ == 0 ? 40000 : 1000));
      },
      s);
  EXPECT_GE(r.runs_per_sample, 5);  // 20 ms of ~1 ms runs, not 1 run of a 40 ms guess
}

TEST(TimeRuns, SamplesUntilTheMinimumIsConfirmed) {
  // The run times cycle 10, 7, 9, 8 ms... except the first samples are slow: the minimum
  // is confirmed (three samples within 10% of it) only once 7 ms has come up three times.
  const std::vector<int> pattern_us = {10000, 7000, 9000, 8000};
  int timed = -2;  // the warm-up run and the sizing run come first
  TimingSettings s;
  s.warmup_runs = 1;
  s.samples = 2;
  s.max_samples = 20;
  s.min_sample_seconds = 0;
  s.confirming_samples = 3;
  s.confirm_within = 0.1;
  TimingResult r = time_runs(
      [&] {
        const int i = timed++;
        std::this_thread::sleep_for(
            std::chrono::microseconds(i < 0 ? 1000 : pattern_us[i % pattern_us.size()]));
      },
      s);
  EXPECT_TRUE(r.confirmed);
  EXPECT_GE(r.samples_ms.size(), 10u);  // 7 ms at samples 2, 6 and 10 at the earliest
  EXPECT_GE(r.min_ms, 7.0);
  EXPECT_LT(r.min_ms, 8.0);
}

TEST(TimeRuns, GivesUpConfirmingAtMaxSamples) {
  int timed = 0;
  TimingSettings s;
  s.warmup_runs = 0;
  s.samples = 3;
  s.max_samples = 6;
  s.min_sample_seconds = 0;
  s.confirm_within = 0.01;
  const TimingResult r = time_lengthening_runs(s, &timed);
  EXPECT_FALSE(r.confirmed);
  EXPECT_EQ(r.samples_ms.size(), 6u);
  EXPECT_EQ(timed, 1 + 6);
}

TEST(TimeRuns, StopsAtTheRequestedSamplesWhenTheFastestIsAboveTheStopLine) {
  // The minimum never confirms: below the stop line they go on to max_samples, above it
  // they stop at `samples`.
  for (const double stop_above_ms : {0.5, 1000.0}) {
    TimingSettings s;
    s.warmup_runs = 0;
    s.samples = 3;
    s.max_samples = 6;
    s.min_sample_seconds = 0;
    s.stop_above_ms = stop_above_ms;
    s.early_stop_factor = 1000;  // the early line out of the way
    const TimingResult r = time_lengthening_runs(s);
    const bool above = stop_above_ms < 1;
    EXPECT_EQ(r.stopped_above, above) << stop_above_ms;
    EXPECT_FALSE(r.confirmed) << stop_above_ms;
    EXPECT_EQ(r.samples_ms.size(), above ? 3u : 6u) << stop_above_ms;
  }
}

TEST(TimeRuns, StopsAtTheEarlySamplesWhenTheFastestIsFarAboveTheStopLine) {
  // Runs of 1 ms and up. Line 0.05 ms: 10x that is below every run, so it stops at the 2
  // early samples. Line 0.5 ms: 10x that (5 ms) is above the first runs, so it stops at
  // the 6 samples of the plain line. No line: 8.
  for (const auto &[stop_above_ms, expected] :
       {std::pair{0.05, 2u}, std::pair{0.5, 6u}, std::pair{0.0, 8u}}) {
    TimingSettings s;
    s.warmup_runs = 0;
    s.samples = 6;
    s.max_samples = 8;
    s.min_sample_seconds = 0;
    s.stop_above_ms = stop_above_ms;
    s.early_stop_samples = 2;
    s.early_stop_factor = 10;
    const TimingResult r = time_lengthening_runs(s);
    EXPECT_EQ(r.samples_ms.size(), expected) << stop_above_ms;
    EXPECT_EQ(r.stopped_above, stop_above_ms > 0) << stop_above_ms;
  }
}

TEST(TimeRuns, MinimumConfirmedNeedsEnoughSamplesNearTheSmallest) {
  TimingSettings s;
  s.confirming_samples = 3;
  s.confirm_within = 0.01;
  EXPECT_FALSE(minimum_confirmed({1.0, 1.0}, s));
  EXPECT_TRUE(minimum_confirmed({1.5, 1.0, 1.009, 2.0, 1.01}, s));
  EXPECT_FALSE(minimum_confirmed({1.5, 1.0, 1.009, 2.0, 1.02}, s));
}

TEST(TimeRuns, OutOfRangeSettingsAreRefused) {
  TimingSettings s;
  s.samples = 0;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
  s = TimingSettings();
  s.warmup_runs = -1;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
  s = TimingSettings();
  s.max_samples = s.samples - 1;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
  s = TimingSettings();
  s.confirming_samples = 0;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
  s = TimingSettings();
  s.stop_above_ms = -1;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
  s = TimingSettings();
  s.early_stop_samples = 0;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
  s = TimingSettings();
  s.early_stop_factor = 0.9;
  EXPECT_THROW(time_runs([] {}, s), ConfigError);
}

}  // namespace
}  // namespace protuner
