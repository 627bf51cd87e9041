// The search jobs' progress records against a real redis-server: a job's latest record
// replaces its last, records of several jobs read back by seed, and a record that is not
// this build's (another schema, a field missing, a negative count) is refused by name.
#include "common/farm/job_progress.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/common/farm/farm_redis_fixture.h"

namespace protuner::farm {
namespace {

JobProgress progress(int64_t seed, int64_t rollouts) {
  JobProgress p;
  p.seed = seed;
  p.searcher = "searcher-a";
  p.rollouts = rollouts;
  p.decisions = 7;
  p.measurements = 3;
  p.best_ms = 2.25;
  p.elapsed_s = 12.5;
  return p;
}

class JobProgressTest : public FarmRedisTest {};

TEST_F(JobProgressTest, TheLatestRecordOfEachJobReadsBack) {
  record_job_progress(redis_, "s1", "blur", progress(0, 100));
  record_job_progress(redis_, "s1", "blur", progress(1, 50));
  record_job_progress(redis_, "s1", "blur", progress(0, 250));  // seed 0 goes on
  std::vector<JobProgress> jobs = read_job_progress(redis_, "s1", "blur");
  std::sort(jobs.begin(), jobs.end(),
            [](const JobProgress &a, const JobProgress &b) { return a.seed < b.seed; });
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].rollouts, 250);
  EXPECT_EQ(jobs[1].rollouts, 50);
  EXPECT_EQ(jobs[0].searcher, "searcher-a");
  EXPECT_EQ(jobs[0].decisions, 7);
  EXPECT_EQ(jobs[0].measurements, 3);
  EXPECT_EQ(jobs[0].best_ms, 2.25);
  EXPECT_EQ(jobs[0].elapsed_s, 12.5);
  EXPECT_TRUE(read_job_progress(redis_, "s1", "other").empty());
}

TEST_F(JobProgressTest, AJobWithNothingMeasuredHasNoBest) {
  JobProgress p = progress(3, 10);
  p.best_ms.reset();
  const JobProgress back = job_progress_from_json(job_progress_to_json(p), "test");
  EXPECT_FALSE(back.best_ms);
  EXPECT_EQ(back.rollouts, 10);
}

TEST_F(JobProgressTest, RecordsOfAnotherSchemaOrShapeAreRefusedByName) {
  const std::string key = progress_key("s1", "blur");
  redis_.command({"HSET", key, "0",
                  R"({"schema": 2, "seed": 0, "searcher": "a", "rollouts": 1, "decisions": 0,
                      "measurements": 0, "best_ms": null, "elapsed_s": 0})"});
  try {
    read_job_progress(redis_, "s1", "blur");
    FAIL() << "a record of schema 2 was read";
  } catch (const SchemaError &e) {
    EXPECT_NE(std::string(e.what()).find(key + " field 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(job_progress_from_json(R"({"schema": 1, "seed": 0})", "test"), RecordFormatError);
  EXPECT_THROW(job_progress_from_json(
                   R"({"schema": 1, "seed": 0, "searcher": "a", "rollouts": -1, "decisions": 0,
                       "measurements": 0, "best_ms": null, "elapsed_s": 0})",
                   "test"),
               RecordFormatError);
  EXPECT_THROW(job_progress_from_json(
                   R"({"schema": 1, "seed": 0, "searcher": "a", "rollouts": 1, "decisions": 0,
                       "measurements": 0, "best_ms": null, "elapsed_s": -2})",
                   "test"),
               RecordFormatError);
}

}  // namespace
}  // namespace protuner::farm
