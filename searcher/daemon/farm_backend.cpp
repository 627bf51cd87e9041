// The farm's shared cache and record of measurements (farm_backend.h).
#include "searcher/daemon/farm_backend.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "common/farm/app_state.h"
#include "common/farm/measurement_cache.h"
#include "measurer/cache_key.h"
#include "measurer/measure_json.h"
#include "measurer/result_cache.h"
#include "searcher/daemon/searcher_metrics.h"

namespace protuner {
namespace {

std::string first_line(const std::string &text) { return text.substr(0, text.find('\n')); }

}  // namespace

FarmBackend::FarmBackend(MeasurementBackend &inner, RedisClient &redis, std::string suite,
                         std::string app, std::string library_sha256, std::string host_class,
                         std::string searcher, int64_t seed, SearcherMetrics *metrics)
    : inner_(inner),
      redis_(redis),
      suite_(std::move(suite)),
      app_(std::move(app)),
      library_sha256_(std::move(library_sha256)),
      host_class_(std::move(host_class)),
      searcher_(std::move(searcher)),
      seed_(seed),
      metrics_(metrics) {}

std::string FarmBackend::farm_cache_key(const MeasureRequest &request,
                                        const std::string &library_sha256,
                                        const std::string &host_class) {
  const nlohmann::json identity = {{"library_sha256", library_sha256}};
  return measurement_key_for(request, identity.dump(), request.target, host_class);
}

MeasureResult FarmBackend::measure(const MeasureRequest &request) {
  const bool candidate = request.schedule.kind == ScheduleKind::kProtuner;
  const std::string key = candidate ? farm::candidate_key(request.schedule.schedule_json) : "";
  const auto hit = [&](const std::string &result_json) {
    MeasureResult found = result_from_json(result_json);
    found.from_cache = true;
    ++stats_.cache_hits;
    if (metrics_) metrics_->cache_hit();
    return found;
  };
  try {
    if (candidate) {
      if (auto stored = farm::read_candidate(redis_, suite_, app_, key);
          stored && ResultCache::cacheable(parse_status(stored->status)) &&
          !stored->result_json.empty()) {
        return hit(stored->result_json);
      }
    }
    if (!host_class_.empty()) {
      if (auto cached = farm::find_measurement(
              redis_, farm_cache_key(request, library_sha256_, host_class_))) {
        MeasureResult found = hit(*cached);
        if (candidate) record(request, key, found);
        return found;
      }
    }
  } catch (const std::exception &e) {
    // The caches are an optimization: measure instead.
    spdlog::warn("{}: the farm's cache could not be read: {}", app_, e.what());
  }
  MeasureRequest sent = request;
  sent.library_sha256 = library_sha256_;
  MeasureResult result = inner_.measure(sent);
  if (result.status == MeasureStatus::kCancelled) {
    ++stats_.cancelled;
    return result;
  }
  if (candidate && record(request, key, result)) {
    ++stats_.measured;
    if (metrics_) metrics_->measured(result.status);
  }
  if (ResultCache::cacheable(result.status)) {
    const std::string measured_on =
        host_class_key(result.host, static_cast<int>(result.cpus.size()));
    try {
      farm::store_measurement(redis_, farm_cache_key(request, library_sha256_, measured_on),
                              result_to_json(result));
    } catch (const std::exception &e) {
      // The app's record above holds the answer; only later suites lose the shortcut.
      spdlog::warn("{}: the farm-wide cache could not take a measurement: {}", app_, e.what());
    }
  }
  return result;
}

bool FarmBackend::record(const MeasureRequest &request, const std::string &key,
                         const MeasureResult &result) {
  farm::MeasuredCandidate record;
  record.key = key;
  record.schedule_json = request.schedule.schedule_json;
  record.status = status_name(result.status);
  if (result.ok()) {
    record.min_ms = result.timing.min_ms;
    record.median_ms = result.timing.median_ms;
  }
  record.error = first_line(result.error);
  record.searcher = searcher_;
  record.seed = seed_;
  record.result_json = result_to_json(result);
  try {
    farm::record_candidate(redis_, suite_, app_, record);
    return true;
  } catch (const Error &e) {
    ++stats_.write_errors;
    if (metrics_) metrics_->write_error();
    spdlog::error("{}: a measurement could not be written to Redis: {}", app_, e.what());
    return false;
  }
}

}  // namespace protuner
