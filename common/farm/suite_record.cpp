#include "common/farm/suite_record.h"

#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"

namespace protuner::farm {

using nlohmann::json;

bool AppRecord::operator==(const AppRecord &other) const {
  return name == other.name && generator == other.generator && params == other.params &&
         library_sha256 == other.library_sha256 && library_file == other.library_file &&
         budget_ms == other.budget_ms && seeds == other.seeds;
}

bool SuiteRecord::operator==(const SuiteRecord &other) const {
  return id == other.id && name == other.name && submitted_ms == other.submitted_ms &&
         apps == other.apps;
}

std::string suite_to_json(const SuiteRecord &suite) {
  json apps = json::array();
  for (const AppRecord &app : suite.apps) {
    apps.push_back({{"name", app.name},
                    {"generator", app.generator},
                    {"params", string_map_json(app.params)},
                    {"library_sha256", app.library_sha256},
                    {"library_file", app.library_file},
                    {"budget_ms", app.budget_ms},
                    {"seeds", app.seeds}});
  }
  return json{{"schema", kLayoutVersion}, {"id", suite.id},     {"name", suite.name},
              {"submitted_ms", suite.submitted_ms}, {"apps", apps}}
      .dump();
}

SuiteRecord suite_from_json(const std::string &text, const std::string &where) {
  const json object =
      parse_record(text, where, "suite", {"schema", "id", "name", "submitted_ms", "apps"});
  const RecordFields fields(object, where, "suite");
  SuiteRecord suite;
  suite.id = fields.nonempty_string("id");
  suite.name = fields.nonempty_string("name");
  suite.submitted_ms = fields.integer("submitted_ms", 0, INT64_MAX);
  const json &apps = fields.array("apps");
  for (size_t i = 0; i < apps.size(); ++i) {
    const std::string app_where = where + " apps[" + std::to_string(i) + "]";
    if (!apps[i].is_object()) throw RecordFormatError(app_where + ": app is not an object");
    const RecordFields app_fields(apps[i], app_where, "app");
    app_fields.refuse_unknown({"name", "generator", "params", "library_sha256", "library_file",
                               "budget_ms", "seeds"});
    AppRecord app;
    app.name = app_fields.nonempty_string("name");
    app.generator = app_fields.nonempty_string("generator");
    app.params = app_fields.string_map("params");
    app.library_sha256 = app_fields.nonempty_string("library_sha256");
    app.library_file = app_fields.nonempty_string("library_file");
    app.budget_ms = app_fields.integer("budget_ms", 1, INT64_MAX);
    app.seeds = static_cast<int>(app_fields.integer("seeds", 1, 1024));
    suite.apps.push_back(std::move(app));
  }
  return suite;
}

std::optional<SuiteRecord> find_suite(RedisClient &redis, const std::string &id) {
  const RedisReply text = redis.command({"GET", suite_key(id)});
  if (text.is_nil()) return std::nullopt;
  return suite_from_json(text.str, suite_key(id));
}

Job job_of(const std::string &suite_id, const AppRecord &app, JobKind kind, int seed) {
  Job job;
  job.kind = kind;
  job.suite = suite_id;
  job.app = app.name;
  job.seed = seed;
  job.library_sha256 = app.library_sha256;
  job.generator = app.generator;
  job.params = app.params;
  job.budget_ms = app.budget_ms;
  return job;
}

}  // namespace protuner::farm
