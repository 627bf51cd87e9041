#include "common/farm/job_queue.h"

#include <spdlog/spdlog.h>

#include <charconv>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/farm/record_json.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"

namespace protuner::farm {
namespace {

// Lua helper shared by the scripts: whether ARGV[3] holds entry ARGV[2] of group ARGV[1].
constexpr const char *kHolds = R"lua(
local function holds()
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
  return #p == 1 and p[1][2] == ARGV[3]
end
)lua";

// XCLAIM with min-idle 0 resets the entry's idle time; JUSTID leaves its delivery count.
constexpr const char *kHeartbeat = R"lua(
if not holds() then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'JUSTID')
return 1
)lua";

constexpr const char *kAck = R"lua(
if not holds() then return 0 end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2])
return 1
)lua";

// The reason is recorded and the entry's idle time set past the reclaim limit, so the next
// take() anywhere picks it up.
constexpr const char *kGiveUp = R"lua(
if not holds() then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'IDLE', ARGV[5], 'JUSTID')
return 1
)lua";

// KEYS: queue, dead-letter stream, reasons list. ARGV: group, entry, consumer, schema,
// job text, deliveries, final reason.
constexpr const char *kDeadLetter = R"lua(
local reasons = redis.call('LRANGE', KEYS[3], 0, -1)
table.insert(reasons, ARGV[7])
redis.call('XADD', KEYS[2], '*', 'schema', ARGV[4], 'entry', ARGV[2], 'job', ARGV[5],
           'deliveries', ARGV[6], 'consumer', ARGV[3], 'reasons', cjson.encode(reasons))
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[3])
return 1
)lua";

// Beyond XREADGROUP's own BLOCK, how long its reply may take to arrive.
constexpr std::chrono::milliseconds kBlockReplyMargin{5000};

std::string reasons_key(const std::string &entry_id) { return jobs_stream() + ":reasons:" + entry_id; }

// A stream entry's field list [f1, v1, f2, v2, ...] as strings; nil (a deleted entry) is empty.
std::vector<std::string> field_list(const RedisReply &fields) {
  std::vector<std::string> out;
  for (const RedisReply &f : fields.elements) out.push_back(f.str);
  return out;
}

const std::string *find_field(const std::vector<std::string> &fields, const std::string &name) {
  for (size_t i = 0; i + 1 < fields.size(); i += 2) {
    if (fields[i] == name) return &fields[i + 1];
  }
  return nullptr;
}

std::string seconds_text(int64_t ms) {
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

}  // namespace

JobQueue::JobQueue(RedisClient &redis, JobQueueSettings settings)
    : redis_(redis),
      settings_(settings),
      heartbeat_("job queue heartbeat", std::string(kHolds) + kHeartbeat),
      ack_("job queue ack", std::string(kHolds) + kAck),
      give_up_("job queue give-up", std::string(kHolds) + kGiveUp),
      dead_letter_("job queue dead-letter", kDeadLetter) {
  if (settings_.reclaim_after.count() <= 0) {
    throw ConfigError("job queue: reclaim_after must be positive");
  }
  if (settings_.max_deliveries < 1) throw ConfigError("job queue: max_deliveries must be at least 1");
  try {
    redis_.command({"XGROUP", "CREATE", jobs_stream(), kSearcherGroup, "0", "MKSTREAM"});
  } catch (const ReplyError &e) {
    // BUSYGROUP: another process created it first, which is the common case.
    if (e.code() != "BUSYGROUP") throw;
  }
}

std::string JobQueue::enqueue(const Job &job) {
  return redis_
      .command({"XADD", jobs_stream(), "*", "schema", std::to_string(kLayoutVersion), "job",
                job_to_json(job)})
      .str;
}

