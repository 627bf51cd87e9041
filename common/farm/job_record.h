// A job, as the coordinator queues it and a searcher reads it: one independent search of
// one app of a submitted suite, (suite, app, seed), or the measurement of that app's
// baselines (Halide's default, the generator's own schedule, Adams2019). It carries
// everything a searcher needs to start without reading anything else: the library by hash
// (library_store.h), the generator and its params, and the app's budget.
//
// JSON, one object, every field required, no others allowed:
//   {"schema": 1, "kind": "search", "suite": "<suite id>", "app": "<name>", "seed": 0,
//    "library_sha256": "<64 hex>", "generator": "<name>", "params": {"k": "v"},
//    "budget_ms": 900000}
#pragma once

#include <cstdint>
#include <map>
#include <string>


namespace protuner::farm {

enum class JobKind {
  kSearch,     // a search within the app's budget (app_state.h: the budget starts with the
               // app's first search job)
  kBaselines,  // the app's baselines, measured outside its budget; seed is 0
};

// "search", "baselines".
const char *job_kind_name(JobKind kind);

struct Job {
  JobKind kind = JobKind::kSearch;
  std::string suite;
  std::string app;
  int seed = 0;
  std::string library_sha256;
  std::string generator;
  std::map<std::string, std::string> params;
  int64_t budget_ms = 0;  // the app's wall-clock budget: search, compile and measurement

  bool operator==(const Job &other) const;
};

std::string job_to_json(const Job &job);
// Throws RecordFormatError (record_json.h) naming `where` (e.g. "protuner:v1:jobs entry 1-0") and what is
// wrong, or SchemaError (redis_schema.h) for a record of another schema version.
Job job_from_json(const std::string &text, const std::string &where);

}  // namespace protuner::farm
