// A free searcher's choice of app: the improvement rate read from an app's best history,
// the choice by policy, and the join script against a real redis-server (a new seed
// queued once per join, only once every app of the suite has started, never with too
// little of the app's budget left).
#include "common/farm/app_join.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.h"
#include "common/farm/app_state.h"
#include "common/farm/job_queue.h"
#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/support/loopback.h"

namespace protuner::farm {
namespace {

TEST(ImprovementPerMinute, IsTheLogOfTheBestsFallOverTheWindowPerMinute) {
  EXPECT_EQ(improvement_per_minute({}, 60000, 60000), 0);
  // Halved within the last minute: ln 2 per minute.
  const std::vector<BestPoint> halved{{0, 10}, {30000, 5}};
  EXPECT_DOUBLE_EQ(improvement_per_minute(halved, 60000, 60000), std::log(2.0));
  // Nothing new in the last 20 s: no improvement, whatever came before.
  EXPECT_EQ(improvement_per_minute(halved, 60000, 20000), 0);
  // The first ok measurement came within the window: it is the starting point, and the
  // rate is per minute of window (a halving in half a minute is 2 ln 2 per minute).
  const std::vector<BestPoint> fresh{{50000, 8}, {55000, 4}};
  EXPECT_DOUBLE_EQ(improvement_per_minute(fresh, 60000, 30000), 2 * std::log(2.0));
  // One point: nothing to compare with.
  EXPECT_EQ(improvement_per_minute({{50000, 8}}, 60000, 30000), 0);
}

TEST(ChooseApp, AdaptiveTakesTheFastestImprovingAndRoundRobinTheLeastServed) {
  const std::vector<JoinCandidate> apps{
      {"s", "a", 0.1, 1}, {"s", "b", 0.7, 3}, {"s", "c", 0.0, 0}, {"s", "d", 0.7, 2}};
  EXPECT_EQ(choose_app(apps, JoinPolicy::kAdaptive), 3u);  // 0.7, and fewer jobs than b
  EXPECT_EQ(choose_app(apps, JoinPolicy::kRoundRobin), 2u);
  EXPECT_EQ(choose_app(apps, JoinPolicy::kOff), std::nullopt);
  EXPECT_EQ(choose_app({}, JoinPolicy::kAdaptive), std::nullopt);
  // Equal in everything: the earliest.
  EXPECT_EQ(choose_app({{"s", "a", 0, 1}, {"s", "b", 0, 1}}, JoinPolicy::kAdaptive), 0u);
}

TEST(JoinPolicyName, RoundTripsAndNamesTheChoicesOfABadOne) {
  for (JoinPolicy p : {JoinPolicy::kAdaptive, JoinPolicy::kRoundRobin, JoinPolicy::kOff}) {
    EXPECT_EQ(parse_join_policy(join_policy_name(p), "--join"), p);
  }
  try {
    parse_join_policy("fastest", "--join");
    FAIL() << "accepted an unknown policy";
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("--join: 'fastest' is not a join policy"),
              std::string::npos)
        << e.what();
  }
}

MeasuredCandidate ok_candidate(const std::string &schedule, double min_ms) {
  MeasuredCandidate c;
  c.schedule_json = schedule;
  c.key = candidate_key(schedule);
  c.status = "ok";
  c.min_ms = c.median_ms = min_ms;
  c.searcher = "searcher-a";
  c.result_json = "{}";
  return c;
}

class AppJoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    check_layout(redis_);
    suite_.id = "s1";
    suite_.name = "join test";
    for (const char *name : {"blur", "sharpen"}) {
      AppRecord app;
      app.name = name;
      app.generator = name;
      app.params = {{"radius", "2"}};
      app.library_sha256 = std::string(64, 'c');
      app.library_file = "libtest.so";
      app.budget_ms = 60000;
      app.seeds = 1;
      suite_.apps.push_back(app);
    }
    redis_.command({"SET", suite_key(suite_.id), suite_to_json(suite_)});
    redis_.command({"ZADD", suites_index(), "1", suite_.id});
    redis_.command({"HSET", suite_state_key(suite_.id), "schema",
                    std::to_string(kLayoutVersion), "phase", "queued"});
    for (const AppRecord &app : suite_.apps) {
      queue_app(redis_, suite_.id, app.name, app.budget_ms,
                {job_of(suite_.id, app, JobKind::kSearch, 0)});
    }
  }

  // Takes the queued search job of each app so that both start.
  void start_both() {
    for (const AppRecord &app : suite_.apps) {
      ASSERT_TRUE(queue_.take("searcher-a", std::chrono::milliseconds(100)));
      start_app(redis_, suite_.id, app.name);
    }
  }

  testing::RedisServer server_;
  RedisClient redis_{"127.0.0.1", server_.port()};
  JobQueue queue_{redis_};
  SuiteRecord suite_;
};

