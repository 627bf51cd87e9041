// The body of Halide's .schedule.h for a protuner schedule (see halide_schedule_file.h).
#include "searcher/plugin/halide_schedule_file.h"

#include <cstdio>
#include <sstream>

#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "common/stable_hash.h"

namespace protuner {

std::string halide_schedule_body(const ScheduleState &state) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(stable_hash(schedule_to_json(state))));
  const std::string name = std::string("protuner_") + hex;
  const std::string fn = "apply_schedule_" + name;
  std::ostringstream os;
  os << "    // protuner's schedule is " << fn << ", defined below at namespace scope:\n"
     << "    // it needs the Func order code (common/pipeline/func_order.h) a function body cannot "
        "hold.\n"
     << "    void " << fn << "(::Halide::Pipeline, const ::Halide::Target &);\n"
     << "    " << fn << "(pipeline, target);\n"
     << "}\n\n"
     << schedule_source(state, name) << "\n"
     << "// Takes the closing brace Halide writes after the schedule body.\n"
     << "inline void " << fn << "_end_of_file() {\n";
  return os.str();
}

}  // namespace protuner
