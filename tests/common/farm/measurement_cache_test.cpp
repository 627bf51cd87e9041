// The farm-wide measurement cache against a real redis-server: an answer is found by its
// key text, written once (the first stands), an entry under the same hash for another key
// is a miss, and an entry this build did not write is refused with its key named.
#include "common/farm/measurement_cache.h"

#include <gtest/gtest.h>

#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/common/farm/farm_redis_fixture.h"

namespace protuner::farm {
namespace {

class MeasurementCacheTest : public FarmRedisTest {};

TEST_F(MeasurementCacheTest, AnAnswerIsFoundByItsKeyAndWrittenOnce) {
  const std::string key = R"({"host_class":"A","schedule":{"x":1}})";
  EXPECT_FALSE(find_measurement(redis_, key));
  EXPECT_TRUE(store_measurement(redis_, key, R"({"status":"ok","min_ms":1.5})"));
  EXPECT_FALSE(store_measurement(redis_, key, R"({"status":"ok","min_ms":9.9})"));
  EXPECT_EQ(find_measurement(redis_, key), R"({"status":"ok","min_ms":1.5})");
  // Another key text (another host class) is another entry.
  EXPECT_FALSE(find_measurement(redis_, R"({"host_class":"B","schedule":{"x":1}})"));
  EXPECT_EQ(measurement_cache_key(key).rfind("protuner:v1:measurement:", 0), 0u);
}

TEST_F(MeasurementCacheTest, AnEntryForAnotherKeyUnderTheSameHashIsAMiss) {
  const std::string key = "the key";
  redis_.command({"SET", measurement_cache_key(key),
                  R"({"schema":"1","key":"another key","result":"{}"})"});
  EXPECT_FALSE(find_measurement(redis_, key));
}

TEST_F(MeasurementCacheTest, AnEntryThisBuildDidNotWriteIsRefused) {
  const std::string key = "the key";
  redis_.command({"SET", measurement_cache_key(key), "not json"});
  try {
    find_measurement(redis_, key);
    FAIL() << "a malformed entry was read";
  } catch (const RecordFormatError &e) {
    EXPECT_NE(std::string(e.what()).find(measurement_cache_key(key)), std::string::npos)
        << e.what();
  }
  redis_.command({"SET", measurement_cache_key(key),
                  R"({"schema":"2","key":"the key","result":"{}"})"});
  EXPECT_THROW(find_measurement(redis_, key), SchemaError);
}

}  // namespace
}  // namespace protuner::farm
