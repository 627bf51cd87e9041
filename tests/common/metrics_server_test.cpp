// MetricsServer: a counter registered on it is served over HTTP on loopback.
#include "common/metrics_server.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "common/errors.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

TEST(MetricsServer, ServesARegisteredCounterOverHttp) {
  MetricsServer server("127.0.0.1:0");
  ASSERT_GT(server.port(), 0);
  auto &family = prometheus::BuildCounter()
                     .Name("protuner_test_events_total")
                     .Help("events counted by the test")
                     .Register(server.registry());
  auto &counter = family.Add({{"role", "test"}});
  counter.Increment(3);
  const std::string response = testing::http_get(server.port(), "/metrics");
  EXPECT_NE(response.find("200 OK"), std::string::npos) << response;
  EXPECT_NE(response.find("protuner_test_events_total{role=\"test\"} 3"), std::string::npos)
      << response;
}

TEST(MetricsServer, PortInUseThrowsIoError) {
  MetricsServer first("127.0.0.1:0");
  EXPECT_THROW(MetricsServer("127.0.0.1:" + std::to_string(first.port())), IoError);
}

}  // namespace
}  // namespace protuner