std::optional<Delivery> JobQueue::take(const std::string &consumer,
                                       std::chrono::milliseconds block) {
  if (consumer.empty()) throw ConfigError("job queue: a consumer needs a name");
  // Each pass either returns a job or dead-letters one entry, so this ends.
  for (;;) {
    if (auto reclaimed = reclaim(consumer)) return reclaimed;
    std::vector<std::string> read = {"XREADGROUP", "GROUP", kSearcherGroup, consumer, "COUNT", "1"};
    // BLOCK 0 would wait forever; no BLOCK at all returns at once.
    if (block.count() > 0) {
      read.push_back("BLOCK");
      read.push_back(std::to_string(block.count()));
    }
    read.insert(read.end(), {"STREAMS", jobs_stream(), ">"});
    RedisReply reply = redis_.command(read, block + kBlockReplyMargin);
    if (reply.is_nil() || reply.elements.empty() || reply.elements[0].elements.size() < 2 ||
        reply.elements[0].elements[1].elements.empty()) {
      return std::nullopt;
    }
    const RedisReply &entry = reply.elements[0].elements[1].elements[0];
    if (entry.elements.size() < 2) continue;
    if (auto delivery = accept(entry.elements[0].str, field_list(entry.elements[1]), 1, consumer)) {
      return delivery;
    }
  }
}

std::optional<Delivery> JobQueue::reclaim(const std::string &consumer) {
  const std::string min_idle = std::to_string(settings_.reclaim_after.count());
  for (;;) {
    // Stale entries with their holders and delivery counts, oldest first.
    RedisReply stale = redis_.command(
        {"XPENDING", jobs_stream(), kSearcherGroup, "IDLE", min_idle, "-", "+", "1"});
    if (stale.elements.empty()) return std::nullopt;
    const RedisReply &p = stale.elements[0];
    if (p.elements.size() < 4) return std::nullopt;
    const std::string id = p.elements[0].str;
    const std::string holder = p.elements[1].str;
    const int64_t idle_ms = p.elements[2].integer;
    const int64_t delivered = p.elements[3].integer;
    // XCLAIM re-checks the idle time, so of two searchers reclaiming at once one wins.
    RedisReply claimed =
        redis_.command({"XCLAIM", jobs_stream(), kSearcherGroup, consumer, min_idle, id});
    if (claimed.elements.empty()) continue;  // taken by another, or its entry was deleted
    const RedisReply &entry = claimed.elements[0];
    // Every delivery that ended without an ack leaves one reason: give_up() wrote its own,
    // a holder that died wrote none.
    const std::string reasons = reasons_key(id);
    if (redis_.command({"LLEN", reasons}).integer < delivered) {
      redis_.command({"RPUSH", reasons,
                      "held by " + holder + ", no heartbeat for " + seconds_text(idle_ms)});
    }
    spdlog::info("job queue: {} reclaimed job {} from {} (delivery {})", consumer, id, holder,
                 delivered + 1);
    if (entry.elements.size() < 2 || entry.elements[1].is_nil()) {
      dead_letter(id, "", delivered + 1, consumer, "the entry's fields are gone");
      continue;
    }
    if (delivered + 1 > settings_.max_deliveries) {
      const std::vector<std::string> fields = field_list(entry.elements[1]);
      const std::string *job = find_field(fields, "job");
      dead_letter(id, job ? *job : "", delivered + 1, consumer,
                  "delivered " + std::to_string(delivered + 1) + " times; the limit is " +
                      std::to_string(settings_.max_deliveries));
      continue;
    }
    if (auto delivery = accept(id, field_list(entry.elements[1]), delivered + 1, consumer)) {
      return delivery;
    }
  }
}

std::optional<Delivery> JobQueue::accept(const std::string &entry_id,
                                         const std::vector<std::string> &fields,
                                         int64_t deliveries, const std::string &consumer) {
  const std::string where = jobs_stream() + " entry " + entry_id;
  const std::string *schema = find_field(fields, "schema");
  const std::string *job = find_field(fields, "job");
  try {
    if (!schema) throw RecordFormatError(where + ": no \"schema\" field");
    check_record_schema(*schema, where);
    if (!job) throw RecordFormatError(where + ": no \"job\" field");
    Delivery delivery;
    delivery.entry_id = entry_id;
    delivery.job = job_from_json(*job, where);
    delivery.deliveries = deliveries;
    return delivery;
  } catch (const Error &e) {
    // RecordFormatError or SchemaError: no searcher can run it, so no retry helps.
    spdlog::warn("job queue: dead-lettering unreadable job: {}", e.what());
    dead_letter(entry_id, job ? *job : "", deliveries, consumer, e.what());
    return std::nullopt;
  }
}

