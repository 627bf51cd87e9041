#include "common/farm/job_record.h"

#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"

namespace protuner::farm {

const char *job_kind_name(JobKind kind) {
  return kind == JobKind::kBaselines ? "baselines" : "search";
}

bool Job::operator==(const Job &other) const {
  return kind == other.kind && suite == other.suite && app == other.app && seed == other.seed &&
         library_sha256 == other.library_sha256 && generator == other.generator &&
         params == other.params && budget_ms == other.budget_ms;
}

std::string job_to_json(const Job &job) {
  return nlohmann::json{{"schema", kLayoutVersion},
                        {"kind", job_kind_name(job.kind)},
                        {"suite", job.suite},
                        {"app", job.app},
                        {"seed", job.seed},
                        {"library_sha256", job.library_sha256},
                        {"generator", job.generator},
                        {"params", string_map_json(job.params)},
                        {"budget_ms", job.budget_ms}}
      .dump();
}

Job job_from_json(const std::string &text, const std::string &where) {
  const nlohmann::json object =
      parse_record(text, where, "job",
                   {"schema", "kind", "suite", "app", "seed", "library_sha256", "generator", "params",
                    "budget_ms"});
  const RecordFields fields(object, where, "job");
  Job job;
  const std::string kind = fields.nonempty_string("kind");
  if (kind == job_kind_name(JobKind::kSearch)) {
    job.kind = JobKind::kSearch;
  } else if (kind == job_kind_name(JobKind::kBaselines)) {
    job.kind = JobKind::kBaselines;
  } else {
    throw RecordFormatError(where + ": job field \"kind\" is \"" + kind +
                            "\", not \"search\" or \"baselines\"");
  }
  job.suite = fields.nonempty_string("suite");
  job.app = fields.nonempty_string("app");
  job.seed = static_cast<int>(fields.integer("seed", 0, INT32_MAX));
  job.library_sha256 = fields.nonempty_string("library_sha256");
  job.generator = fields.nonempty_string("generator");
  job.params = fields.string_map("params");
  job.budget_ms = fields.integer("budget_ms", 1, INT64_MAX);
  return job;
}

}  // namespace protuner::farm
