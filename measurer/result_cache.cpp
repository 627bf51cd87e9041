// The result cache of result_cache.h: JSON files named by the key's hash.
#include "measurer/result_cache.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "measurer/cache_key.h"
#include "measurer/child_environment.h"
#include "measurer/measure_json.h"
#include "measurer/output_check.h"

namespace protuner {

std::string measurement_key_for(const MeasureRequest &request, const std::string &app_identity,
                                const std::string &target, const std::string &host_class) {
  // The request's own JSON minus what does not change the answer: the app's display
  // name and library path (the identity names the library), and the limits (a result
  // that finished under one limit is the same result under a larger one; failures caused
  // by limits are never cached).
  auto req = nlohmann::json::parse(request_to_json(request));
  req.erase("target");
  req["app"].erase("name");
  req["app"].erase("library");
  req.erase("library_sha256");
  req["app"]["identity"] = nlohmann::json::parse(app_identity);
  if (request.schedule.kind == ScheduleKind::kAutoscheduler) {
    // The plugin's file, so an upgraded Halide is a new key. An unknown name has no
    // plugin; its bad_request is never cached.
    try {
      req["schedule"]["plugin_identity"] =
          nlohmann::json::parse(file_identity_key(autoscheduler_plugin_path(request.schedule)));
    } catch (const ConfigError &) {
    }
  }
  if (request.schedule.kind == ScheduleKind::kProtuner) {
    req["schedule"]["directives"] = kProtunerDirectives;
  }
  for (const char *limit : {"compile_timeout_seconds", "run_timeout_seconds", "memory_limit_mb",
                            "require_smt_off"}) {
    req["settings"].erase(limit);
  }
  const nlohmann::json key = {{"request", req},
                              {"target", target},
                              {"host", nlohmann::json::parse(host_class)},
                              {"allocator", allocator_policy_name(request.settings.allocator)},
                              {"output_check", kOutputCheckPolicy}};
  return key.dump();
}

std::string measurement_key(const MeasureRequest &request, const std::string &resolved_target,
                            const std::string &host_class) {
  return measurement_key_for(request, app_identity_key(request.app), resolved_target, host_class);
}

ResultCache::ResultCache(std::string cache_dir) : dir_(std::move(cache_dir) + "/results") {}

bool ResultCache::cacheable(MeasureStatus status) {
  return status == MeasureStatus::kOk || status == MeasureStatus::kWrongOutput ||
         status == MeasureStatus::kCompileError;
}

std::string ResultCache::path_for(const std::string &key) const {
  return dir_ + "/" + key_hash(key) + ".json";
}

std::optional<MeasureResult> ResultCache::find(const std::string &key) const {
  std::ifstream in(path_for(key));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (j.at("key").get<std::string>() != key) return std::nullopt;
    MeasureResult r = result_from_json(j.at("result").dump());
    r.from_cache = true;
    return r;
  } catch (const std::exception &e) {
    spdlog::warn("result cache: ignoring unreadable entry '{}': {}", path_for(key), e.what());
    return std::nullopt;
  }
}

void ResultCache::store(const std::string &key, const MeasureResult &result) const {
  if (!cacheable(result.status)) return;
  MeasureResult stored = result;
  stored.from_cache = false;
  const nlohmann::json j = {{"key", key}, {"result", nlohmann::json::parse(result_to_json(stored))}};
  try {
    ensure_directory(dir_);
    write_file_atomically(path_for(key), j.dump());
  } catch (const IoError &e) {
    spdlog::warn("result cache: cannot store a result: {}", e.what());
  }
}

}  // namespace protuner
