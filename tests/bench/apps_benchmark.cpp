// Full-size runtime of every app's expert schedule (the numbers in apps/README.md).
// Usage: apps_benchmark [suite.yaml] [Google Benchmark flags]; default apps/suite.yaml.
// Each app is JIT-compiled once for this host, outside the timed loop, on the standard
// random inputs at its estimated sizes.
#include <benchmark/benchmark.h>

#include <Halide.h>
#include <iostream>
#include <memory>

#include "common/app.h"
#include "common/errors.h"
#include "common/host_target.h"
#include "common/pipeline_io.h"
#include "common/suite.h"

namespace {

using namespace protuner;

void run_own(benchmark::State &state, const AppSpec &spec) {
  AppInstance app = AppInstance::create(spec, host_target(), GeneratorSchedule::kOwn);
  Halide::Pipeline &p = app.pipeline();
  bind_random_inputs(p, 1);
  Halide::Realization out = allocate_estimated_outputs(p);
  p.compile_jit(app.target());
  p.realize(out, app.target());  // warm-up: page faults, thread pool start
  for (auto _ : state) p.realize(out, app.target());
  state.SetLabel(spec.generator);
}

}  // namespace

int main(int argc, char **argv) {
  std::string suite_path = PROTUNER_SOURCE_DIR "/apps/suite.yaml";
  if (argc > 1 && argv[1][0] != '-') {
    suite_path = argv[1];
    for (int i = 1; i + 1 < argc; ++i) argv[i] = argv[i + 1];
    --argc;
  }
  Suite suite;
  try {
    suite = parse_suite_file(suite_path);
  } catch (const protuner::Error &e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  for (const SuiteApp &app : suite.apps) {
    benchmark::RegisterBenchmark(("own/" + app.spec.name).c_str(), run_own, app.spec)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MinTime(1.0);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
