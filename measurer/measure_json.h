// The one serialized form of measurement requests and results: JSON, used between the
// measurer and its child process, on the ZeroMQ wire (inside a versioned envelope), in
// the result cache and by `protuner measure --json`.
//
//   request: {"app": {"name", "library", "generator", "params": {..}},
//             "schedule": {"kind": "protuner"|"own"|"default"|"root"|"autoscheduler",
//                          "json": "..." (protuner), "autoscheduler": "Adams2019",
//                          "plugin": "/path/libautoschedule_x.so" (autoscheduler; optional)},
//             "target": "host", "settings": {"warmup_runs", "samples", "max_samples",
//             "min_sample_seconds", "confirming_samples", "confirm_within",
//             "compile_timeout_seconds", "run_timeout_seconds", "memory_limit_mb",
//             "require_smt_off", "check_output", "allocator": "platform"|"pooling"},
//             "library_sha256": "..." (farm requests only: the library as stored in Redis)}
//   result:  {"status": "ok", "min_ms", "median_ms", "samples_ms": [..], "relative_spread",
//             "runs_per_sample", "confirmed", "compile_seconds", "host": {"cpu_model", "logical_cpus",
//             "physical_cores", "smt", "governor", "halide_target"}, "cpus": [..],
//             "error": "", "allocator": "platform", "from_cache": false}
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "measurer/measurement.h"

namespace protuner {

std::string request_to_json(const MeasureRequest &request);
// Throws ConfigError naming the field that is missing, of the wrong type or out of range.
// Settings fields may be omitted (defaults apply).
MeasureRequest request_from_json(const std::string &text);

std::string result_to_json(const MeasureResult &result);
// The "host" object of a result, for reports that embed the host a result ran under.
nlohmann::json host_facts_to_json(const HostFacts &host);
// Throws ConfigError like request_from_json.
MeasureResult result_from_json(const std::string &text);

}  // namespace protuner
