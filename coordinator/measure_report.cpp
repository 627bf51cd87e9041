// The readable form of one measurement for `protuner measure`.
#include "coordinator/measure_report.h"

#include "coordinator/text_table.h"

namespace protuner {
namespace {

std::string join(const std::vector<int> &v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

std::string schedule_description(const ScheduleSpec &schedule, const std::string &file) {
  switch (schedule.kind) {
    case ScheduleKind::kOwn: return "own";
    case ScheduleKind::kDefault: return "default";
    case ScheduleKind::kRoot: return "root";
    case ScheduleKind::kProtuner: return file.empty() ? "protuner" : "protuner (" + file + ")";
    case ScheduleKind::kAutoscheduler: return "autoscheduler " + schedule.autoscheduler;
  }
  return "unknown";
}

void print_measure_result(const MeasureRequest &request, const std::string &schedule_text,
                          const MeasureResult &r, std::ostream &out) {
  out << "app '" << request.app.name << "' (generator '" << request.app.generator << "' in "
      << request.app.library << "), schedule " << schedule_text << ", target " << request.target
      << "\n\n";
  TextTable table({"measurement", "value"});
  table.add_row({"status", status_name(r.status)});
  if (r.ok()) {
    table.add_row({"min", format_fixed(r.timing.min_ms, 4) + " ms"});
    table.add_row({"median", format_fixed(r.timing.median_ms, 4) + " ms"});
    table.add_row({"spread", format_fixed(100 * r.timing.relative_spread, 2) + " %"});
    table.add_row({"samples", std::to_string(r.timing.samples_ms.size()) + " x " +
                                  std::to_string(r.timing.runs_per_sample) + " runs"});
  }
  if (r.compile_seconds > 0) table.add_row({"compile", format_fixed(r.compile_seconds, 2) + " s"});
  table.add_row({"cpus", join(r.cpus)});
  table.add_row({"cpu model", r.host.cpu_model});
  table.add_row({"physical cores", std::to_string(r.host.physical_cores)});
  table.add_row({"smt", r.host.smt});
  table.add_row({"governor", r.host.governor});
  table.add_row({"halide target", r.host.halide_target});
  table.add_row({"from cache", r.from_cache ? "yes" : "no"});
  table.print(out);
  if (!r.error.empty()) out << "\nerror: " << r.error << "\n";
}

}  // namespace protuner
