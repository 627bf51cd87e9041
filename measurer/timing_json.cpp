// The JSON forms of timing_json.h.
#include "measurer/timing_json.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace protuner {

std::string timing_settings_to_json(const TimingSettings &s) {
  return nlohmann::json{{"warmup_runs", s.warmup_runs},
                        {"samples", s.samples},
                        {"max_samples", s.max_samples},
                        {"min_sample_seconds", s.min_sample_seconds},
                        {"confirming_samples", s.confirming_samples},
                        {"confirm_within", s.confirm_within},
                        {"stop_above_ms", s.stop_above_ms},
                        {"early_stop_samples", s.early_stop_samples},
                        {"early_stop_factor", s.early_stop_factor}}
      .dump();
}

TimingSettings timing_settings_from_json(const std::string &text) {
  TimingSettings s;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    s.warmup_runs = j.value("warmup_runs", s.warmup_runs);
    s.samples = j.value("samples", s.samples);
    s.max_samples = j.value("max_samples", s.max_samples);
    s.min_sample_seconds = j.value("min_sample_seconds", s.min_sample_seconds);
    s.confirming_samples = j.value("confirming_samples", s.confirming_samples);
    s.confirm_within = j.value("confirm_within", s.confirm_within);
    s.stop_above_ms = j.value("stop_above_ms", s.stop_above_ms);
    s.early_stop_samples = j.value("early_stop_samples", s.early_stop_samples);
    s.early_stop_factor = j.value("early_stop_factor", s.early_stop_factor);
  } catch (const nlohmann::json::exception &e) {
    throw ConfigError(std::string("timing settings are not valid: ") + e.what());
  }
  return s;
}

std::string timing_result_to_json(const TimingResult &r) {
  return nlohmann::json{{"samples_ms", r.samples_ms},
                        {"min_ms", r.min_ms},
                        {"median_ms", r.median_ms},
                        {"relative_spread", r.relative_spread},
                        {"runs_per_sample", r.runs_per_sample},
                        {"confirmed", r.confirmed},
                        {"stopped_above", r.stopped_above}}
      .dump();
}

TimingResult timing_result_from_json(const std::string &text) {
  TimingResult r;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    r.samples_ms = j.at("samples_ms").get<std::vector<double>>();
    r.min_ms = j.at("min_ms");
    r.median_ms = j.at("median_ms");
    r.relative_spread = j.at("relative_spread");
    r.runs_per_sample = j.at("runs_per_sample");
    r.confirmed = j.at("confirmed");
    r.stopped_above = j.at("stopped_above");
  } catch (const nlohmann::json::exception &e) {
    throw ConfigError(std::string("a timing result is not valid: ") + e.what());
  }
  return r;
}

}  // namespace protuner
