// The job queue against a real redis-server: each job to one searcher, reclaimed from a
// searcher that stops heartbeating, poison and unreadable jobs dead-lettered with their
// reasons, and nothing acknowledged twice.
#include "common/farm/job_queue.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/support/loopback.h"

namespace protuner::farm {
namespace {

using std::chrono::milliseconds;

Job job_for(const std::string &app, int seed = 0) {
  Job job;
  job.suite = "s1";
  job.app = app;
  job.seed = seed;
  job.library_sha256 = std::string(64, 'b');
  job.generator = app;
  job.budget_ms = 60000;
  return job;
}

// Short enough to keep tests fast, long enough that a heartbeat every 50 ms never lapses.
constexpr milliseconds kReclaimAfter{300};

class JobQueueTest : public ::testing::Test {
 protected:
  JobQueueSettings settings() const {
    JobQueueSettings s;
    s.reclaim_after = kReclaimAfter;
    s.max_deliveries = 2;
    return s;
  }
  // Takes until a job comes or `within` passes (a reclaim needs the idle time to pass).
  std::optional<Delivery> take_within(JobQueue &queue, const std::string &consumer,
                                      milliseconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < until) {
      if (auto d = queue.take(consumer, milliseconds(50))) return d;
    }
    return std::nullopt;
  }

  testing::RedisServer server_;
  RedisClient redis_{"127.0.0.1", server_.port()};
  JobQueue queue_{redis_, settings()};
};

TEST_F(JobQueueTest, EachJobGoesToOneSearcherAndAckRemovesIt) {
  queue_.enqueue(job_for("a"));
  queue_.enqueue(job_for("b"));
  EXPECT_EQ(queue_.depths().waiting, 2);
  auto first = queue_.take("searcher-1", milliseconds(0));
  auto second = queue_.take("searcher-2", milliseconds(0));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->job, job_for("a"));
  EXPECT_EQ(second->job, job_for("b"));
  EXPECT_EQ(first->deliveries, 1);
  EXPECT_FALSE(queue_.take("searcher-3", milliseconds(0)));
  EXPECT_EQ(queue_.depths().running, 2);
  // Only the holder acknowledges.
  EXPECT_FALSE(queue_.ack(*first, "searcher-2"));
  EXPECT_TRUE(queue_.ack(*first, "searcher-1"));
  EXPECT_FALSE(queue_.ack(*first, "searcher-1"));
  const QueueDepths d = queue_.depths();
  EXPECT_EQ(d.waiting, 0);
  EXPECT_EQ(d.running, 1);
  EXPECT_EQ(d.dead, 0);
}

TEST_F(JobQueueTest, TakeWaitsForAJobQueuedWhileItBlocks) {
  std::thread producer([port = server_.port()] {
    std::this_thread::sleep_for(milliseconds(200));
    RedisClient other("127.0.0.1", port);
    JobQueue(other).enqueue(job_for("late"));
  });
  const auto started = std::chrono::steady_clock::now();
  auto d = queue_.take("searcher-1", milliseconds(3000));
  producer.join();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->job.app, "late");
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(2500));
}

TEST_F(JobQueueTest, HeartbeatKeepsAJobAndASilentHolderLosesIt) {
  queue_.enqueue(job_for("a"));
  auto held = queue_.take("alive", milliseconds(0));
  ASSERT_TRUE(held);
  // Heartbeats for longer than the reclaim limit keep it.
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    ASSERT_TRUE(queue_.heartbeat(*held, "alive"));
    EXPECT_FALSE(queue_.take("other", milliseconds(0)));
  }
  // Silent past the limit: the next searcher that asks gets it, delivery 2.
  auto reclaimed = take_within(queue_, "other", milliseconds(3000));
  ASSERT_TRUE(reclaimed);
  EXPECT_EQ(reclaimed->entry_id, held->entry_id);
  EXPECT_EQ(reclaimed->deliveries, 2);
  // The old holder cannot take it back, nor acknowledge it.
  EXPECT_FALSE(queue_.heartbeat(*held, "alive"));
  EXPECT_FALSE(queue_.ack(*held, "alive"));
  EXPECT_TRUE(queue_.ack(*reclaimed, "other"));
  EXPECT_EQ(queue_.depths().running, 0);
}

