// Measurement requests for tests that check statuses and outputs, not runtimes: short
// timing and limits, so a real measure child answers in a second or two.
#pragma once

#include <string>

#include "measurer/measurement.h"

namespace protuner {

inline MeasureSettings quick_measure_settings() {
  MeasureSettings s;
  s.timing.warmup_runs = 1;
  s.timing.set_samples(3);
  s.timing.max_samples = 3;
  s.timing.min_sample_seconds = 0.005;
  s.compile_timeout_seconds = 60;
  s.run_timeout_seconds = 30;
  s.memory_limit_mb = 4096;
  return s;
}

// `generator` of `library` under `schedule`, for this host.
inline MeasureRequest quick_request(const std::string &library, const std::string &generator,
                                    ScheduleSpec schedule) {
  MeasureRequest r;
  r.app = {generator, library, generator, {}};
  r.schedule = std::move(schedule);
  r.target = "host";
  r.settings = quick_measure_settings();
  return r;
}

}  // namespace protuner
