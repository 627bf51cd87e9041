// Measurers registered in the farm's Redis, so searchers find them there instead of being
// given endpoints: each measurer daemon writes its record every heartbeat with an expiry,
// and a record that is not renewed (the measurer died or lost Redis) disappears. Searchers
// read the live records, keep to one host class per app (timings of different machines do
// not compare) and hand the endpoints to their MeasurerClient.
//
//   protuner:v1:measurer:<name>   hash   the measurer (renewed, expires)   searchers, status
//   protuner:v1:measurers         zset   the measurer (score: last renewal, Redis ms)
//                                        searchers (prune names whose record expired)
//
// A record holds "schema", "name", "endpoint" (what a searcher connects to), "host_class"
// (measurer/cache_key.h host_class_key: CPU model, CPUs measured on, SMT state),
// "cpu_model", "cpus", "smt", "heartbeat_ms", "started_ms" and "seen_ms" (Redis time of
// the last renewal).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace protuner {

class RedisClient;

namespace farm {

std::string measurer_key(const std::string &name);
std::string measurers_index();

struct MeasurerRecord {
  std::string name, endpoint, host_class, cpu_model, smt;
  int cpus = 0;
  int64_t heartbeat_ms = 0, started_ms = 0;
  int64_t seen_ms = 0;  // read back only: Redis time of the last renewal
};

// Writes (or renews) the record, expiring `ttl` from now, and indexes it: one script.
void register_measurer(RedisClient &redis, const MeasurerRecord &record,
                       std::chrono::milliseconds ttl);
// Removes the record at once (a measurer stopping cleanly).
void unregister_measurer(RedisClient &redis, const std::string &name);
// Every measurer whose record has not expired, by name; names whose record has expired
// are pruned from the index. Throws SchemaError for a record of another layout version.
std::vector<MeasurerRecord> live_measurers(RedisClient &redis);

// The host class with the most live measurers (ties: the smallest class key), or "" when
// there are none.
std::string most_common_host_class(const std::vector<MeasurerRecord> &measurers);
// The endpoints of the measurers of `host_class`.
std::vector<std::string> endpoints_of_class(const std::vector<MeasurerRecord> &measurers,
                                            const std::string &host_class);

}  // namespace farm
}  // namespace protuner
