#include "common/schedule/schedule_json.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace protuner {
namespace {

using nlohmann::json;

json loop_to_json(const LoopRef &l) {
  if (l.is_root()) return "root";
  return {{"func", l.func}, {"stage", l.stage}, {"loop", l.loop}};
}

const char *placement_name(Placement p) {
  switch (p) {
    case Placement::kInline:
      return "inline";
    case Placement::kRoot:
      return "root";
    case Placement::kAt:
      return "at";
  }
  return "?";
}

// Reads fields with errors that name the JSON path.
class Reader {
 public:
  template <typename T>
  static T get(const json &j, const std::string &key, const std::string &path) {
    if (!j.is_object() || !j.contains(key)) throw ConfigError(path + ": missing '" + key + "'");
    try {
      return j.at(key).get<T>();
    } catch (const json::exception &) {
      throw ConfigError(path + "." + key + ": wrong type");
    }
  }

  static LoopRef loop(const json &j, const std::string &path) {
    if (j.is_string() && j.get<std::string>() == "root") return LoopRef{};
    return {get<int>(j, "func", path), get<int>(j, "stage", path), get<int>(j, "loop", path)};
  }

  static FuncDecision decision(const json &j, const std::string &path) {
    FuncDecision d;
    const std::string p = get<std::string>(j, "placement", path);
    if (p == "inline")
      d.placement = Placement::kInline;
    else if (p == "root")
      d.placement = Placement::kRoot;
    else if (p == "at")
      d.placement = Placement::kAt;
    else
      throw ConfigError(path + ".placement: '" + p + "' is not inline, root or at");
    if (d.placement == Placement::kAt) {
      d.compute_at = loop(get<json>(j, "compute_at", path), path + ".compute_at");
      d.store_at = loop(get<json>(j, "store_at", path), path + ".store_at");
    }
    if (d.placement != Placement::kInline) {
      const json stages = get<json>(j, "stages", path);
      if (!stages.is_array()) throw ConfigError(path + ".stages: not a list");
      for (size_t s = 0; s < stages.size(); ++s) {
        const std::string sp = path + ".stages[" + std::to_string(s) + "]";
        StageTiling t;
        t.tile = get<std::vector<int64_t>>(stages[s], "tile", sp);
        t.inner = get<std::vector<int64_t>>(stages[s], "inner", sp);
        t.parallel_loops = get<int>(stages[s], "parallel_loops", sp);
        if (stages[s].contains("reduction_outside")) {
          t.reduction_outside = get<bool>(stages[s], "reduction_outside", sp);
        }
        if (stages[s].contains("unroll_reduction")) {
          t.unroll_reduction = get<bool>(stages[s], "unroll_reduction", sp);
        }
        if (stages[s].contains("reduction_lanes")) {
          t.reduction_lanes = get<int>(stages[s], "reduction_lanes", sp);
        }
        d.stages.push_back(std::move(t));
      }
    }
    return d;
  }
};

}  // namespace

std::string schedule_to_json(const ScheduleState &state) {
  json pipeline = json::array();
  for (const FuncSignature &f : pipeline_signature(state.graph())) {
    pipeline.push_back(
        {{"name", f.name}, {"dims", f.dimensions}, {"stages", f.stages}, {"types", f.value_types}});
  }
  json decisions = json::array();
  for (int f = 0; f < state.num_decided(); ++f) {
    const FuncDecision &d = state.decision(f);
    json j = {{"placement", placement_name(d.placement)}};
    if (d.placement == Placement::kAt) {
      j["compute_at"] = loop_to_json(d.compute_at);
      j["store_at"] = loop_to_json(d.store_at);
    }
    if (d.placement != Placement::kInline) {
      json stages = json::array();
      for (const StageTiling &t : d.stages) {
        json stage = {{"tile", t.tile}, {"inner", t.inner}, {"parallel_loops", t.parallel_loops}};
        // Written only when set, so every schedule without it keeps its text, and with it
        // its result-cache key and dataset identity.
        if (t.reduction_outside) stage["reduction_outside"] = true;
        if (t.unroll_reduction) stage["unroll_reduction"] = true;
        if (t.reduction_lanes > 0) stage["reduction_lanes"] = t.reduction_lanes;
        stages.push_back(std::move(stage));
      }
      j["stages"] = stages;
    }
    decisions.push_back(j);
  }
  return json{{"format", "protuner-schedule"},
              {"version", kScheduleFormatVersion},
              {"pipeline", pipeline},
              {"decisions", decisions}}
      .dump();
}

ScheduleState schedule_from_json(const std::string &text,
                                 std::shared_ptr<const PipelineGraph> graph) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    throw ConfigError(std::string("schedule: malformed JSON: ") + e.what());
  }
  if (Reader::get<std::string>(j, "format", "schedule") != "protuner-schedule") {
    throw ConfigError("schedule: not a protuner schedule (format is not 'protuner-schedule')");
  }
  const int version = Reader::get<int>(j, "version", "schedule");
  if (version != kScheduleFormatVersion) {
    throw ConfigError("schedule: format version " + std::to_string(version) +
                      " is not supported (this build reads version " +
                      std::to_string(kScheduleFormatVersion) + ")");
  }
  // The Funcs it was made for, checked against this pipeline before any decision is read.
  std::vector<FuncSignature> recorded;
  const json pipeline = Reader::get<json>(j, "pipeline", "schedule");
  for (size_t i = 0; i < pipeline.size(); ++i) {
    const std::string path = "schedule.pipeline[" + std::to_string(i) + "]";
    recorded.push_back({Reader::get<std::string>(pipeline[i], "name", path),
                        Reader::get<int>(pipeline[i], "dims", path),
                        Reader::get<int>(pipeline[i], "stages", path),
                        Reader::get<std::vector<std::string>>(pipeline[i], "types", path)});
  }
  check_same_pipeline(recorded, pipeline_signature(*graph));

  ScheduleState state(std::move(graph));
  const json decisions = Reader::get<json>(j, "decisions", "schedule");
  if (!decisions.is_array() || decisions.size() > state.graph().funcs.size()) {
    throw ConfigError("schedule.decisions: must be a list of at most one decision per Func");
  }
  for (size_t i = 0; i < decisions.size(); ++i) {
    const std::string path = "schedule.decisions[" + std::to_string(i) + "]";
    try {
      state.decide(Reader::decision(decisions[i], path));
    } catch (const std::invalid_argument &e) {
      throw IllegalScheduleError(path + ": " + e.what());
    }
  }
  return state;
}

}  // namespace protuner
