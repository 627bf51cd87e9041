#include "common/farm/job_record.h"

#include <nlohmann/json.hpp>
#include <set>

#include "common/farm/redis_schema.h"

namespace protuner::farm {
namespace {

using nlohmann::json;

const json &field(const json &object, const char *name, json::value_t type,
                  const std::string &where) {
  const auto it = object.find(name);
  if (it == object.end()) throw JobFormatError(where + ": job has no \"" + name + "\"");
  const bool matches = type == json::value_t::number_integer
                           ? it->is_number_integer()
                           : it->type() == type;
  if (!matches) {
    throw JobFormatError(where + ": job field \"" + name + "\" is " + it->type_name() +
                         ", not " + json(type).type_name());
  }
  return *it;
}

std::string nonempty_string(const json &object, const char *name, const std::string &where) {
  const std::string value = field(object, name, json::value_t::string, where).get<std::string>();
  if (value.empty()) throw JobFormatError(where + ": job field \"" + name + "\" is empty");
  return value;
}

}  // namespace

bool Job::operator==(const Job &other) const {
  return suite == other.suite && app == other.app && seed == other.seed &&
         library_sha256 == other.library_sha256 && generator == other.generator &&
         params == other.params && budget_ms == other.budget_ms;
}

std::string job_to_json(const Job &job) {
  json params = json::object();
  for (const auto &[k, v] : job.params) params[k] = v;
  return json{{"schema", kLayoutVersion},       {"suite", job.suite},
              {"app", job.app},                 {"seed", job.seed},
              {"library_sha256", job.library_sha256}, {"generator", job.generator},
              {"params", params},               {"budget_ms", job.budget_ms}}
      .dump();
}

Job job_from_json(const std::string &text, const std::string &where) {
  const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) throw JobFormatError(where + ": job is not JSON");
  if (!object.is_object()) throw JobFormatError(where + ": job is not a JSON object");
  const json &schema = field(object, "schema", json::value_t::number_integer, where);
  check_record_schema(std::to_string(schema.get<int64_t>()), where);

  static const std::set<std::string> known = {"schema",    "suite",  "app",      "seed",
                                              "library_sha256", "generator", "params",
                                              "budget_ms"};
  for (const auto &item : object.items()) {
    if (!known.count(item.key())) {
      throw JobFormatError(where + ": job has an unknown field \"" + item.key() + "\"");
    }
  }
  Job job;
  job.suite = nonempty_string(object, "suite", where);
  job.app = nonempty_string(object, "app", where);
  job.generator = nonempty_string(object, "generator", where);
  job.library_sha256 = nonempty_string(object, "library_sha256", where);
  const int64_t seed = field(object, "seed", json::value_t::number_integer, where).get<int64_t>();
  if (seed < 0 || seed > INT32_MAX) {
    throw JobFormatError(where + ": job seed " + std::to_string(seed) + " is out of range");
  }
  job.seed = static_cast<int>(seed);
  job.budget_ms = field(object, "budget_ms", json::value_t::number_integer, where).get<int64_t>();
  if (job.budget_ms <= 0) {
    throw JobFormatError(where + ": job budget_ms " + std::to_string(job.budget_ms) +
                         " is not positive");
  }
  for (const auto &item : field(object, "params", json::value_t::object, where).items()) {
    if (!item.value().is_string()) {
      throw JobFormatError(where + ": job param \"" + item.key() + "\" is " +
                           item.value().type_name() + ", not a string");
    }
    job.params[item.key()] = item.value().get<std::string>();
  }
  return job;
}

}  // namespace protuner::farm
