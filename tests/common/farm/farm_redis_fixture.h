// The fixture of the tests of the farm's Redis records: a real redis-server on a free
// loopback port, a client of it, and the schema's layout written, as every farm daemon
// checks it before its first read or write.
#pragma once

#include <gtest/gtest.h>

#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/support/loopback.h"

namespace protuner::farm {

class FarmRedisTest : public ::testing::Test {
 protected:
  void SetUp() override { check_layout(redis_); }

  testing::RedisServer server_;
  RedisClient redis_{"127.0.0.1", server_.port()};
};

}  // namespace protuner::farm
