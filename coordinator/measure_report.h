// How `protuner measure` shows one measurement: a readable table for people, or the
// result's JSON (measure_json.h) for scripts and the farm.
#pragma once

#include <ostream>
#include <string>

#include "measurer/measurement.h"

namespace protuner {

// "own", "default", "root", "autoscheduler <name>", or "protuner (<file>)" for a
// schedule file.
std::string schedule_description(const ScheduleSpec &schedule, const std::string &file = "");

// The table: status, min/median runtime in ms, samples, spread, compile time, CPUs, host
// facts, cache, and the error text of a failure.
void print_measure_result(const MeasureRequest &request, const std::string &schedule_text,
                          const MeasureResult &result, std::ostream &out);

}  // namespace protuner
