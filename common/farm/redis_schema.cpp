#include "common/farm/redis_schema.h"

#include <charconv>

#include "common/redis_client.h"

namespace protuner::farm {

std::string key(const std::string &rest) {
  return "protuner:v" + std::to_string(kLayoutVersion) + ":" + rest;
}

std::string library_key(const std::string &sha256_hex) { return key("library:" + sha256_hex); }
std::string suite_key(const std::string &suite_id) { return key("suite:" + suite_id); }
std::string suites_index() { return key("suites"); }
std::string jobs_stream() { return key("jobs"); }
std::string jobs_dead_letter_stream() { return key("jobs:dead"); }
std::string suite_state_key(const std::string &suite_id) { return key("suite-state:" + suite_id); }
std::string coordinator_lease_key() { return key("coordinator"); }

namespace {

// The version in `text`, or -1 when it is not a plain decimal number.
int parse_version(const std::string &text) {
  int version = -1;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, version);
  if (ec != std::errc() || ptr != end || text.empty()) return -1;
  return version;
}

}  // namespace

void check_layout(RedisClient &redis) {
  const std::string mine = std::to_string(kLayoutVersion);
  redis.command({"SET", kLayoutKey, mine, "NX"});
  const std::optional<std::string> recorded = redis.get(kLayoutKey);
  if (recorded && *recorded == mine) return;
  const std::string what = recorded ? "'" + *recorded + "'" : "nothing";
  throw SchemaError("redis " + redis.endpoint() + ": " + kLayoutKey + " holds " + what +
                    "; this build reads protuner's Redis layout version " + mine +
                    " (use a protuner built for that layout, or another Redis database)");
}

void check_record_schema(const std::string &schema_field, const std::string &where) {
  const int version = parse_version(schema_field);
  if (version == kLayoutVersion) return;
  if (version < 0) {
    throw SchemaError(where + ": schema field is '" + schema_field +
                      "', not a version number");
  }
  throw SchemaError(where + ": written with schema version " + schema_field +
                    "; this build reads version " + std::to_string(kLayoutVersion) +
                    (version > kLayoutVersion ? " (a newer protuner wrote it)" : ""));
}

}  // namespace protuner::farm
