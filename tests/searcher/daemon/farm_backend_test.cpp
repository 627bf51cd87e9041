// FarmBackend against a real redis-server and a counting fake measurer: a candidate
// measured for one suite is not measured again for the same app in another suite on the
// same host class, target and settings; it is recorded for the new suite's app from the
// cache; another host class or other settings measure again; an answer that may change
// (a crash) is never taken from the farm-wide cache.
#include "searcher/daemon/farm_backend.h"

#include <gtest/gtest.h>

#include "common/farm/app_state.h"
#include "common/farm/measurement_cache.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "measurer/cache_key.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

const std::string kLibrarySha = std::string(64, 'a');

// Answers every request with `status`, as a measurer on "Test CPU", 1 CPU, SMT off.
class CountingMeasurer : public MeasurementBackend {
 public:
  MeasureResult measure(const MeasureRequest &request) override {
    ++calls;
    last_library_sha256 = request.library_sha256;
    MeasureResult r;
    r.status = status;
    if (r.ok()) {
      r.timing.samples_ms = {2.0, 2.1};
      r.timing.min_ms = 2.0;
      r.timing.median_ms = 2.05;
    } else {
      r.error = "crashed";
    }
    r.host.cpu_model = "Test CPU";
    r.host.smt = "off";
    r.cpus = {1};
    return r;
  }
  static std::string host_class() {
    HostFacts host;
    host.cpu_model = "Test CPU";
    host.smt = "off";
    return host_class_key(host, 1);
  }

  MeasureStatus status = MeasureStatus::kOk;
  int calls = 0;
  std::string last_library_sha256;
};

MeasureRequest candidate(const std::string &schedule_json, int samples = 10) {
  MeasureRequest r;
  r.app.name = "blur";
  r.app.library = "/nowhere/libblur.so";
  r.app.generator = "test_blur";
  r.schedule.kind = ScheduleKind::kProtuner;
  r.schedule.schedule_json = schedule_json;
  r.target = "host";
  r.settings.timing.samples = samples;
  return r;
}

class FarmBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    farm::check_layout(redis_);
    for (const char *suite : {"s1", "s2", "s3", "s4"}) {
      farm::queue_app(redis_, suite, "blur", 60000, {});
      farm::start_app(redis_, suite, "blur");  // running: candidates count and make the best
    }
  }
  FarmBackend backend(const std::string &suite, const std::string &host_class) {
    return FarmBackend(inner_, redis_, suite, "blur", kLibrarySha, host_class, "searcher-a", 0);
  }

  testing::RedisServer server_;
  RedisClient redis_{"127.0.0.1", server_.port()};
  CountingMeasurer inner_;
};

TEST_F(FarmBackendTest, ACandidateIsMeasuredOnceInTheWholeFarm) {
  const std::string schedule = R"({"stages": [1, 2]})";
  FarmBackend first = backend("s1", "");  // fixed measurers: writes the cache, reads none
  EXPECT_TRUE(first.measure(candidate(schedule)).ok());
  EXPECT_EQ(inner_.calls, 1);
  EXPECT_EQ(inner_.last_library_sha256, kLibrarySha);
  EXPECT_EQ(first.stats().measured, 1);

  // Another suite's job of the same app on that host class: answered from the cache,
  // and the answer is recorded for its app.
  FarmBackend second = backend("s2", CountingMeasurer::host_class());
  const MeasureResult hit = second.measure(candidate(schedule));
  EXPECT_TRUE(hit.ok());
  EXPECT_TRUE(hit.from_cache);
  EXPECT_DOUBLE_EQ(hit.timing.min_ms, 2.0);
  EXPECT_EQ(inner_.calls, 1);
  EXPECT_EQ(second.stats().cache_hits, 1);
  EXPECT_EQ(second.stats().measured, 0);
  const auto recorded =
      farm::read_candidate(redis_, "s2", "blur", farm::candidate_key(schedule));
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->status, "ok");
  EXPECT_DOUBLE_EQ(*recorded->min_ms, 2.0);
  EXPECT_EQ(farm::read_app(redis_, "s2", "blur")->best_ms, 2.0);

  // Other settings, or another host class, are other measurements (in suites whose app
  // has not recorded the schedule).
  FarmBackend more_samples = backend("s3", CountingMeasurer::host_class());
  EXPECT_FALSE(more_samples.measure(candidate(schedule, 20)).from_cache);
  EXPECT_EQ(inner_.calls, 2);
  HostFacts other;
  other.cpu_model = "Other CPU";
  other.smt = "off";
  FarmBackend elsewhere = backend("s4", host_class_key(other, 1));
  EXPECT_FALSE(elsewhere.measure(candidate(schedule)).from_cache);
  EXPECT_EQ(inner_.calls, 3);
}

TEST_F(FarmBackendTest, AnAnswerThatMayChangeIsNotCachedFarmWide) {
  const std::string schedule = R"({"stages": [4]})";
  inner_.status = MeasureStatus::kRuntimeCrash;
  FarmBackend first = backend("s1", CountingMeasurer::host_class());
  EXPECT_EQ(first.measure(candidate(schedule)).status, MeasureStatus::kRuntimeCrash);
  EXPECT_FALSE(farm::find_measurement(
                   redis_, FarmBackend::farm_cache_key(candidate(schedule), kLibrarySha,
                                                       CountingMeasurer::host_class()))
                   .has_value());
  inner_.status = MeasureStatus::kOk;
  FarmBackend second = backend("s2", CountingMeasurer::host_class());
  EXPECT_TRUE(second.measure(candidate(schedule)).ok());
  EXPECT_EQ(inner_.calls, 2);
}

}  // namespace
}  // namespace protuner
