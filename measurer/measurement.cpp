// The names of measurement statuses and allocator policies, in one place: the wire, JSON,
// reports and the CLI's exit code all go through these functions.
#include "measurer/measurement.h"

#include <algorithm>
#include <cctype>

#include "common/errors.h"

namespace protuner {

const std::vector<MeasureStatus> &all_statuses() {
  static const std::vector<MeasureStatus> statuses{
      MeasureStatus::kOk,          MeasureStatus::kCompileError, MeasureStatus::kRuntimeCrash,
      MeasureStatus::kTimeout,     MeasureStatus::kOutOfMemory,  MeasureStatus::kWrongOutput,
      MeasureStatus::kBadRequest,  MeasureStatus::kMeasurerError, MeasureStatus::kCancelled,
  };
  return statuses;
}

const std::vector<std::string> &halide_autoscheduler_names() {
  static const std::vector<std::string> names{"Adams2019", "Mullapudi2016", "Li2018"};
  return names;
}

std::string autoscheduler_plugin_path(const ScheduleSpec &spec) {
  if (!spec.autoscheduler_plugin.empty()) return spec.autoscheduler_plugin;
  const auto &known = halide_autoscheduler_names();
  if (std::find(known.begin(), known.end(), spec.autoscheduler) == known.end()) {
    std::string list;
    for (const auto &n : known) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError("unknown autoscheduler '" + spec.autoscheduler + "' (Halide's are: " + list +
                      "; another plugin needs its path)");
  }
  std::string file = spec.autoscheduler;
  std::transform(file.begin(), file.end(), file.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // The folder Halide's CMake package installs its autoscheduler plugins in.
  return std::string(PROTUNER_HALIDE_PLUGIN_DIR) + "/libautoschedule_" + file + ".so";
}

const char *status_name(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk: return "ok";
    case MeasureStatus::kCompileError: return "compile_error";
    case MeasureStatus::kRuntimeCrash: return "runtime_crash";
    case MeasureStatus::kTimeout: return "timeout";
    case MeasureStatus::kOutOfMemory: return "out_of_memory";
    case MeasureStatus::kWrongOutput: return "wrong_output";
    case MeasureStatus::kBadRequest: return "bad_request";
    case MeasureStatus::kMeasurerError: return "measurer_error";
    case MeasureStatus::kCancelled: return "cancelled";
  }
  return "unknown";
}

MeasureStatus parse_status(const std::string &name) {
  for (MeasureStatus s : all_statuses()) {
    if (name == status_name(s)) return s;
  }
  std::string known;
  for (MeasureStatus s : all_statuses()) known += std::string(known.empty() ? "" : ", ") + status_name(s);
  throw ConfigError("unknown measurement status '" + name + "' (known: " + known + ")");
}

const char *allocator_policy_name(AllocatorPolicy policy) {
  switch (policy) {
    case AllocatorPolicy::kPlatform: return "platform";
    case AllocatorPolicy::kPooling: return "pooling";
  }
  return "unknown";
}

AllocatorPolicy parse_allocator_policy(const std::string &name) {
  for (AllocatorPolicy p : {AllocatorPolicy::kPlatform, AllocatorPolicy::kPooling}) {
    if (name == allocator_policy_name(p)) return p;
  }
  throw ConfigError("unknown allocator policy '" + name + "' (known: platform, pooling)");
}

}  // namespace protuner
