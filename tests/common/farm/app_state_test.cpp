// The apps' live records against a real redis-server: an app's jobs are queued once, its
// budget clock starts once, a candidate counts once and only while the app runs, the best
// is the fastest, and an app finishes when its jobs are done or its deadline passes.
#include "common/farm/app_state.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/farm/job_queue.h"
#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/common/farm/farm_redis_fixture.h"

namespace protuner::farm {
namespace {

Job job_of(JobKind kind, int seed) {
  Job job;
  job.kind = kind;
  job.suite = "s1";
  job.app = "blur";
  job.seed = seed;
  job.library_sha256 = std::string(64, 'c');
  job.generator = "blur";
  job.budget_ms = 60000;
  return job;
}

std::vector<Job> jobs(int searches) {
  std::vector<Job> out{job_of(JobKind::kBaselines, 0)};
  for (int i = 0; i < searches; ++i) out.push_back(job_of(JobKind::kSearch, i));
  return out;
}

MeasuredCandidate candidate(const std::string &schedule, const std::string &status,
                            std::optional<double> min_ms) {
  MeasuredCandidate c;
  c.schedule_json = schedule;
  c.key = candidate_key(schedule);
  c.status = status;
  c.min_ms = min_ms;
  c.median_ms = min_ms;
  c.searcher = "searcher-a";
  c.result_json = "{}";
  return c;
}

JobSummary summary(int64_t seed) {
  JobSummary s;
  s.seed = seed;
  s.searcher = "searcher-a";
  s.best_ms = 1.5;
  s.measurements = 4;
  s.errors = {"one warning"};
  return s;
}

class AppStateTest : public FarmRedisTest {};

TEST_F(AppStateTest, AnAppIsQueuedOnceWithItsJobs) {
  EXPECT_TRUE(queue_app(redis_, "s1", "blur", 60000, jobs(2)));
  EXPECT_FALSE(queue_app(redis_, "s1", "blur", 60000, jobs(2)));
  EXPECT_EQ(redis_.command({"XLEN", jobs_stream()}).integer, 3);
  const auto state = read_app(redis_, "s1", "blur");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->phase, AppPhase::kWaiting);
  EXPECT_EQ(state->jobs_total, 2);  // the baselines job is not a search
  EXPECT_EQ(state->budget_ms, 60000);
  EXPECT_FALSE(state->started_ms);
  // The queued jobs read back as jobs.
  JobQueue queue(redis_);
  const auto first = queue.take("c", std::chrono::milliseconds(0));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->job, job_of(JobKind::kBaselines, 0));
}

TEST_F(AppStateTest, ACancelledSuiteQueuesNothing) {
  redis_.command({"HSET", suite_state_key("s1"), "phase", "cancelled"});
  EXPECT_FALSE(queue_app(redis_, "s1", "blur", 60000, jobs(1)));
  EXPECT_FALSE(read_app(redis_, "s1", "blur"));
  EXPECT_EQ(redis_.command({"XLEN", jobs_stream()}).integer, 0);
}

TEST_F(AppStateTest, TheFirstSearchJobStartsTheBudgetClockOnce) {
  queue_app(redis_, "s1", "blur", 60000, jobs(2));
  const AppStart first = start_app(redis_, "s1", "blur");
  EXPECT_EQ(first.state.phase, AppPhase::kRunning);
  ASSERT_TRUE(first.state.started_ms && first.state.deadline_ms);
  EXPECT_EQ(*first.state.deadline_ms - *first.state.started_ms, 60000);
  EXPECT_GE(first.now_ms, *first.state.started_ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const AppStart second = start_app(redis_, "s1", "blur");
  EXPECT_EQ(second.state.started_ms, first.state.started_ms);
  EXPECT_GE(second.now_ms, first.now_ms + 15);
}

TEST_F(AppStateTest, StartingAnAppWithoutARecordNamesIt) {
  try {
    start_app(redis_, "s1", "nope");
    FAIL() << "started an app that was never queued";
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find(app_key("s1", "nope")), std::string::npos) << e.what();
  }
}

