// Answers repeated measurements without re-measuring: the searcher proposes the same
// schedule again (other seeds, other trees) and every report re-asks for the baselines.
// A result is valid for the same app identity (library file, generator, params), schedule,
// target, the settings that shape the answer (timing, output check) and host class (CPU
// model, CPUs used, SMT): measurement_key() puts all of them in the key.
//
// Only deterministic outcomes are kept: ok, wrong_output and compile_error. Timeouts,
// crashes and out-of-memory may be transient (a loaded machine, a memory limit set for
// another request, a race in a candidate that crashes only sometimes), and bad requests
// cost nothing to answer again, so they are measured every time.
//
// Storage: one file per key, <cache>/results/<hash>.json = {"key": ..., "result": ...},
// written atomically. Safe for several processes sharing the directory; a damaged file
// is a miss.
#pragma once

#include <optional>
#include <string>

#include "measurer/measurement.h"

namespace protuner {

// The cache key of `request` measured with target `resolved_target` (never "host") on a
// machine of class `host_class` (cache_key.h, host_class_key).
std::string measurement_key(const MeasureRequest &request, const std::string &resolved_target,
                            const std::string &host_class);
// The same key with the app named by `app_identity` (canonical JSON text) instead of its
// library file, and any target string: the farm-wide cache names a library by the hash
// it is stored under and keeps "host" with the host class (searcher/daemon/farm_backend.h).
std::string measurement_key_for(const MeasureRequest &request, const std::string &app_identity,
                                const std::string &target, const std::string &host_class);

class ResultCache {
 public:
  // Results are kept under `cache_dir`/results (created on first store).
  explicit ResultCache(std::string cache_dir);

  static bool cacheable(MeasureStatus status);

  // The stored result with from_cache = true, or nullopt.
  std::optional<MeasureResult> find(const std::string &key) const;
  // Stores `result` when its status is cacheable; I/O errors are logged, not thrown (a
  // cache that cannot be written only costs time).
  void store(const std::string &key, const MeasureResult &result) const;

 private:
  std::string path_for(const std::string &key) const;
  std::string dir_;
};

}  // namespace protuner
