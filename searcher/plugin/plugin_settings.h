// The settings of the ProTuner autoscheduler plugin. Halide 14 hands an autoscheduler only
// the pipeline, the target and machine_params, so everything else comes from environment
// variables; this is the one place that names them, gives their defaults and parses them
// strictly (a bad value is refused, never guessed at).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace protuner {

// The interim searches the plugin can run until the MCTS lands (schedule_search.h).
enum class PluginAlgorithm { kRandom, kGreedy };

// The names HL_PROTUNER_ALGORITHM accepts, in the order error messages list them.
const std::vector<std::string> &plugin_algorithm_names();
std::string to_string(PluginAlgorithm a);

struct PluginSettings {
  // HL_PROTUNER_SEED: seeds the search; the same seed and iteration count give the same
  // schedule. Decimal, 0 .. 2^64-1.
  uint64_t seed = 0;
  // HL_PROTUNER_ALGORITHM: random (sample complete schedules, keep the best) or greedy
  // (decide each Func by the best of a sample of its choices).
  PluginAlgorithm algorithm = PluginAlgorithm::kRandom;
  // HL_PROTUNER_BUDGET_S: whole seconds the search may take. The plugin returns its best
  // schedule when they run out; 0 means "one complete schedule" (it always finds one).
  // At most a year (a larger value is a typo).
  int64_t budget_seconds = 10;
  // HL_PROTUNER_ITERATIONS: stop after this many complete schedules even if time is left.
  // Unset: only the budget stops the search. With a budget that is never reached, a fixed
  // count makes runs reproducible (tests use it).
  std::optional<int64_t> max_iterations;
  // HL_PROTUNER_SCHEDULE_JSON: if set, the serialized schedule (schedule_json.h) is also
  // written to this path, for the measurer or another process to apply.
  std::optional<std::string> schedule_json_path;

  // One line naming every setting, for the log.
  std::string describe() const;
};

// Reads the settings through `lookup` (nullopt: the variable is unset; an empty value counts
// as unset too). Throws ConfigError naming the variable and its value when a value is
// malformed or out of range, or an algorithm name is unknown (listing the valid names).
using EnvLookup = std::function<std::optional<std::string>(const std::string &name)>;
PluginSettings plugin_settings_from(const EnvLookup &lookup);

// The same, from this process's environment.
PluginSettings plugin_settings_from_environment();

}  // namespace protuner