TEST_F(AppStateTest, ACandidateCountsOnceAndTheBestIsTheFastest) {
  queue_app(redis_, "s1", "blur", 60000, jobs(1));
  start_app(redis_, "s1", "blur");
  EXPECT_TRUE(record_candidate(redis_, "s1", "blur", candidate("a", "ok", 3.0)));
  EXPECT_TRUE(record_candidate(redis_, "s1", "blur", candidate("b", "ok", 2.0)));
  EXPECT_TRUE(record_candidate(redis_, "s1", "blur", candidate("c", "ok", 2.5)));
  EXPECT_TRUE(record_candidate(redis_, "s1", "blur", candidate("d", "wrong_output", {})));
  EXPECT_TRUE(record_candidate(redis_, "s1", "blur", candidate("e", "compile_error", {})));
  // The same schedule again (a job delivered twice, another searcher): not counted.
  EXPECT_FALSE(record_candidate(redis_, "s1", "blur", candidate("b", "ok", 1.0)));
  const auto state = read_app(redis_, "s1", "blur");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->measurements, 5);
  EXPECT_EQ(state->failures, 2);
  EXPECT_EQ(state->failures_by_status.at("wrong_output"), 1);
  EXPECT_EQ(state->failures_by_status.at("compile_error"), 1);
  ASSERT_TRUE(state->best_ms);
  EXPECT_DOUBLE_EQ(*state->best_ms, 2.0);
  EXPECT_EQ(state->best_key, candidate_key("b"));
  const auto best = read_candidate(redis_, "s1", "blur", state->best_key);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->schedule_json, "b");
  EXPECT_EQ(read_candidates(redis_, "s1", "blur").size(), 5u);
}

TEST_F(AppStateTest, AfterTheAppIsFinishedResultsAreKeptButChangeNothing) {
  queue_app(redis_, "s1", "blur", 60000, jobs(1));
  start_app(redis_, "s1", "blur");
  record_candidate(redis_, "s1", "blur", candidate("a", "ok", 3.0));
  ASSERT_TRUE(record_job_done(redis_, "s1", "blur", summary(0)));
  ASSERT_EQ(finish_app_if_due(redis_, "s1", "blur"), AppPhase::kDone);
  EXPECT_TRUE(record_candidate(redis_, "s1", "blur", candidate("late", "ok", 0.5)));
  const auto state = read_app(redis_, "s1", "blur");
  EXPECT_DOUBLE_EQ(*state->best_ms, 3.0);
  EXPECT_EQ(state->measurements, 1);
  EXPECT_TRUE(state->finished_ms);
  EXPECT_EQ(read_candidates(redis_, "s1", "blur").size(), 2u);
  EXPECT_FALSE(finish_app_if_due(redis_, "s1", "blur"));  // final stays final
  EXPECT_FALSE(cancel_app(redis_, "s1", "blur"));
}

TEST_F(AppStateTest, AnAppIsDueWhenEverySearchJobIsDone) {
  queue_app(redis_, "s1", "blur", 60000, jobs(2));
  start_app(redis_, "s1", "blur");
  record_candidate(redis_, "s1", "blur", candidate("a", "ok", 3.0));
  EXPECT_FALSE(finish_app_if_due(redis_, "s1", "blur"));
  EXPECT_TRUE(record_job_done(redis_, "s1", "blur", summary(0)));
  EXPECT_FALSE(record_job_done(redis_, "s1", "blur", summary(0)));  // once per seed
  EXPECT_FALSE(finish_app_if_due(redis_, "s1", "blur"));
  EXPECT_TRUE(record_job_done(redis_, "s1", "blur", summary(1)));
  EXPECT_EQ(finish_app_if_due(redis_, "s1", "blur"), AppPhase::kDone);
  const JobSummary back = job_summary_from_json(
      redis_.command({"HGET", jobs_done_key("s1", "blur"), "1"}).str, "test");
  EXPECT_EQ(back.errors, summary(1).errors);
  EXPECT_EQ(back.best_ms, 1.5);
}

