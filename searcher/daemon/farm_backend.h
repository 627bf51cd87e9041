// The measurement backend a searcher daemon's job measures through: the farm's shared
// caches and record of measurements around the measurers (any MeasurementBackend, in the
// daemon a MeasurerClient). Before a candidate is measured, Redis is asked whether any
// searcher has measured it for this app (app_state.h: results by schedule hash); before
// any request (a candidate or a baseline), when the app's host class is known, whether
// anyone in the farm has measured the same pipeline and schedule for that class, target
// and settings in any suite (common/farm/measurement_cache.h). A deterministic answer
// (ok, wrong_output, compile_error) found either way is returned as a cache hit, and a
// candidate's from the farm-wide cache is recorded for this app too. Every new answer of
// a candidate is written to Redis before measure() returns, so a searcher killed after it
// loses nothing it has been told (a baseline's answer is the caller's to record), and
// every deterministic answer also goes to the farm-wide cache under the host class its
// result names.
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
    int64_t cache_hits = 0;   // answers found in Redis (this app's or the farm-wide cache)
    int64_t cancelled = 0;    // answers not recorded: cancelled
    int64_t write_errors = 0;  // answers Redis could not take (see write_failed())
  };

  // `searcher` and `seed` are recorded with every candidate; each answer is also counted
  // on `metrics` when given. Every request goes out with `library_sha256` (the app's
  // library as stored in Redis), which is all a farm measurer loads. `host_class` is the
  // class of the measurers the app measures on (measurer_registry.h), "" when the job's
  // measurers are fixed and their class is not known before they answer: the farm-wide
  // cache is then written but not read. The references must outlive the backend.
  FarmBackend(MeasurementBackend &inner, RedisClient &redis, std::string suite, std::string app,
              std::string library_sha256, std::string host_class, std::string searcher,
              int64_t seed, SearcherMetrics *metrics = nullptr);

  MeasureResult measure(const MeasureRequest &request) override;

  // The farm-wide cache's key text of a request measured on `host_class`
  // (host_class_key's JSON): the measurer's own result key (measurer/result_cache.h) with
  // the library named by the hash it is stored under.
  static std::string farm_cache_key(const MeasureRequest &request,
                                    const std::string &library_sha256,
                                    const std::string &host_class);

  // Whether some answer could not be written: the job's results are then incomplete, and
  // it must not be acknowledged.
  bool write_failed() const { return stats_.write_errors > 0; }
  const Stats &stats() const { return stats_; }

 private:
  MeasurementBackend &inner_;
  RedisClient &redis_;
  // Writes a candidate's answer to the app's results; false (and a write error counted)
  // when Redis does not take it.
  bool record(const MeasureRequest &request, const std::string &key, const MeasureResult &result);

  std::string suite_, app_, library_sha256_, host_class_, searcher_;
  int64_t seed_;
  SearcherMetrics *metrics_;
  Stats stats_;
};

}  // namespace protuner
