// Every app of the suite builds, JIT-compiles with its expert schedule, with Halide's default
// schedule (where that is feasible at all) and with the compute-root reference, runs on the
// same deterministic random inputs at their estimated sizes over a reduced output region,
// and all schedules give the same bits (strict_float on every side).
#include <gtest/gtest.h>

#include <filesystem>

#include "common/app.h"
#include "common/host_target.h"
#include "common/pipeline_io.h"

namespace protuner {
namespace {

struct AppCase {
  std::string generator;
  std::string library;      // file name in the build's lib/
  std::vector<int> region;  // output extents checked
  // Halide's default schedule inlines everything and recomputes non-inlinable stages per
  // consumer point: exponential on deep pipelines, hours on a network block. Only the apps
  // where it finishes in well under a second at `region` compare against it.
  bool check_default;
};

void PrintTo(const AppCase &c, std::ostream *os) { *os << c.generator; }

constexpr uint64_t kInputSeed = 5;

Halide::Buffer<> run(AppInstance &app, const std::vector<int> &region) {
  bind_random_inputs(app.pipeline(), kInputSeed);
  Halide::Realization out = allocate_outputs(app.pipeline(), {region});
  app.pipeline().realize(out, app.target());
  return out[0];
}

class App : public ::testing::TestWithParam<AppCase> {};

TEST_P(App, OwnDefaultAndReferenceSchedulesComputeTheSameBits) {
  const AppCase &c = GetParam();
  const std::string library = std::string(PROTUNER_APP_LIBRARY_DIR) + "/" + c.library;
  if (!std::filesystem::exists(library)) GTEST_SKIP() << library << " not built (PROTUNER_APPS)";
  const AppSpec spec{c.generator, library, c.generator, {}};
  const Halide::Target target = host_target().with_feature(Halide::Target::StrictFloat);

  AppInstance reference = AppInstance::create(spec, target);
  apply_root_schedule(reference.pipeline());
  ASSERT_EQ(estimated_output_extents(reference.pipeline()).at(0).size(), c.region.size());
  const Halide::Buffer<> expected = run(reference, c.region);

  AppInstance own = AppInstance::create(spec, target, GeneratorSchedule::kOwn);
  EXPECT_EQ(first_bitwise_difference(expected, run(own, c.region)), std::nullopt)
      << "own schedule";
  if (c.check_default) {
    AppInstance unscheduled = AppInstance::create(spec, target);
    EXPECT_EQ(first_bitwise_difference(expected, run(unscheduled, c.region)), std::nullopt)
        << "Halide's default schedule";
  }
}

const AppCase kApps[] = {
    {"bilateral_grid", "libprotuner_app_bilateral_grid.so", {256, 256}, true},
    {"camera_pipe", "libprotuner_app_camera_pipe.so", {256, 256, 3}, true},
    {"conv_layer", "libprotuner_app_conv_layer.so", {128, 20, 16, 1}, true},
    {"harris", "libprotuner_app_harris.so", {256, 256}, true},
    {"hist", "libprotuner_app_hist.so", {256, 256, 3}, false},
    {"iir_blur", "libprotuner_app_iir_blur.so", {256, 256, 3}, false},
    {"interpolate", "libprotuner_app_interpolate.so", {256, 256, 3}, false},
    {"lens_blur", "libprotuner_app_lens_blur.so", {256, 256, 3}, false},
    {"local_laplacian", "libprotuner_app_local_laplacian.so", {256, 256, 3}, false},
    {"mat_mul", "libprotuner_app_mat_mul.so", {256, 256}, true},
    {"max_filter", "libprotuner_app_max_filter.so", {256, 256, 3}, false},
    {"nl_means", "libprotuner_app_nl_means.so", {256, 256, 3}, false},
    {"stencil_chain", "libprotuner_app_stencil_chain.so", {256, 256}, false},
    {"unsharp", "libprotuner_app_unsharp.so", {256, 256, 3}, true},
    {"bgu", "libprotuner_app_bgu.so", {256, 256, 3}, false},
    // ResNet-50 by parts; the whole network is checked against the composed parts in
    // resnet50_composition_test.cpp.
    {"resnet50_stem", "libprotuner_app_resnet50.so", {64, 16, 16}, true},
    {"resnet50_block_2_first", "libprotuner_app_resnet50.so", {256, 16, 16}, false},
    {"resnet50_block_2", "libprotuner_app_resnet50.so", {256, 16, 16}, false},
    {"resnet50_block_3_first", "libprotuner_app_resnet50.so", {512, 8, 8}, false},
    {"resnet50_block_3", "libprotuner_app_resnet50.so", {512, 8, 8}, false},
    {"resnet50_block_4_first", "libprotuner_app_resnet50.so", {1024, 4, 4}, false},
    {"resnet50_block_4", "libprotuner_app_resnet50.so", {1024, 4, 4}, false},
    {"resnet50_block_5_first", "libprotuner_app_resnet50.so", {2048, 2, 2}, false},
    {"resnet50_block_5", "libprotuner_app_resnet50.so", {2048, 2, 2}, false},
    {"resnet50_head", "libprotuner_app_resnet50.so", {1000}, true},
};

INSTANTIATE_TEST_SUITE_P(Suite, App, ::testing::ValuesIn(kApps),
                         [](const ::testing::TestParamInfo<AppCase> &info) {
                           return info.param.generator;
                         });

}  // namespace
}  // namespace protuner
