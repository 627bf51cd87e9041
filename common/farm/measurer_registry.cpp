// See measurer_registry.h.
#include "common/farm/measurer_registry.h"

#include <algorithm>
#include <map>

#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/farm/server_time.h"
#include "common/redis_client.h"

namespace protuner::farm {
namespace {

// KEYS: record, index. ARGV: schema, name, endpoint, host_class, cpu_model, cpus, smt,
// heartbeat_ms, started_ms, ttl_ms.
constexpr const char *kRegisterBody = R"(
redis.call('HSET', KEYS[1], 'schema', ARGV[1], 'name', ARGV[2], 'endpoint', ARGV[3],
           'host_class', ARGV[4], 'cpu_model', ARGV[5], 'cpus', ARGV[6], 'smt', ARGV[7],
           'heartbeat_ms', ARGV[8], 'started_ms', ARGV[9], 'seen_ms', now)
redis.call('PEXPIRE', KEYS[1], ARGV[10])
redis.call('ZADD', KEYS[2], now, ARGV[2])
return 1
)";

// KEYS: index. ARGV: the record key prefix. Returns every live record's HGETALL, and drops
// the names whose records expired from the index, in one round trip.
constexpr const char *kLiveRecords = R"(
local out = {}
for _, name in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local fields = redis.call('HGETALL', ARGV[1] .. name)
  if #fields == 0 then redis.call('ZREM', KEYS[1], name) else out[#out + 1] = fields end
end
return out
)";

int64_t field_int(const std::map<std::string, std::string> &fields, const std::string &name,
                  const std::string &where) {
  const auto it = fields.find(name);
  if (it == fields.end()) throw RecordFormatError(where + ": no field '" + name + "'");
  try {
    return std::stoll(it->second);
  } catch (const std::exception &) {
    throw RecordFormatError(where + ": field '" + name + "' is not an integer: " + it->second);
  }
}

}  // namespace

std::string measurer_key(const std::string &name) { return key("measurer:" + name); }
std::string measurers_index() { return key("measurers"); }

void register_measurer(RedisClient &redis, const MeasurerRecord &r, std::chrono::milliseconds ttl) {
  thread_local RedisScript script("measurer registration",
                                 std::string(kServerNowLua) + kRegisterBody);
  redis.eval(script, {measurer_key(r.name), measurers_index()},
             {std::to_string(kLayoutVersion), r.name, r.endpoint, r.host_class, r.cpu_model,
              std::to_string(r.cpus), r.smt, std::to_string(r.heartbeat_ms),
              std::to_string(r.started_ms), std::to_string(ttl.count())});
}

void unregister_measurer(RedisClient &redis, const std::string &name) {
  redis.command({"DEL", measurer_key(name)});
  redis.command({"ZREM", measurers_index(), name});
}

std::vector<MeasurerRecord> live_measurers(RedisClient &redis) {
  thread_local RedisScript script("live measurers", kLiveRecords);
  std::vector<MeasurerRecord> out;
  const RedisReply records = redis.eval(script, {measurers_index()}, {measurer_key("")});
  for (const RedisReply &hash : records.elements) {
    std::map<std::string, std::string> f;
    for (size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
      f[hash.elements[i].str] = hash.elements[i + 1].str;
    }
    const std::string where = measurer_key(f["name"]);
    check_record_schema(f["schema"], where);
    MeasurerRecord r;
    r.name = f["name"];
    r.endpoint = f["endpoint"];
    r.host_class = f["host_class"];
    r.cpu_model = f["cpu_model"];
    r.smt = f["smt"];
    r.cpus = static_cast<int>(field_int(f, "cpus", where));
    r.heartbeat_ms = field_int(f, "heartbeat_ms", where);
    r.started_ms = field_int(f, "started_ms", where);
    r.seen_ms = field_int(f, "seen_ms", where);
    if (r.endpoint.empty()) throw RecordFormatError(where + ": no endpoint");
    out.push_back(std::move(r));
  }
  return out;
}

std::string most_common_host_class(const std::vector<MeasurerRecord> &measurers) {
  std::map<std::string, int> counts;
  for (const MeasurerRecord &m : measurers) ++counts[m.host_class];
  std::string best;
  int most = 0;
  for (const auto &[host_class, n] : counts) {
    if (n > most) {
      best = host_class;
      most = n;
    }
  }
  return best;
}

std::vector<std::string> endpoints_of_class(const std::vector<MeasurerRecord> &measurers,
                                            const std::string &host_class) {
  std::vector<std::string> out;
  for (const MeasurerRecord &m : measurers) {
    if (m.host_class == host_class) out.push_back(m.endpoint);
  }
  return out;
}

}  // namespace protuner::farm
