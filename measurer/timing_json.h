// TimingSettings and TimingResult as JSON text, as the measure child and
// protuner-measure-runner pass them (compiled_candidate.h): one form both sides read and
// write. The runner links no libHalide, so this depends on nothing but nlohmann-json.
#pragma once

#include <string>

#include "measurer/timing.h"

namespace protuner {

std::string timing_settings_to_json(const TimingSettings &settings);
// Fields left out keep their defaults. Throws ConfigError for text that is not a JSON
// object of the right field types.
TimingSettings timing_settings_from_json(const std::string &text);

std::string timing_result_to_json(const TimingResult &result);
// Throws ConfigError for text that is not a whole result.
TimingResult timing_result_from_json(const std::string &text);

}  // namespace protuner
