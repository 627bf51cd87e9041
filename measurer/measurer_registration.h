// A measurer daemon's registration in the farm's Redis (common/farm/measurer_registry.h):
// its record written at start and renewed every interval by a thread of its own, so
// searchers find it within an interval of its start and drop it within `liveness`
// intervals of its death. The thread runs in the daemon process, never in the measuring
// child on the measured CPUs, so a long measurement never delays a renewal. A Redis outage
// is logged once and waited out; the record expires meanwhile and comes back with Redis.
//
// Thread safety: construct and destroy on one thread; the renewals run on their own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/farm/measurer_registry.h"
#include "common/redis_options.h"

namespace protuner {

struct RegistrationOptions {
  std::chrono::milliseconds interval{1000};
  // The record expires this many intervals after its last renewal.
  int liveness = 3;
};

class MeasurerRegistration {
 public:
  // Registers once now (throws IoError when Redis cannot be reached, SchemaError for a
  // database of another layout), then renews in the background.
  MeasurerRegistration(RedisOptions redis, farm::MeasurerRecord record,
                       RegistrationOptions options = {});
  // Stops renewing and removes the record, so searchers stop using this measurer at once.
  ~MeasurerRegistration();
  MeasurerRegistration(const MeasurerRegistration &) = delete;
  MeasurerRegistration &operator=(const MeasurerRegistration &) = delete;

 private:
  void renew_loop();

  RedisOptions redis_options_;
  farm::MeasurerRecord record_;
  RegistrationOptions options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace protuner
