// Job records: round trip, and every way a stored record can be wrong is refused with the
// field named.
#include "common/farm/job_record.h"

#include <gtest/gtest.h>

#include "common/farm/redis_schema.h"

namespace protuner::farm {
namespace {

Job sample_job() {
  Job job;
  job.suite = "demo-1";
  job.app = "harris";
  job.seed = 2;
  job.library_sha256 = std::string(64, 'a');
  job.generator = "harris";
  job.params = {{"expert", "false"}, {"tile", "32"}};
  job.budget_ms = 900000;
  return job;
}

std::string refusal(const std::string &text) {
  try {
    job_from_json(text, "where");
  } catch (const Error &e) {
    return e.what();
  }
  return "accepted";
}

TEST(JobRecord, RoundTrips) {
  Job job = sample_job();
  EXPECT_EQ(job_from_json(job_to_json(job), "test"), job);
  job.kind = JobKind::kBaselines;
  EXPECT_EQ(job_from_json(job_to_json(job), "test").kind, JobKind::kBaselines);
  EXPECT_FALSE(job_from_json(job_to_json(job), "test") == sample_job());
}

TEST(JobRecord, RefusesMalformedRecordsNamingTheField) {
  EXPECT_EQ(refusal("{not json"), "where: job is not JSON");
  EXPECT_EQ(refusal("[1]"), "where: job is not a JSON object");
  const std::string good = job_to_json(sample_job());
  auto with = [&](const std::string &from, const std::string &to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_NE(refusal(with("\"seed\":2", "\"seed\":\"2\"")).find("\"seed\" is string, not number"),
            std::string::npos);
  EXPECT_NE(refusal(with("\"seed\":2", "\"seed\":-1")).find("field \"seed\" is -1, outside [0, "),
            std::string::npos);
  EXPECT_NE(refusal(with("\"budget_ms\":900000", "\"budget_ms\":0")).find("field \"budget_ms\" is 0, outside [1, "),
            std::string::npos);
  EXPECT_NE(refusal(with("\"app\":\"harris\"", "\"app\":\"\"")).find("\"app\" is empty"),
            std::string::npos);
  EXPECT_NE(refusal(with("\"app\":\"harris\",", "")).find("job has no \"app\""),
            std::string::npos);
  EXPECT_NE(refusal(with("\"tile\":\"32\"", "\"tile\":32")).find("field \"params\" entry \"tile\" is number"),
            std::string::npos);
  EXPECT_NE(refusal(with("\"seed\":2", "\"seed\":2,\"extra\":1")).find("unknown field \"extra\""),
            std::string::npos);
  EXPECT_EQ(refusal(with("\"kind\":\"search\"", "\"kind\":\"measure\"")),
            "where: job field \"kind\" is \"measure\", not \"search\" or \"baselines\"");
}

TEST(JobRecord, RefusesAnotherSchemaVersion) {
  std::string text = job_to_json(sample_job());
  text.replace(text.find("\"schema\":1"), 10, "\"schema\":2");
  try {
    job_from_json(text, "entry 5-0");
    FAIL() << "a schema 2 record was read";
  } catch (const SchemaError &e) {
    EXPECT_NE(std::string(e.what()).find("entry 5-0: written with schema version 2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace protuner::farm
