// JSON for measurement requests and results (format in measure_json.h). Reading is strict:
// unknown keys and wrong types are refused with the dotted path of the field, because a
// request that is silently misread measures the wrong thing.
#include "measurer/measure_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>

#include "common/errors.h"

namespace protuner {
namespace {

using json = nlohmann::json;

const char *kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kProtuner: return "protuner";
    case ScheduleKind::kOwn: return "own";
    case ScheduleKind::kDefault: return "default";
    case ScheduleKind::kRoot: return "root";
    case ScheduleKind::kAutoscheduler: return "autoscheduler";
  }
  return "unknown";
}

// Reads fields of one JSON object, naming them by their path ("request.settings.samples")
// in every error.
class ObjectReader {
 public:
  ObjectReader(const json &object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) fail(path_, "must be a JSON object");
  }

  // Refuses keys other than `known`.
  void only(std::initializer_list<const char *> known) const {
    const std::set<std::string> names(known.begin(), known.end());
    for (const auto &item : object_.items()) {
      if (!names.count(item.key())) fail(field(item.key()), "is not a known field");
    }
  }

  bool has(const char *key) const { return object_.contains(key); }
  const json &at(const char *key) const {
    if (!has(key)) fail(field(key), "is missing");
    return object_.at(key);
  }
  std::string field(const std::string &key) const { return path_ + "." + key; }

  std::string string(const char *key) const {
    const json &v = at(key);
    if (!v.is_string()) fail(field(key), "must be a string");
    return v.get<std::string>();
  }
  std::string string_or(const char *key, const std::string &fallback) const {
    return has(key) ? string(key) : fallback;
  }
  double number_or(const char *key, double fallback) const {
    if (!has(key)) return fallback;
    const json &v = at(key);
    if (!v.is_number()) fail(field(key), "must be a number");
    return v.get<double>();
  }
  int64_t integer_or(const char *key, int64_t fallback) const {
    if (!has(key)) return fallback;
    const json &v = at(key);
    if (!v.is_number_integer()) fail(field(key), "must be an integer");
    return v.get<int64_t>();
  }
  bool boolean_or(const char *key, bool fallback) const {
    if (!has(key)) return fallback;
    const json &v = at(key);
    if (!v.is_boolean()) fail(field(key), "must be true or false");
    return v.get<bool>();
  }
  const std::string &path() const { return path_; }

  [[noreturn]] static void fail(const std::string &where, const std::string &what) {
    throw ConfigError(where + " " + what);
  }

 private:
  const json &object_;
  std::string path_;
};

json parse(const std::string &text, const char *what) {
  try {
    return json::parse(text);
  } catch (const json::parse_error &e) {
    throw ConfigError(std::string(what) + " is not valid JSON: " + e.what());
  }
}

int to_int(const ObjectReader &r, const char *key, int64_t value, int64_t min_value) {
  if (value < min_value || value > INT32_MAX) {
    ObjectReader::fail(r.field(key), "is out of range (" + std::to_string(value) +
                                         "; must be >= " + std::to_string(min_value) + ")");
  }
  return static_cast<int>(value);
}

double positive(const ObjectReader &r, const char *key, double value, bool allow_zero) {
  if (!(value > 0 || (allow_zero && value == 0))) {
    ObjectReader::fail(r.field(key), std::string("must be ") + (allow_zero ? ">= 0" : "> 0"));
  }
  return value;
}

AppSpec app_from(const json &j) {
  ObjectReader r(j, "request.app");
  r.only({"name", "library", "generator", "params"});
  AppSpec app;
  app.name = r.string_or("name", "");
  app.library = r.string("library");
  app.generator = r.string("generator");
  if (app.library.empty()) ObjectReader::fail(r.field("library"), "must not be empty");
  if (app.generator.empty()) ObjectReader::fail(r.field("generator"), "must not be empty");
  if (app.name.empty()) app.name = app.generator;
  if (r.has("params")) {
    ObjectReader params(r.at("params"), r.field("params"));
    // Generator params are text to Halide; numbers and booleans written as JSON values
    // are accepted and converted the way a suite file writes them.
    for (const auto &item : r.at("params").items()) {
      const json &v = item.value();
      if (v.is_string()) {
        app.params[item.key()] = v.get<std::string>();
      } else if (v.is_boolean() || v.is_number()) {
        app.params[item.key()] = v.dump();
      } else {
        ObjectReader::fail(params.field(item.key()), "must be a string, number or boolean");
      }
    }
  }
  return app;
}