TEST_F(AppStateTest, AnAppIsDueAtItsDeadlineAndFailsWithTheFirstReasonWhenNothingWasOk) {
  queue_app(redis_, "s1", "blur", 50, jobs(1));
  start_app(redis_, "s1", "blur");
  record_candidate(redis_, "s1", "blur", candidate("a", "runtime_crash", {}));
  EXPECT_FALSE(finish_app_if_due(redis_, "s1", "blur"));
  note_app_error(redis_, "s1", "blur", "every candidate crashed");
  note_app_error(redis_, "s1", "blur", "a later reason");
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(finish_app_if_due(redis_, "s1", "blur"), AppPhase::kFailed);
  EXPECT_EQ(read_app(redis_, "s1", "blur")->error, "every candidate crashed");
}

TEST_F(AppStateTest, AFailedAppWithoutAReasonNamesItsCounts) {
  queue_app(redis_, "s1", "blur", 60000, jobs(1));
  start_app(redis_, "s1", "blur");
  record_candidate(redis_, "s1", "blur", candidate("a", "timeout", {}));
  record_job_done(redis_, "s1", "blur", summary(0));
  EXPECT_EQ(finish_app_if_due(redis_, "s1", "blur"), AppPhase::kFailed);
  EXPECT_EQ(read_app(redis_, "s1", "blur")->error,
            "no schedule measured ok (1 measured, 1 failed)");
}

TEST_F(AppStateTest, ACancelledAppStaysCancelled) {
  queue_app(redis_, "s1", "blur", 60000, jobs(1));
  EXPECT_TRUE(cancel_app(redis_, "s1", "blur"));
  EXPECT_FALSE(cancel_app(redis_, "s1", "blur"));
  EXPECT_EQ(read_app(redis_, "s1", "blur")->phase, AppPhase::kCancelled);
  EXPECT_EQ(start_app(redis_, "s1", "blur").state.phase, AppPhase::kCancelled);
  EXPECT_FALSE(finish_app_if_due(redis_, "s1", "blur"));
}

TEST_F(AppStateTest, BaselinesAreStoredOnceByName) {
  MeasuredCandidate own = candidate("", "ok", 4.0);
  own.key = "own";
  EXPECT_FALSE(has_baseline(redis_, "s1", "blur", "own"));
  EXPECT_TRUE(record_baseline(redis_, "s1", "blur", own));
  own.min_ms = 1.0;
  EXPECT_FALSE(record_baseline(redis_, "s1", "blur", own));
  EXPECT_TRUE(has_baseline(redis_, "s1", "blur", "own"));
  const auto baselines = read_baselines(redis_, "s1", "blur");
  ASSERT_EQ(baselines.count("own"), 1u);
  EXPECT_DOUBLE_EQ(*baselines.at("own").min_ms, 4.0);
}

TEST_F(AppStateTest, ARecordOfAnotherLayoutOrWithABadPhaseIsRefusedNamingTheKey) {
  redis_.command({"HSET", app_key("s1", "new"), "schema", "2", "phase", "running"});
  EXPECT_THROW(read_app(redis_, "s1", "new"), SchemaError);
  redis_.command({"HSET", app_key("s1", "odd"), "schema", "1", "phase", "sleeping"});
  try {
    read_app(redis_, "s1", "odd");
    FAIL() << "read a phase that does not exist";
  } catch (const RecordFormatError &e) {
    EXPECT_NE(std::string(e.what()).find(app_key("s1", "odd")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sleeping"), std::string::npos) << e.what();
  }
}

TEST(CandidateJson, RoundTripsAndRefusesUnknownFields) {
  const MeasuredCandidate c = candidate("{\"kind\":\"x\"}", "ok", 1.25);
  const MeasuredCandidate back = candidate_from_json(candidate_to_json(c), "test");
  EXPECT_EQ(back.key, c.key);
  EXPECT_EQ(back.schedule_json, c.schedule_json);
  EXPECT_EQ(back.min_ms, c.min_ms);
  EXPECT_EQ(back.searcher, c.searcher);
  std::string text = candidate_to_json(c);
  text.insert(text.size() - 1, ",\"extra\":1");
  EXPECT_THROW(candidate_from_json(text, "test"), RecordFormatError);
  // Keys are the schedule's hash: equal schedules, equal keys.
  EXPECT_EQ(candidate_key("abc"), candidate_key("abc"));
  EXPECT_NE(candidate_key("abc"), candidate_key("abd"));
  EXPECT_EQ(candidate_key("abc").size(), 64u);
}

}  // namespace
}  // namespace protuner::farm
