// Reading the farm's JSON records (jobs, suites) strictly: every field required and of its
// type, no unknown fields, the schema version checked, and every refusal naming where the
// record was found and which field is wrong. Records in Redis outlive the processes that
// wrote them, so a reader trusts nothing in them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/errors.h"

namespace protuner::farm {

// A record that cannot be read: not JSON, a field missing, of the wrong type, out of
// range, or unknown. The message names where the record is and the field.
class RecordFormatError : public Error {
 public:
  using Error::Error;
};

// Reads one record as a JSON object whose fields are all in `known`, and checks its
// "schema" field (redis_schema.h). `what` names the record in messages ("job", "suite").
// Throws RecordFormatError, or SchemaError for another schema version.
nlohmann::json parse_record(const std::string &text, const std::string &where,
                            const std::string &what, const std::set<std::string> &known);

// A field of `object` (a record or a nested object of one); `where` and `what` as above.
class RecordFields {
 public:
  RecordFields(const nlohmann::json &object, std::string where, std::string what)
      : object_(object), where_(std::move(where)), what_(std::move(what)) {}

  std::string nonempty_string(const char *name) const;
  int64_t integer(const char *name, int64_t min, int64_t max) const;
  std::map<std::string, std::string> string_map(const char *name) const;
  const nlohmann::json &array(const char *name) const;
  // A string that may be empty.
  std::string string(const char *name) const;
  // A number, or null for "none".
  std::optional<double> optional_number(const char *name) const;
  // An array of strings.
  std::vector<std::string> strings(const char *name) const;
  // Throws when the object has a field not in `known`.
  void refuse_unknown(const std::set<std::string> &known) const;

 private:
  const nlohmann::json &field(const char *name, nlohmann::json::value_t type) const;
  [[noreturn]] void refuse(const std::string &problem) const;

  const nlohmann::json &object_;
  std::string where_;
  std::string what_;
};

nlohmann::json string_map_json(const std::map<std::string, std::string> &map);

}  // namespace protuner::farm
