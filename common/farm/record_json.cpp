#include "common/farm/record_json.h"

#include "common/farm/redis_schema.h"

namespace protuner::farm {

using nlohmann::json;

json parse_record(const std::string &text, const std::string &where, const std::string &what,
                  const std::set<std::string> &known) {
  json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) throw RecordFormatError(where + ": " + what + " is not JSON");
  if (!object.is_object()) {
    throw RecordFormatError(where + ": " + what + " is not a JSON object");
  }
  const RecordFields fields(object, where, what);
  check_record_schema(std::to_string(fields.integer("schema", 0, INT32_MAX)), where);
  fields.refuse_unknown(known);
  return object;
}

void RecordFields::refuse(const std::string &problem) const {
  throw RecordFormatError(where_ + ": " + what_ + " " + problem);
}

const json &RecordFields::field(const char *name, json::value_t type) const {
  const auto it = object_.find(name);
  if (it == object_.end()) refuse(std::string("has no \"") + name + "\"");
  const bool matches =
      type == json::value_t::number_integer ? it->is_number_integer() : it->type() == type;
  if (!matches) {
    refuse(std::string("field \"") + name + "\" is " + it->type_name() + ", not " +
           json(type).type_name());
  }
  return *it;
}

std::string RecordFields::nonempty_string(const char *name) const {
  std::string value = field(name, json::value_t::string).get<std::string>();
  if (value.empty()) refuse(std::string("field \"") + name + "\" is empty");
  return value;
}

int64_t RecordFields::integer(const char *name, int64_t min, int64_t max) const {
  const int64_t value = field(name, json::value_t::number_integer).get<int64_t>();
  if (value < min || value > max) {
    refuse(std::string("field \"") + name + "\" is " + std::to_string(value) +
           ", outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return value;
}

std::map<std::string, std::string> RecordFields::string_map(const char *name) const {
  std::map<std::string, std::string> out;
  for (const auto &item : field(name, json::value_t::object).items()) {
    if (!item.value().is_string()) {
      refuse(std::string("field \"") + name + "\" entry \"" + item.key() + "\" is " +
             item.value().type_name() + ", not a string");
    }
    out[item.key()] = item.value().get<std::string>();
  }
  return out;
}

void RecordFields::refuse_unknown(const std::set<std::string> &known) const {
  for (const auto &item : object_.items()) {
    if (!known.count(item.key())) refuse("has an unknown field \"" + item.key() + "\"");
  }
}

const json &RecordFields::array(const char *name) const {
  return field(name, json::value_t::array);
}

std::string RecordFields::string(const char *name) const {
  return field(name, json::value_t::string).get<std::string>();
}

std::optional<double> RecordFields::optional_number(const char *name) const {
  const auto it = object_.find(name);
  if (it == object_.end()) refuse(std::string("has no \"") + name + "\"");
  if (it->is_null()) return std::nullopt;
  if (!it->is_number()) {
    refuse(std::string("field \"") + name + "\" is " + it->type_name() + ", not a number");
  }
  return it->get<double>();
}

std::vector<std::string> RecordFields::strings(const char *name) const {
  std::vector<std::string> out;
  for (const json &item : array(name)) {
    if (!item.is_string()) {
      refuse(std::string("field \"") + name + "\" holds " + item.type_name() +
             ", not strings");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

json string_map_json(const std::map<std::string, std::string> &map) {
  json out = json::object();
  for (const auto &[k, v] : map) out[k] = v;
  return out;
}

}  // namespace protuner::farm
