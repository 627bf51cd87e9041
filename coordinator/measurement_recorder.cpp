// Measured candidates as training samples (measurement_recorder.h).
#include "coordinator/measurement_recorder.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/host_target.h"

namespace protuner {
namespace {

double stddev(const std::vector<double> &v) {
  if (v.size() < 2) return 0;
  double mean = 0, sq = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size() - 1));
}

// Failures that say something is wrong with the schedule or the measurer, as opposed to
// the budget's limits.
bool worth_keeping(MeasureStatus status) {
  return status == MeasureStatus::kCompileError || status == MeasureStatus::kRuntimeCrash ||
         status == MeasureStatus::kWrongOutput;
}

}  // namespace

// A failed schedule is not a sample, but it is a bug to chase (a schedule the space should
// not hold, or a measurer fault): it goes to a file of its own beside the dataset,
// `<out>.failed/<pipeline id>.<k>.json`, which `protuner measure --schedule` takes as is.
std::filesystem::path failed_schedule_path(const std::string &dataset,
                                           const std::string &pipeline_id, size_t index) {
  return std::filesystem::path(dataset + ".failed") /
         (pipeline_id + "." + std::to_string(index + 1) + ".json");
}

std::string keep_failed_schedule(const std::string &dataset, const std::string &pipeline_id,
                                 size_t index, const std::string &schedule) {
  const std::filesystem::path path = failed_schedule_path(dataset, pipeline_id, index);
  const std::filesystem::path dir = path.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream out(path);
  out << schedule << "\n";
  if (ec || !out.flush()) throw IoError("cannot write the failed schedule to " + path.string());
  return path.string();
}

std::string host_class(const MeasureResult &result, const Halide::Target &target) {
  using F = Halide::Target::Feature;
  const char *simd = target.has_feature(F::AVX512)  ? "avx512"
                     : target.has_feature(F::AVX2)  ? "avx2"
                     : target.has_feature(F::SSE41) ? "sse4.1"
                                                    : "no simd";
  return result.host.cpu_model + " x" + std::to_string(result.cpus.size()) + ", " + simd +
         ", smt " + result.host.smt;
}

DatasetSample sample_of(const std::string &pipeline_id, const AppSpec &stored,
                        const std::string &schedule_json, const MeasureResult &result,
                        const Halide::Target &target) {
  DatasetSample s;
  s.app = stored;
  s.pipeline_id = pipeline_id;
  s.schedule_json = schedule_json;
  s.samples_ms = result.timing.samples_ms;
  s.min_ms = result.timing.min_ms;
  s.median_ms = result.timing.median_ms;
  s.stddev_ms = stddev(result.timing.samples_ms);
  s.host_class = host_class(result, target);
  s.target = target.to_string();
  return s;
}

RecordingBackend::RecordingBackend(MeasurementBackend &inner, const std::string &dataset_path)
    : inner_(inner), writer_(dataset_path) {}

MeasureResult RecordingBackend::measure(const MeasureRequest &request) {
  MeasureResult result = inner_.measure(request);
  if (request.schedule.kind != ScheduleKind::kProtuner) return result;
  if (!result.ok()) {
    if (worth_keeping(result.status)) keep_failure(request, result);
    return result;
  }
  try {
    const Halide::Target target =
        request.target == "host" ? host_target() : Halide::Target(request.target);
    AppSpec stored = request.app;
    stored.library = std::filesystem::path(stored.library).filename().string();
    const DatasetSample sample =
        sample_of(request.app.name, stored, request.schedule.schedule_json, result, target);
    std::lock_guard<std::mutex> lock(mutex_);
    writer_.append(sample);
    ++recorded_;
  } catch (const std::exception &e) {  // IoError, or a target string Halide refuses
    spdlog::warn("cannot record a measured schedule of {} in '{}': {}", request.app.name,
                 writer_.path(), e.what());
  }
  return result;
}

void RecordingBackend::keep_failure(const MeasureRequest &request, const MeasureResult &result) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string &app = request.app.name;
  // A folder kept from an earlier run keeps its files.
  while (std::filesystem::exists(failed_schedule_path(writer_.path(), app, next_failure_index_))) {
    ++next_failure_index_;
  }
  try {
    const std::string path = keep_failed_schedule(writer_.path(), app, next_failure_index_++,
                                                  request.schedule.schedule_json);
    ++kept_failures_;
    spdlog::info("{}: the {} schedule is kept in {}", app, status_name(result.status), path);
  } catch (const IoError &e) {
    spdlog::warn("cannot keep a failed schedule of {}: {}", app, e.what());
  }
}

int64_t RecordingBackend::recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

int64_t RecordingBackend::kept_failures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_failures_;
}

}  // namespace protuner
