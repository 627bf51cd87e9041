// Measurer records against a real redis-server: a registration is read back whole, a
// record not renewed expires and is pruned from the index, a clean stop removes it at
// once, and searchers pick the host class most measurers share.
#include "common/farm/measurer_registry.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/common/farm/farm_redis_fixture.h"

namespace protuner::farm {
namespace {

using namespace std::chrono_literals;

MeasurerRecord record(const std::string &name, const std::string &host_class) {
  MeasurerRecord r;
  r.name = name;
  r.endpoint = "tcp://127.0.0.1:5" + std::to_string(name.size());
  r.host_class = host_class;
  r.cpu_model = "Test CPU";
  r.smt = "off";
  r.cpus = 2;
  r.heartbeat_ms = 1000;
  r.started_ms = 1234;
  return r;
}

class MeasurerRegistryTest : public FarmRedisTest {};

TEST_F(MeasurerRegistryTest, ARegistrationIsReadBackWhole) {
  register_measurer(redis_, record("m1", "class-a"), 10s);
  const auto live = live_measurers(redis_);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].name, "m1");
  EXPECT_EQ(live[0].endpoint, "tcp://127.0.0.1:52");
  EXPECT_EQ(live[0].host_class, "class-a");
  EXPECT_EQ(live[0].cpu_model, "Test CPU");
  EXPECT_EQ(live[0].smt, "off");
  EXPECT_EQ(live[0].cpus, 2);
  EXPECT_EQ(live[0].heartbeat_ms, 1000);
  EXPECT_EQ(live[0].started_ms, 1234);
  EXPECT_GT(live[0].seen_ms, 1700000000000);  // Redis time, unix ms
}

TEST_F(MeasurerRegistryTest, ARecordNotRenewedExpiresAndIsPruned) {
  register_measurer(redis_, record("short", "c"), 300ms);
  register_measurer(redis_, record("long", "c"), 30s);
  EXPECT_EQ(live_measurers(redis_).size(), 2u);
  std::this_thread::sleep_for(500ms);
  const auto live = live_measurers(redis_);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].name, "long");
  EXPECT_EQ(redis_.command({"ZCARD", measurers_index()}).integer, 1);
  // Renewing brings it back.
  register_measurer(redis_, record("short", "c"), 30s);
  EXPECT_EQ(live_measurers(redis_).size(), 2u);
}

TEST_F(MeasurerRegistryTest, UnregisteringRemovesItAtOnce) {
  register_measurer(redis_, record("m1", "c"), 30s);
  unregister_measurer(redis_, "m1");
  EXPECT_TRUE(live_measurers(redis_).empty());
  EXPECT_EQ(redis_.command({"ZCARD", measurers_index()}).integer, 0);
}

TEST_F(MeasurerRegistryTest, ARecordOfAnotherLayoutIsRefused) {
  register_measurer(redis_, record("m1", "c"), 30s);
  redis_.command({"HSET", measurer_key("m1"), "schema", "99"});
  EXPECT_THROW(live_measurers(redis_), SchemaError);
}

TEST(MeasurerHostClass, TheClassMostMeasurersShareWinsAndGivesItsEndpoints) {
  const std::vector<MeasurerRecord> live{record("a", "x"), record("bb", "y"),
                                         record("ccc", "y")};
  EXPECT_EQ(most_common_host_class(live), "y");
  EXPECT_EQ(endpoints_of_class(live, "y"),
            (std::vector<std::string>{"tcp://127.0.0.1:52", "tcp://127.0.0.1:53"}));
  EXPECT_EQ(most_common_host_class({}), "");
  EXPECT_TRUE(endpoints_of_class(live, "z").empty());
}

}  // namespace
}  // namespace protuner::farm
