// The names of measurement statuses, in one place: the wire, JSON, reports and the CLI's
// exit code all go through these two functions.
#include "measurer/measurement.h"

#include "common/errors.h"

namespace protuner {
namespace {

constexpr MeasureStatus kAllStatuses[] = {
    MeasureStatus::kOk,          MeasureStatus::kCompileError, MeasureStatus::kRuntimeCrash,
    MeasureStatus::kTimeout,     MeasureStatus::kOutOfMemory,  MeasureStatus::kWrongOutput,
    MeasureStatus::kBadRequest,
};

}  // namespace

const char *status_name(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk: return "ok";
    case MeasureStatus::kCompileError: return "compile_error";
    case MeasureStatus::kRuntimeCrash: return "runtime_crash";
    case MeasureStatus::kTimeout: return "timeout";
    case MeasureStatus::kOutOfMemory: return "out_of_memory";
    case MeasureStatus::kWrongOutput: return "wrong_output";
    case MeasureStatus::kBadRequest: return "bad_request";
  }
  return "unknown";
}

MeasureStatus parse_status(const std::string &name) {
  for (MeasureStatus s : kAllStatuses) {
    if (name == status_name(s)) return s;
  }
  std::string known;
  for (MeasureStatus s : kAllStatuses) known += std::string(known.empty() ? "" : ", ") + status_name(s);
  throw ConfigError("unknown measurement status '" + name + "' (known: " + known + ")");
}

}  // namespace protuner