void JobQueue::dead_letter(const std::string &entry_id, const std::string &job_text,
                           int64_t deliveries, const std::string &consumer,
                           const std::string &reason) {
  spdlog::warn("job queue: job {} moved to {}: {}", entry_id, jobs_dead_letter_stream(), reason);
  redis_.eval(dead_letter_, {jobs_stream(), jobs_dead_letter_stream(), reasons_key(entry_id)},
              {kSearcherGroup, entry_id, consumer, std::to_string(kLayoutVersion), job_text,
               std::to_string(deliveries), reason});
}

bool JobQueue::heartbeat(const Delivery &delivery, const std::string &consumer) {
  return redis_.eval(heartbeat_, {jobs_stream()}, {kSearcherGroup, delivery.entry_id, consumer})
             .integer == 1;
}

bool JobQueue::ack(const Delivery &delivery, const std::string &consumer) {
  return redis_
             .eval(ack_, {jobs_stream(), reasons_key(delivery.entry_id)},
                   {kSearcherGroup, delivery.entry_id, consumer})
             .integer == 1;
}

bool JobQueue::give_up(const Delivery &delivery, const std::string &consumer,
                       const std::string &reason) {
  return redis_
             .eval(give_up_, {jobs_stream(), reasons_key(delivery.entry_id)},
                   {kSearcherGroup, delivery.entry_id, consumer, consumer + ": " + reason,
                    std::to_string(settings_.reclaim_after.count() + 1)})
             .integer == 1;
}

QueueDepths JobQueue::depths() {
  QueueDepths d;
  const int64_t length = redis_.command({"XLEN", jobs_stream()}).integer;
  RedisReply summary = redis_.command({"XPENDING", jobs_stream(), kSearcherGroup});
  d.running = summary.elements.empty() ? 0 : summary.elements[0].integer;
  // Acknowledged and dead-lettered entries are deleted, so the rest is waiting.
  d.waiting = length - d.running;
  d.dead = redis_.command({"XLEN", jobs_dead_letter_stream()}).integer;
  return d;
}

std::vector<DeadLetter> JobQueue::dead_letters(int count, const std::string &after) {
  std::vector<DeadLetter> out;
  RedisReply entries = redis_.command({"XRANGE", jobs_dead_letter_stream(),
                                       after.empty() ? "-" : "(" + after, "+", "COUNT",
                                       std::to_string(count)});
  for (const RedisReply &entry : entries.elements) {
    if (entry.elements.size() < 2) continue;
    const std::vector<std::string> fields = field_list(entry.elements[1]);
    DeadLetter d;
    d.entry_id = entry.elements[0].str;
    const std::string where = jobs_dead_letter_stream() + " entry " + d.entry_id;
    const std::string *schema = find_field(fields, "schema");
    check_record_schema(schema ? *schema : "", where);
    if (const std::string *v = find_field(fields, "entry")) d.job_entry = *v;
    if (const std::string *v = find_field(fields, "job")) d.job = *v;
    if (const std::string *v = find_field(fields, "consumer")) d.consumer = *v;
    if (const std::string *v = find_field(fields, "deliveries")) {
      std::from_chars(v->data(), v->data() + v->size(), d.deliveries);
    }
    if (const std::string *v = find_field(fields, "reasons")) {
      const auto parsed = nlohmann::json::parse(*v, nullptr, false);
      if (parsed.is_array()) {
        for (const auto &r : parsed) {
          if (r.is_string()) d.reasons.push_back(r.get<std::string>());
        }
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace protuner::farm
