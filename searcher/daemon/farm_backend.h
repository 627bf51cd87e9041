// The measurement backend a searcher daemon's job measures through: the farm's shared
// cache and record of measurements around the measurers (any MeasurementBackend, in the
// daemon a MeasurerClient). Before a candidate is measured, Redis is asked whether any
// searcher has measured it for this app (app_state.h: results by schedule hash); a
// deterministic answer there (ok, wrong_output, compile_error) is returned as a cache hit.
// Every new answer is written to Redis before measure() returns, so a searcher killed
// after it loses nothing it has been told.
//
// Thread safety: as the inner backend and the RedisClient it is given: one thread.
#pragma once

#include <cstdint>
#include <string>

#include "measurer/measurement.h"

namespace protuner {

class RedisClient;
class SearcherMetrics;

class FarmBackend : public MeasurementBackend {
 public:
  // Counters for logs and the job's summary.
  struct Stats {
    int64_t measured = 0;     // answers of the inner backend recorded
    int64_t cache_hits = 0;   // answers found in Redis
    int64_t cancelled = 0;    // answers not recorded: cancelled
    int64_t write_errors = 0;  // answers Redis could not take (see write_failed())
  };

  // `searcher` and `seed` are recorded with every candidate; each answer is also counted
  // on `metrics` when given. Every request goes out with `library_sha256` (the app's
  // library as stored in Redis), which is all a farm measurer loads. The references must
  // outlive the backend.
  FarmBackend(MeasurementBackend &inner, RedisClient &redis, std::string suite, std::string app,
              std::string library_sha256, std::string searcher, int64_t seed,
              SearcherMetrics *metrics = nullptr);

  MeasureResult measure(const MeasureRequest &request) override;

  // Whether some answer could not be written: the job's results are then incomplete, and
  // it must not be acknowledged.
  bool write_failed() const { return stats_.write_errors > 0; }
  const Stats &stats() const { return stats_; }

 private:
  MeasurementBackend &inner_;
  RedisClient &redis_;
  std::string suite_, app_, library_sha256_, searcher_;
  int64_t seed_;
  SearcherMetrics *metrics_;
  Stats stats_;
};

}  // namespace protuner