TEST_F(JobQueueTest, PoisonJobIsDeadLetteredWithEveryReasonAndTheQueueGoesOn) {
  const std::string poison = queue_.enqueue(job_for("poison"));
  auto first = queue_.take("s1", milliseconds(0));
  ASSERT_TRUE(first);
  // Delivery 1 ends with a reason, delivery 2 with silence, delivery 3 is past the limit.
  ASSERT_TRUE(queue_.give_up(*first, "s1", "the search threw: out of memory"));
  auto second = queue_.take("s2", milliseconds(0));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->deliveries, 2);
  queue_.enqueue(job_for("healthy"));
  auto next = queue_.take("s3", milliseconds(0));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->job.app, "healthy");
  ASSERT_TRUE(queue_.ack(*next, "s3"));
  // Once s2 has been silent past the limit, the poison job is dead-lettered, not run.
  EXPECT_FALSE(take_within(queue_, "s3", 3 * kReclaimAfter));
  const std::vector<DeadLetter> dead = queue_.dead_letters();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].job_entry, poison);
  EXPECT_EQ(dead[0].deliveries, 3);
  EXPECT_EQ(dead[0].consumer, "s3");
  EXPECT_EQ(job_from_json(dead[0].job, "dead"), job_for("poison"));
  ASSERT_EQ(dead[0].reasons.size(), 3u);
  EXPECT_EQ(dead[0].reasons[0], "s1: the search threw: out of memory");
  EXPECT_NE(dead[0].reasons[1].find("held by s2, no heartbeat for"), std::string::npos);
  EXPECT_NE(dead[0].reasons[2].find("delivered 3 times; the limit is 2"), std::string::npos);
  EXPECT_EQ(queue_.depths().dead, 1);
  EXPECT_EQ(redis_.command({"EXISTS", jobs_stream() + ":reasons:" + poison}).integer, 0);
}

TEST_F(JobQueueTest, UnreadableEntriesAreDeadLetteredNotRun) {
  const std::string schema = std::to_string(kLayoutVersion);
  redis_.command({"XADD", jobs_stream(), "*", "schema", schema, "job", "{broken"});
  redis_.command({"XADD", jobs_stream(), "*", "job", "{}"});
  redis_.command({"XADD", jobs_stream(), "*", "schema", std::to_string(kLayoutVersion + 1),
                  "job", job_to_json(job_for("future"))});
  queue_.enqueue(job_for("fine"));
  auto d = queue_.take("s1", milliseconds(0));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->job.app, "fine");
  const std::vector<DeadLetter> dead = queue_.dead_letters();
  ASSERT_EQ(dead.size(), 3u);
  EXPECT_NE(dead[0].reasons.at(0).find("job is not JSON"), std::string::npos);
  EXPECT_EQ(dead[0].job, "{broken");
  EXPECT_NE(dead[1].reasons.at(0).find("no \"schema\" field"), std::string::npos);
  EXPECT_NE(dead[2].reasons.at(0).find("written with schema version " +
                                       std::to_string(kLayoutVersion + 1)),
            std::string::npos);
}

TEST_F(JobQueueTest, ConcurrentSearchersNeverShareAJob) {
  constexpr int kJobs = 40;
  for (int i = 0; i < kJobs; ++i) queue_.enqueue(job_for("app", i));
  std::vector<std::set<int>> seen(4);
  std::vector<std::thread> searchers;
  for (int s = 0; s < 4; ++s) {
    searchers.emplace_back([&, s, port = server_.port()] {
      RedisClient own("127.0.0.1", port);
      JobQueue queue(own, settings());
      const std::string name = "searcher-" + std::to_string(s);
      while (auto d = queue.take(name, milliseconds(0))) {
        seen[s].insert(d->job.seed);
        EXPECT_TRUE(queue.ack(*d, name));
      }
    });
  }
  for (auto &t : searchers) t.join();
  std::set<int> all;
  size_t total = 0;
  for (const auto &s : seen) {
    total += s.size();
    all.insert(s.begin(), s.end());
  }
  EXPECT_EQ(total, static_cast<size_t>(kJobs));
  EXPECT_EQ(all.size(), static_cast<size_t>(kJobs));
}

TEST(JobQueueSettingsTest, BadSettingsAreRefused) {
  testing::RedisServer server;
  RedisClient redis("127.0.0.1", server.port());
  JobQueueSettings s;
  s.max_deliveries = 0;
  EXPECT_THROW(JobQueue(redis, s), ConfigError);
  s = {};
  s.reclaim_after = milliseconds(0);
  EXPECT_THROW(JobQueue(redis, s), ConfigError);
}

}  // namespace
}  // namespace protuner::farm
