// See measurement_cache.h.
#include "common/farm/measurement_cache.h"

#include <nlohmann/json.hpp>

#include "common/farm/library_store.h"
#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"

namespace protuner::farm {

std::string measurement_cache_key(const std::string &key_text) {
  return key("measurement:" + sha256_of_bytes(key_text));
}

std::optional<std::string> find_measurement(RedisClient &redis, const std::string &key_text) {
  const std::string where = measurement_cache_key(key_text);
  const std::optional<std::string> text = redis.get(where);
  if (!text) return std::nullopt;
  nlohmann::json entry;
  try {
    entry = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception &e) {
    throw RecordFormatError(where + ": not JSON: " + e.what());
  }
  if (!entry.is_object() || !entry.contains("schema") || !entry.contains("key") ||
      !entry.contains("result") || !entry["key"].is_string() || !entry["result"].is_string()) {
    throw RecordFormatError(where + ": not a measurement entry (schema, key, result)");
  }
  check_record_schema(entry["schema"].is_string() ? entry["schema"].get<std::string>() : "",
                      where);
  if (entry["key"].get<std::string>() != key_text) return std::nullopt;  // a hash collision
  return entry["result"].get<std::string>();
}

bool store_measurement(RedisClient &redis, const std::string &key_text,
                       const std::string &result_json) {
  const nlohmann::json entry = {{"schema", std::to_string(kLayoutVersion)},
                                {"key", key_text},
                                {"result", result_json}};
  const RedisReply reply =
      redis.command({"SET", measurement_cache_key(key_text), entry.dump(), "NX"});
  return !reply.is_nil();
}

}  // namespace protuner::farm
