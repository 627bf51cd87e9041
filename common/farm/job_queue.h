// The farm's job queue: a Redis Stream (redis_schema.h: protuner:v1:jobs) read by the
// searchers as one consumer group, so each job goes to one searcher at a time and nothing
// is lost when a searcher dies:
//   - take() hands a searcher one job: first one whose holder stopped heartbeating
//     (XAUTOCLAIM), else a new one (XREADGROUP, blocking up to a limit);
//   - while it runs the job, the searcher calls heartbeat(); a job without one for
//     `reclaim_after` goes to the next searcher that asks;
//   - ack() after the job's results are durably written removes it from the queue; a job
//     delivered twice is harmless because results are keyed by (app, schedule hash);
//   - a job delivered more than `max_deliveries` times (a poison job: it kills or stalls
//     every searcher that runs it), or an entry that cannot be read at all, moves to the
//     dead-letter stream with every reason recorded, and the queue goes on without it.
// Heartbeat, ack and give-up check in one Lua script that the caller still holds the job,
// so a searcher that was presumed dead cannot take a job back from its new holder.
//
// Thread safety: none of its own; use one JobQueue (and RedisClient) per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/farm/job_record.h"
#include "common/redis_client.h"

namespace protuner::farm {

// The queue's tunables, with their defaults.
struct JobQueueSettings {
  // A job whose holder sent no heartbeat for this long is handed to the next searcher.
  // Searchers heartbeat every few seconds; this allows for a stalled host without leaving a
  // dead searcher's job idle for long against a 15-minute budget.
  std::chrono::milliseconds reclaim_after{15000};
  // A job delivered more times than this is dead-lettered instead of run again.
  int max_deliveries = 3;
};

// One job as a searcher holds it.
struct Delivery {
  std::string entry_id;    // the stream entry, e.g. "1700000000000-0"
  Job job;
  int64_t deliveries = 1;  // times this job was handed out, this time included
};

// Queue lengths, for status and metrics.
struct QueueDepths {
  int64_t waiting = 0;  // queued, not yet taken
  int64_t running = 0;  // taken and not acknowledged (held, or held by a dead searcher)
  int64_t dead = 0;     // in the dead-letter stream
};

// One dead-lettered entry, as read back by status and operators.
struct DeadLetter {
  std::string entry_id;     // the dead-letter stream's own entry id
  std::string job_entry;    // the job's entry id in the queue
  std::string job;          // the job's text as it was queued (possibly malformed)
  int64_t deliveries = 0;
  std::string consumer;     // the last searcher that held it, or ""
  std::vector<std::string> reasons;  // one per delivery that ended without an ack
};

class JobQueue {
 public:
  // Creates the stream and consumer group when missing (every process may; it is
  // idempotent). Throws ConfigError for bad settings, IoError when Redis is unreachable.
  JobQueue(RedisClient &redis, JobQueueSettings settings = {});

  // Queues a job; returns its entry id.
  std::string enqueue(const Job &job);

  // One job for `consumer` (a searcher's unique name): a reclaimed one if any, else a new
  // one, waiting up to `block` (zero: do not wait). Entries that cannot be read and jobs
  // past max_deliveries are dead-lettered on the way, with a warning logged.
  std::optional<Delivery> take(const std::string &consumer, std::chrono::milliseconds block);

  // Tells the queue `consumer` still runs the job. False when it no longer holds it (it
  // was reclaimed, or acknowledged elsewhere): the caller should stop working on it.
  bool heartbeat(const Delivery &delivery, const std::string &consumer);

  // Removes a finished job. False when `consumer` no longer holds it (nothing changes).
  bool ack(const Delivery &delivery, const std::string &consumer);

  // Gives a job back without finishing it, recording why (a searcher that is stopping, or
  // whose run failed): the next take() by any searcher gets it again, or dead-letters it
  // when it has used up its deliveries. False when `consumer` no longer holds it.
  bool give_up(const Delivery &delivery, const std::string &consumer, const std::string &reason);

  QueueDepths depths();
  // Up to `count` dead-lettered entries, oldest first; with `after` (a dead-letter entry
  // id), only those after it, so a reader can page through them.
  std::vector<DeadLetter> dead_letters(int count = 100, const std::string &after = "");

 private:
  std::optional<Delivery> reclaim(const std::string &consumer);
  // Turns a raw entry into a delivery, or dead-letters it and returns nothing.
  std::optional<Delivery> accept(const std::string &entry_id,
                                 const std::vector<std::string> &fields,
                                 int64_t deliveries, const std::string &consumer);
  void dead_letter(const std::string &entry_id, const std::string &job_text,
                   int64_t deliveries, const std::string &consumer, const std::string &reason);

  RedisClient &redis_;
  JobQueueSettings settings_;
  // Each caches its SHA1 after the first use, so one queue (one thread) owns its copies.
  RedisScript heartbeat_, ack_, give_up_, dead_letter_;
};

}  // namespace protuner::farm
