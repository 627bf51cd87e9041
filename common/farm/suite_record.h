// A submitted suite as the farm stores it: what the user asked for, fixed at submission
// (apps by library hash, generators, params, budgets, seeds). The coordinator turns it into
// jobs; status and report read app names and budgets from it. It is written once and never
// changed; everything that changes while the suite runs lives in other keys.
//
// Stored at protuner:v1:suite:<id> (redis_schema.h) as one JSON object:
//   {"schema": 1, "id": "demo-1a2b3c4d", "name": "demo", "submitted_ms": <unix ms>,
//    "apps": [{"name": "harris", "generator": "harris", "params": {"k": "v"},
//              "library_sha256": "<64 hex>", "library_file": "libprotuner_app_harris.so",
//              "budget_ms": 900000, "seeds": 1}]}
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/farm/job_record.h"

namespace protuner {

class RedisClient;

namespace farm {

struct AppRecord {
  std::string name;
  std::string generator;
  std::map<std::string, std::string> params;
  std::string library_sha256;
  std::string library_file;  // the file name it was submitted as, for reports only
  int64_t budget_ms = 0;
  int seeds = 1;

  bool operator==(const AppRecord &other) const;
};

struct SuiteRecord {
  std::string id;
  std::string name;
  int64_t submitted_ms = 0;
  std::vector<AppRecord> apps;

  bool operator==(const SuiteRecord &other) const;
};

std::string suite_to_json(const SuiteRecord &suite);
// Throws RecordFormatError (record_json.h) naming `where` and the field, SchemaError for
// another schema version.
SuiteRecord suite_from_json(const std::string &text, const std::string &where);

// The suite record stored under `id`; nullopt when there is none. Throws as
// suite_from_json does for one this build cannot read.
std::optional<SuiteRecord> find_suite(RedisClient &redis, const std::string &id);

// A job of `app` of suite `suite_id`: its baselines (seed 0) or the search with `seed`.
Job job_of(const std::string &suite_id, const AppRecord &app, JobKind kind, int seed = 0);

}  // namespace farm
}  // namespace protuner