// Fields that belong to one kind only are refused on the others, so a request never
// carries a schedule it does not measure.
void check_kind_fields(const ObjectReader &r, const ScheduleSpec &spec) {
  const bool protuner = spec.kind == ScheduleKind::kProtuner;
  const bool autosched = spec.kind == ScheduleKind::kAutoscheduler;
  if (protuner && spec.schedule_json.empty()) {
    ObjectReader::fail(r.field("json"), "is required for kind 'protuner'");
  }
  if (!protuner && !spec.schedule_json.empty()) {
    ObjectReader::fail(r.field("json"), "is only allowed for kind 'protuner'");
  }
  if (autosched && spec.autoscheduler.empty()) {
    ObjectReader::fail(r.field("autoscheduler"), "is required for kind 'autoscheduler'");
  }
  if (!autosched && (!spec.autoscheduler.empty() || !spec.autoscheduler_plugin.empty())) {
    ObjectReader::fail(r.field(spec.autoscheduler.empty() ? "plugin" : "autoscheduler"),
                       "is only allowed for kind 'autoscheduler'");
  }
  if (autosched) {
    try {
      autoscheduler_plugin_path(spec);
    } catch (const ConfigError &e) {
      ObjectReader::fail(r.field("autoscheduler"), e.what());
    }
  }
}

ScheduleSpec schedule_from(const json &j) {
  ObjectReader r(j, "request.schedule");
  r.only({"kind", "json", "autoscheduler", "plugin"});
  ScheduleSpec spec;
  const std::string kind = r.string("kind");
  bool known = false;
  for (ScheduleKind k : {ScheduleKind::kProtuner, ScheduleKind::kOwn, ScheduleKind::kDefault,
                         ScheduleKind::kRoot, ScheduleKind::kAutoscheduler}) {
    if (kind == kind_name(k)) spec.kind = k, known = true;
  }
  if (!known) {
    ObjectReader::fail(r.field("kind"), "'" + kind +
                                            "' is not one of protuner, own, default, root, "
                                            "autoscheduler");
  }
  spec.schedule_json = r.string_or("json", "");
  spec.autoscheduler = r.string_or("autoscheduler", "");
  spec.autoscheduler_plugin = r.string_or("plugin", "");
  check_kind_fields(r, spec);
  return spec;
}

AllocatorPolicy allocator_from(const ObjectReader &r, const char *field,
                               AllocatorPolicy fallback) {
  if (!r.has(field)) return fallback;
  try {
    return parse_allocator_policy(r.string(field));
  } catch (const ConfigError &e) {
    ObjectReader::fail(r.field(field), e.what());
  }
}

