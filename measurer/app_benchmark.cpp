#include "measurer/app_benchmark.h"

#include <Halide.h>
#include <chrono>

#include "common/host_target.h"
#include "common/pipeline_io.h"

namespace protuner {

// The seed of the inputs every baseline of an app is timed on.
constexpr uint64_t kInputSeed = 1;

AppBenchmarkResult benchmark_app(const AppSpec &spec,
                                 const std::map<std::string, std::string> &extra_params,
                                 const TimingSettings &settings) {
  const Halide::Target target = host_target();
  AppInstance app = AppInstance::create(spec, target, extra_params);
  Halide::Pipeline &p = app.pipeline();
  auto inputs = bind_random_inputs(p, kInputSeed);
  Halide::Realization outputs = allocate_outputs(p, estimated_output_extents(p));

  AppBenchmarkResult result;
  const auto start = std::chrono::steady_clock::now();
  p.compile_jit(target);
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.timing = time_runs([&] { p.realize(outputs, target); }, settings);
  return result;
}

}  // namespace protuner
