#include "coordinator/submit.h"

#include <sodium.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "common/errors.h"
#include "common/farm/library_store.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"

namespace protuner {

std::string new_suite_id(const std::string &suite_name) {
  std::string id;
  for (char c : suite_name) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    id += plain ? c : '_';
  }
  if (sodium_init() < 0) throw Error("libsodium cannot initialize its random generator");
  unsigned char bytes[4];
  randombytes_buf(bytes, sizeof bytes);
  static const char *digits = "0123456789abcdef";
  id += '-';
  for (unsigned char b : bytes) {
    id += digits[b >> 4];
    id += digits[b & 15];
  }
  return id;
}

farm::SuiteRecord submit_suite(RedisClient &redis, const Suite &suite) {
  validate_suite_apps(suite);
  return store_suite(redis, suite);
}

farm::SuiteRecord store_suite(RedisClient &redis, const Suite &suite) {
  farm::check_layout(redis);

  farm::SuiteRecord record;
  record.id = new_suite_id(suite.name);
  record.name = suite.name;
  record.submitted_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  std::map<std::string, std::string> stored;  // library path -> hash, each file stored once
  for (const SuiteApp &app : suite.apps) {
    auto it = stored.find(app.spec.library);
    if (it == stored.end()) {
      it = stored.emplace(app.spec.library, farm::store_library(redis, app.spec.library)).first;
    }
    farm::AppRecord a;
    a.name = app.spec.name;
    a.generator = app.spec.generator;
    a.params = app.spec.params;
    a.library_sha256 = it->second;
    a.library_file = std::filesystem::path(app.spec.library).filename().string();
    a.budget_ms = std::llround(app.budget_minutes * 60000.0);
    a.seeds = app.seeds;
    record.apps.push_back(std::move(a));
  }

  // The record and its index entry together, and neither when the id is taken.
  RedisScript write("submit suite", R"lua(
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
)lua");
  const RedisReply written =
      redis.eval(write, {farm::suite_key(record.id), farm::suites_index()},
                 {farm::suite_to_json(record), std::to_string(record.submitted_ms), record.id});
  if (written.integer != 1) {
    throw IoError("redis " + redis.endpoint() + ": suite id " + record.id +
                  " is taken; submit again");
  }
  return record;
}

}  // namespace protuner