TEST_F(AppJoinTest, AJoinQueuesTheAppsNextSeedOnceEveryAppHasStarted) {
  ASSERT_TRUE(queue_.take("searcher-a", std::chrono::milliseconds(100)));
  start_app(redis_, suite_.id, "blur");
  // sharpen has not started: nothing is joined yet.
  EXPECT_EQ(join_app(redis_, suite_, suite_.apps[0], 0), std::nullopt);
  ASSERT_TRUE(queue_.take("searcher-a", std::chrono::milliseconds(100)));
  start_app(redis_, suite_.id, "sharpen");

  EXPECT_EQ(join_app(redis_, suite_, suite_.apps[0], 0), 1);
  EXPECT_EQ(join_app(redis_, suite_, suite_.apps[0], 0), 2);
  const auto app = read_app(redis_, suite_.id, "blur");
  ASSERT_TRUE(app);
  EXPECT_EQ(app->jobs_total, 3);
  EXPECT_EQ(app->jobs_joined, 2);
  // The joined jobs are the suite's job with the new seeds, as the coordinator writes them.
  for (int seed : {1, 2}) {
    const auto delivery = queue_.take("searcher-b", std::chrono::milliseconds(100));
    ASSERT_TRUE(delivery);
    EXPECT_EQ(delivery->job, job_of(suite_.id, suite_.apps[0], JobKind::kSearch, seed));
  }
}

TEST_F(AppJoinTest, NoJoinWithTooLittleBudgetLeftOrOnceTheAppIsFinal) {
  start_both();
  // More than the whole budget is asked to be left.
  EXPECT_EQ(join_app(redis_, suite_, suite_.apps[0], 61000), std::nullopt);
  ASSERT_TRUE(cancel_app(redis_, suite_.id, "blur"));
  EXPECT_EQ(join_app(redis_, suite_, suite_.apps[0], 0), std::nullopt);
  const auto app = read_app(redis_, suite_.id, "blur");
  EXPECT_EQ(app->jobs_total, 1);
  EXPECT_EQ(app->jobs_joined, 0);
  EXPECT_FALSE(queue_.take("searcher-b", std::chrono::milliseconds(100)));
}

TEST_F(AppJoinTest, TheBestHistoryHoldsEachNewBestInOrder) {
  start_both();
  record_candidate(redis_, suite_.id, "blur", ok_candidate("{\"a\":1}", 10));
  record_candidate(redis_, suite_.id, "blur", ok_candidate("{\"a\":2}", 12));  // not a best
  record_candidate(redis_, suite_.id, "blur", ok_candidate("{\"a\":3}", 5));
  const std::vector<BestPoint> history = read_best_history(redis_, suite_.id, "blur");
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].best_ms, 10);
  EXPECT_EQ(history[1].best_ms, 5);
  EXPECT_LE(history[0].at_ms, history[1].at_ms);
  EXPECT_GT(history[0].at_ms, 0);

  redis_.command({"ZADD", best_history_key(suite_.id, "sharpen"), "1", "fast"});
  EXPECT_THROW(read_best_history(redis_, suite_.id, "sharpen"), RecordFormatError);
}

TEST_F(AppJoinTest, AFreeSearcherJoinsTheImprovingAppOrTheLeastServedOne) {
  JoinSettings adaptive;
  JoinSettings round_robin;
  round_robin.policy = JoinPolicy::kRoundRobin;
  JoinSettings off;
  off.policy = JoinPolicy::kOff;
  // Not every app has started.
  EXPECT_EQ(join_an_app(redis_, adaptive), std::nullopt);
  start_both();
  // sharpen halved its best; blur has one result.
  record_candidate(redis_, suite_.id, "sharpen", ok_candidate("{\"s\":1}", 8));
  record_candidate(redis_, suite_.id, "sharpen", ok_candidate("{\"s\":2}", 4));
  record_candidate(redis_, suite_.id, "blur", ok_candidate("{\"b\":1}", 3));

  EXPECT_EQ(join_an_app(redis_, off), std::nullopt);
  for (int seed : {1, 2}) {
    const auto joined = join_an_app(redis_, adaptive);
    ASSERT_TRUE(joined);
    EXPECT_EQ(joined->app.app, "sharpen");
    EXPECT_EQ(joined->seed, seed);
    EXPECT_NEAR(joined->app.improvement_per_minute, std::log(2.0) / 0.2, 1e-9);
  }
  // Round-robin serves blur, which has one unfinished job against sharpen's three.
  const auto joined = join_an_app(redis_, round_robin);
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->app.app, "blur");
  EXPECT_EQ(joined->app.unfinished_jobs, 1);
  EXPECT_EQ(read_app(redis_, suite_.id, "sharpen")->jobs_joined, 2);
  EXPECT_EQ(read_app(redis_, suite_.id, "blur")->jobs_joined, 1);

  // A suite that is done is not joined.
  redis_.command({"HSET", suite_state_key(suite_.id), "phase", "done"});
  EXPECT_EQ(join_an_app(redis_, adaptive), std::nullopt);
}

}  // namespace
}  // namespace protuner::farm
