// `protuner submit`: puts a suite into the farm's Redis. Everything is checked before
// anything is written (every library loads, every generator instantiates with its params),
// so a suite with one bad app queues nothing. Then each library is stored by its hash
// (common/farm/library_store.h), and the suite record (common/farm/suite_record.h) and its
// index entry are written by one Lua script, so a reader sees the whole suite or none of it.
// The coordinator takes it from there.
#pragma once

#include <string>

#include "common/farm/suite_record.h"
#include "common/suite.h"

namespace protuner {

class RedisClient;

// Validates, stores and records `suite`; returns the record as written (its id is new).
// Throws ConfigError "file:line: ..." for a suite that does not validate (nothing is
// written), IoError when Redis fails, SchemaError for a database of another layout.
farm::SuiteRecord submit_suite(RedisClient &redis, const Suite &suite);

// submit_suite for a suite the caller has already passed through validate_suite_apps
// (`protuner up` validates before it starts any process). Throws as submit_suite does,
// less the validation.
farm::SuiteRecord store_suite(RedisClient &redis, const Suite &suite);

// A suite id: the suite's name (characters other than letters, digits, '.', '_' and '-'
// replaced by '_') and 8 random hex digits, e.g. "demo-3f9a0c12".
std::string new_suite_id(const std::string &suite_name);

}  // namespace protuner
