// The farm's shared cache and record of measurements (farm_backend.h).
#include "searcher/daemon/farm_backend.h"

#include <spdlog/spdlog.h>

#include "common/farm/app_state.h"
#include "measurer/measure_json.h"
#include "searcher/daemon/searcher_metrics.h"

namespace protuner {
namespace {

// The statuses the measurer's own result cache keeps (measurer/result_cache.cpp): the
// same schedule measured again gives the same answer.
bool deterministic(const std::string &status) {
  return status == status_name(MeasureStatus::kOk) ||
         status == status_name(MeasureStatus::kWrongOutput) ||
         status == status_name(MeasureStatus::kCompileError);
}

std::string first_line(const std::string &text) { return text.substr(0, text.find('\n')); }

}  // namespace

FarmBackend::FarmBackend(MeasurementBackend &inner, RedisClient &redis, std::string suite,
                         std::string app, std::string library_sha256, std::string searcher,
                         int64_t seed, SearcherMetrics *metrics)
    : inner_(inner),
      redis_(redis),
      suite_(std::move(suite)),
      app_(std::move(app)),
      library_sha256_(std::move(library_sha256)),
      searcher_(std::move(searcher)),
      seed_(seed),
      metrics_(metrics) {}

MeasureResult FarmBackend::measure(const MeasureRequest &request) {
  const bool candidate = request.schedule.kind == ScheduleKind::kProtuner;
  const std::string key = candidate ? farm::candidate_key(request.schedule.schedule_json) : "";
  if (candidate) {
    try {
      if (auto stored = farm::read_candidate(redis_, suite_, app_, key);
          stored && deterministic(stored->status) && !stored->result_json.empty()) {
        MeasureResult hit = result_from_json(stored->result_json);
        hit.from_cache = true;
        ++stats_.cache_hits;
        if (metrics_) metrics_->cache_hit();
        return hit;
      }
    } catch (const Error &e) {
      // The cache is an optimization: measure instead.
      spdlog::warn("{}: the farm's cache could not be read: {}", app_, e.what());
    }
  }
  MeasureRequest sent = request;
  sent.library_sha256 = library_sha256_;
  MeasureResult result = inner_.measure(sent);
  if (result.status == MeasureStatus::kCancelled || !candidate) {
    stats_.cancelled += result.status == MeasureStatus::kCancelled ? 1 : 0;
    return result;
  }
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
    ++stats_.measured;
    if (metrics_) metrics_->measured(result.status);
  } catch (const Error &e) {
    ++stats_.write_errors;
    if (metrics_) metrics_->write_error();
    spdlog::error("{}: a measurement could not be written to Redis: {}", app_, e.what());
  }
  return result;
}

}  // namespace protuner
