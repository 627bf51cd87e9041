// See measurer_registration.h.
#include "measurer/measurer_registration.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "common/errors.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"

namespace protuner {

MeasurerRegistration::MeasurerRegistration(RedisOptions redis, farm::MeasurerRecord record,
                                           RegistrationOptions options)
    : redis_options_(std::move(redis)), record_(std::move(record)), options_(options) {
  if (options_.interval.count() <= 0 || options_.liveness < 2) {
    throw ConfigError("measurer registration: the interval must be positive and the "
                      "liveness at least 2");
  }
  RedisClient redis_client(redis_options_);
  farm::check_layout(redis_client);
  farm::register_measurer(redis_client, record_, options_.interval * options_.liveness);
  spdlog::info("measurer: registered as {} ({}) in {}", record_.name, record_.endpoint,
               redis_client.endpoint());
  thread_ = std::thread([this] { renew_loop(); });
}

MeasurerRegistration::~MeasurerRegistration() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  try {
    RedisClient redis(redis_options_);
    farm::unregister_measurer(redis, record_.name);
    spdlog::info("measurer: unregistered {}", record_.name);
  } catch (const Error &e) {
    spdlog::warn("measurer: cannot unregister {} (its record expires by itself): {}",
                 record_.name, e.what());
  }
}

void MeasurerRegistration::renew_loop() {
  // Connected inside the try: Redis may be away when the thread starts, too.
  std::unique_ptr<RedisClient> redis;
  bool outage = false;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, options_.interval, [this] { return stopping_; })) {
    lock.unlock();
    try {
      if (!redis) redis = std::make_unique<RedisClient>(redis_options_);
      farm::register_measurer(*redis, record_, options_.interval * options_.liveness);
      if (outage) spdlog::info("measurer: Redis is back; {} registered again", record_.name);
      outage = false;
    } catch (const Error &e) {
      if (!outage) spdlog::warn("measurer: cannot renew the registration: {}", e.what());
      outage = true;
    }
    lock.lock();
  }
}

}  // namespace protuner