MeasureSettings settings_from(const json &j) {
  ObjectReader r(j, "request.settings");
  r.only({"warmup_runs", "samples", "max_samples", "min_sample_seconds", "confirming_samples",
          "confirm_within", "stop_above_ms", "early_stop_samples", "early_stop_factor",
          "compile_timeout_seconds", "run_timeout_seconds", "memory_limit_mb", "require_smt_off",
          "check_output", "allocator"});
  MeasureSettings s;
  s.allocator = allocator_from(r, "allocator", s.allocator);
  s.timing.warmup_runs =
      to_int(r, "warmup_runs", r.integer_or("warmup_runs", s.timing.warmup_runs), 0);
  s.timing.samples = to_int(r, "samples", r.integer_or("samples", s.timing.samples), 1);
  // Samples beyond the default maximum raise it when the request names no maximum.
  s.timing.max_samples =
      to_int(r, "max_samples",
             r.integer_or("max_samples", std::max(s.timing.samples, s.timing.max_samples)), 1);
  if (s.timing.max_samples < s.timing.samples) {
    ObjectReader::fail(r.field("max_samples"), "must be at least samples");
  }
  s.timing.confirming_samples =
      to_int(r, "confirming_samples",
             r.integer_or("confirming_samples", s.timing.confirming_samples), 1);
  s.timing.confirm_within = positive(
      r, "confirm_within", r.number_or("confirm_within", s.timing.confirm_within), true);
  s.timing.min_sample_seconds = positive(
      r, "min_sample_seconds", r.number_or("min_sample_seconds", s.timing.min_sample_seconds),
      true);
  s.timing.stop_above_ms =
      positive(r, "stop_above_ms", r.number_or("stop_above_ms", s.timing.stop_above_ms), true);
  s.timing.early_stop_samples = to_int(
      r, "early_stop_samples", r.integer_or("early_stop_samples", s.timing.early_stop_samples), 1);
  s.timing.early_stop_factor = r.number_or("early_stop_factor", s.timing.early_stop_factor);
  if (!(s.timing.early_stop_factor >= 1)) {
    ObjectReader::fail(r.field("early_stop_factor"), "must be at least 1");
  }
  s.compile_timeout_seconds =
      positive(r, "compile_timeout_seconds",
               r.number_or("compile_timeout_seconds", s.compile_timeout_seconds), false);
  s.run_timeout_seconds = positive(
      r, "run_timeout_seconds", r.number_or("run_timeout_seconds", s.run_timeout_seconds), false);
  s.memory_limit_mb = r.integer_or("memory_limit_mb", s.memory_limit_mb);
  if (s.memory_limit_mb <= 0) ObjectReader::fail(r.field("memory_limit_mb"), "must be > 0");
  s.require_smt_off = r.boolean_or("require_smt_off", s.require_smt_off);
  s.check_output = r.boolean_or("check_output", s.check_output);
  return s;
}

HostFacts host_from(const json &j) {
  ObjectReader r(j, "result.host");
  r.only({"cpu_model", "logical_cpus", "physical_cores", "smt", "governor", "halide_target"});
  HostFacts h;
  h.cpu_model = r.string_or("cpu_model", "");
  h.logical_cpus = to_int(r, "logical_cpus", r.integer_or("logical_cpus", 0), 0);
  h.physical_cores = to_int(r, "physical_cores", r.integer_or("physical_cores", 0), 0);
  h.smt = r.string_or("smt", "");
  h.governor = r.string_or("governor", "");
  h.halide_target = r.string_or("halide_target", "");
  return h;
}

