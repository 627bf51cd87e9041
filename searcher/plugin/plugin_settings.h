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

#include "common/app.h"
#include "searcher/cost/learned/cost_model_choice.h"

namespace protuner {

// The search the plugin runs when HL_PROTUNER_ALGORITHM is unset: ProTuner's MCTS with
// 1 s per Func decision, ranked by the cost model alone (cost+real needs the app's
// identity, which Halide does not pass to a plugin).
inline const char *kPluginDefaultAlgorithm = "mcts_1s";

// The plugin's cost model when HL_PROTUNER_COST_MODEL is unset. Analytic, whatever
// `protuner tune` defaults to: the plugin plans for the machine machine_params describes,
// which the analytic model follows and the shipped learned weights (trained on this
// machine class's measurements) do not.
inline const char *kPluginDefaultCostModel = "analytic";

struct PluginSettings {
  // HL_PROTUNER_COST_MODEL: what the search ranks schedules with (cost_model_choice.h):
  // analytic, feedforward or gcn (the shipped weights), or a weights file.
  CostModelChoice cost_model{kPluginDefaultCostModel};
  // HL_PROTUNER_SEED: seeds the search; the same seed and iteration count give the same
  // schedule. Decimal, 0 .. 2^64-1.
  uint64_t seed = 0;
  // HL_PROTUNER_ALGORITHM: a search by name (searcher/search/search_registry.h): the MCTS
  // configurations of ProTuner's Table 1 (mcts_30s, ..., mcts_cost+real_1s), mcts_0.5s,
  // beam, greedy or random.
  std::string algorithm = kPluginDefaultAlgorithm;
  // HL_PROTUNER_BUDGET_S: whole seconds the search may take. The plugin returns its best
  // schedule when they run out; 0 means "as fast as possible" (it always returns a
  // complete schedule). At most a year (a larger value is a typo).
  int64_t budget_seconds = 10;
  // HL_PROTUNER_ITERATIONS: the search's iteration count (MCTS: per tree per decision;
  // beam: passes; random: schedules). With it, a run is reproducible; the budget still
  // applies. Unset: only the budget stops the search.
  std::optional<int64_t> iterations;
  // HL_PROTUNER_SCHEDULE_JSON: if set, the serialized schedule (schedule_json.h) is also
  // written to this path, for the measurer or another process to apply.
  std::optional<std::string> schedule_json_path;
  // Searches that measure (mcts_cost+real_*) compile and time
  // candidates in a child process, which rebuilds the pipeline from the generator:
  //   HL_PROTUNER_APP_LIBRARY    the generator library (the -p library of the driver)
  //   HL_PROTUNER_APP_GENERATOR  the generator's name (the driver's -g)
  //   HL_PROTUNER_APP_PARAMS     its generator params, "name=value,name=value" (optional)
  // Unset library: the search uses the cost model only (a measuring search is refused).
  std::optional<AppSpec> app;
  // HL_PROTUNER_MEASURE_CHILD: the measurement helper executable. Unset:
  // protuner-measure-child in the bin/ folder beside the plugin's lib/ folder.
  std::optional<std::string> measure_child;
  // HL_PROTUNER_ALLOW_UNMEASURED: 1 lets a measuring search whose candidates mostly
  // failed to measure (measurement_failure, measured_candidates.h) return the cost
  // model's choice anyway, labelled UNMEASURED in the schedule file and the log; 0, the
  // default, stops the generator with the failures named.
  bool allow_unmeasured = false;

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
