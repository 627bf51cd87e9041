// The farm-wide measurement cache: one answer per (pipeline, schedule, target, host class,
// measurement settings), whichever suite, app, searcher or measurer produced it, so the
// same candidate is never measured twice anywhere in the farm. A night's suites often
// share apps with the last night's; their candidates come back from here at once.
//
// Keys: protuner:v1:measurement:<sha256 of the key text>, a string holding
// {"schema", "key": the key text, "result": MeasureResult JSON (measure_json.h)}. The key
// text is the caller's canonical description (searcher/daemon/farm_backend.h builds it);
// it is stored beside the result and compared on every read, so a hash collision is a miss.
// Entries are written once (SET NX) and never expire: they are the farm's ground truth and
// its training data.
#pragma once

#include <optional>
#include <string>

namespace protuner {

class RedisClient;

namespace farm {

std::string measurement_cache_key(const std::string &key_text);

// The result JSON stored for `key_text`; nullopt when none is, or when the entry under its
// hash holds another key. Throws SchemaError for an entry of another layout,
// RecordFormatError for one that is not what this build writes.
std::optional<std::string> find_measurement(RedisClient &redis, const std::string &key_text);

// Stores `result_json` for `key_text` unless an answer is stored; true when it was new.
bool store_measurement(RedisClient &redis, const std::string &key_text,
                       const std::string &result_json);

}  // namespace farm
}  // namespace protuner