std::vector<double> doubles_from(const ObjectReader &r, const char *key) {
  std::vector<double> out;
  if (!r.has(key)) return out;
  const json &v = r.at(key);
  if (!v.is_array()) ObjectReader::fail(r.field(key), "must be an array of numbers");
  for (const json &x : v) {
    if (!x.is_number()) ObjectReader::fail(r.field(key), "must be an array of numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

std::vector<int> ints_from(const ObjectReader &r, const char *key) {
  std::vector<int> out;
  if (!r.has(key)) return out;
  const json &v = r.at(key);
  if (!v.is_array()) ObjectReader::fail(r.field(key), "must be an array of integers");
  for (const json &x : v) {
    if (!x.is_number_integer()) ObjectReader::fail(r.field(key), "must be an array of integers");
    out.push_back(x.get<int>());
  }
  return out;
}

}  // namespace

std::string request_to_json(const MeasureRequest &request) {
  json params = json::object();
  for (const auto &[k, v] : request.app.params) params[k] = v;
  json schedule = {{"kind", kind_name(request.schedule.kind)}};
  if (request.schedule.kind == ScheduleKind::kProtuner) {
    schedule["json"] = request.schedule.schedule_json;
  }
  if (request.schedule.kind == ScheduleKind::kAutoscheduler) {
    schedule["autoscheduler"] = request.schedule.autoscheduler;
    if (!request.schedule.autoscheduler_plugin.empty()) {
      schedule["plugin"] = request.schedule.autoscheduler_plugin;
    }
  }
  const MeasureSettings &s = request.settings;
  json j = {
      {"app",
       {{"name", request.app.name},
        {"library", request.app.library},
        {"generator", request.app.generator},
        {"params", params}}},
      {"schedule", schedule},
      {"target", request.target},
      {"settings",
       {{"warmup_runs", s.timing.warmup_runs},
        {"samples", s.timing.samples},
        {"max_samples", s.timing.max_samples},
        {"min_sample_seconds", s.timing.min_sample_seconds},
        {"confirming_samples", s.timing.confirming_samples},
        {"confirm_within", s.timing.confirm_within},
        {"compile_timeout_seconds", s.compile_timeout_seconds},
        {"run_timeout_seconds", s.run_timeout_seconds},
        {"memory_limit_mb", s.memory_limit_mb},
        {"require_smt_off", s.require_smt_off},
        {"check_output", s.check_output},
        {"allocator", allocator_policy_name(s.allocator)}}},
  };
  if (!request.library_sha256.empty()) j["library_sha256"] = request.library_sha256;
  // Only when set, so requests without a stop line keep the cache keys they had.
  if (s.timing.stop_above_ms > 0) {
    j["settings"]["stop_above_ms"] = s.timing.stop_above_ms;
    j["settings"]["early_stop_samples"] = s.timing.early_stop_samples;
    j["settings"]["early_stop_factor"] = s.timing.early_stop_factor;
  }
  return j.dump();
}

MeasureRequest request_from_json(const std::string &text) {
  const json j = parse(text, "measurement request");
  ObjectReader r(j, "request");
  r.only({"app", "schedule", "target", "settings", "library_sha256"});
  MeasureRequest request;
  request.library_sha256 = r.string_or("library_sha256", "");
  request.app = app_from(r.at("app"));
  request.schedule = schedule_from(r.at("schedule"));
  request.target = r.string_or("target", "host");
  if (request.target.empty()) ObjectReader::fail(r.field("target"), "must not be empty");
  if (r.has("settings")) request.settings = settings_from(r.at("settings"));
  return request;
}

json host_facts_to_json(const HostFacts &h) {
  return {{"cpu_model", h.cpu_model},
          {"logical_cpus", h.logical_cpus},
          {"physical_cores", h.physical_cores},
          {"smt", h.smt},
          {"governor", h.governor},
          {"halide_target", h.halide_target}};
}

std::string result_to_json(const MeasureResult &result) {
  const json j = {
      {"status", status_name(result.status)},
      {"min_ms", result.timing.min_ms},
      {"median_ms", result.timing.median_ms},
      {"samples_ms", result.timing.samples_ms},
      {"relative_spread", result.timing.relative_spread},
      {"runs_per_sample", result.timing.runs_per_sample},
      {"confirmed", result.timing.confirmed},
      {"stopped_above", result.timing.stopped_above},
      {"compile_seconds", result.compile_seconds},
      {"host", host_facts_to_json(result.host)},
      {"cpus", result.cpus},
      {"error", result.error},
      {"allocator", allocator_policy_name(result.allocator)},
      {"from_cache", result.from_cache},
  };
  // Error texts carry a child's stderr, which need not be UTF-8: replace, never throw.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

MeasureResult result_from_json(const std::string &text) {
  const json j = parse(text, "measurement result");
  ObjectReader r(j, "result");
  r.only({"status", "min_ms", "median_ms", "samples_ms", "relative_spread", "runs_per_sample",
          "confirmed", "stopped_above", "compile_seconds", "host", "cpus", "error", "allocator", "from_cache"});
  MeasureResult result;
  const std::string status = r.string("status");
  try {
    result.status = parse_status(status);
  } catch (const ConfigError &e) {
    ObjectReader::fail(r.field("status"), e.what());
  }
  result.timing.min_ms = r.number_or("min_ms", 0);
  result.timing.median_ms = r.number_or("median_ms", 0);
  result.timing.samples_ms = doubles_from(r, "samples_ms");
  result.timing.relative_spread = r.number_or("relative_spread", 0);
  result.timing.runs_per_sample =
      to_int(r, "runs_per_sample", r.integer_or("runs_per_sample", 1), 0);
  result.timing.confirmed = r.boolean_or("confirmed", false);
  result.timing.stopped_above = r.boolean_or("stopped_above", false);
  result.compile_seconds = r.number_or("compile_seconds", 0);
  if (r.has("host")) result.host = host_from(r.at("host"));
  result.cpus = ints_from(r, "cpus");
  result.error = r.string_or("error", "");
  result.allocator = allocator_from(r, "allocator", result.allocator);
  result.from_cache = r.boolean_or("from_cache", false);
  return result;
}

}  // namespace protuner
