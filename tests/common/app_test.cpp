// Loading generator libraries and instantiating apps, on the test fixture library.
#include "common/app.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/host_target.h"
#include "common/pipeline_io.h"

namespace protuner {
namespace {

AppSpec test_blur_spec() { return {"test_blur", PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", {}}; }

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(GeneratorLibrary, ListsTheGeneratorsItRegistered) {
  const auto &lib = GeneratorLibrary::load(PROTUNER_TEST_GENERATOR_LIBRARY);
  EXPECT_TRUE(lib.has_generator("test_blur"));
  EXPECT_TRUE(lib.has_generator("test_no_estimates"));
  EXPECT_FALSE(lib.has_generator("harris"));
  EXPECT_EQ(&lib, &GeneratorLibrary::load(PROTUNER_TEST_GENERATOR_LIBRARY)) << "loaded twice";
}

TEST(GeneratorLibrary, MissingFileIsAnAppLoadErrorNamingIt) {
  const std::string e = error_of([] { GeneratorLibrary::load("/nonexistent/libx.so"); });
  EXPECT_NE(e.find("/nonexistent/libx.so"), std::string::npos) << e;
}

TEST(AppInstance, UnknownGeneratorListsTheOnesThatExist) {
  AppSpec spec = test_blur_spec();
  spec.generator = "no_such_generator";
  const std::string e = error_of([&] { AppInstance::create(spec, host_target()); });
  EXPECT_NE(e.find("no_such_generator"), std::string::npos) << e;
  EXPECT_NE(e.find("test_blur"), std::string::npos) << e;
}

TEST(AppInstance, UnknownParameterIsRefusedByName) {
  AppSpec spec = test_blur_spec();
  spec.params["bogus_param"] = "1";
  const std::string e = error_of([&] { AppInstance::create(spec, host_target()); });
  EXPECT_NE(e.find("bogus_param"), std::string::npos) << e;
}

TEST(AppInstance, AutoScheduleIsProtunersToSet) {
  AppSpec spec = test_blur_spec();
  spec.params["auto_schedule"] = "true";
  const std::string e = error_of([&] { AppInstance::create(spec, host_target()); });
  EXPECT_NE(e.find("'auto_schedule' is protuner's to set"), std::string::npos) << e;
}

Halide::Buffer<> run(AppInstance &app, const std::vector<std::vector<int>> &extents) {
  bind_random_inputs(app.pipeline(), 7);
  Halide::Realization r = allocate_outputs(app.pipeline(), extents);
  app.pipeline().realize(r, app.target());
  return r[0];
}

TEST(AppInstance, OwnDefaultAndRootSchedulesComputeTheSameBits) {
  const auto target = host_target().with_feature(Halide::Target::StrictFloat);
  AppInstance def = AppInstance::create(test_blur_spec(), target);
  AppInstance own = AppInstance::create(test_blur_spec(), target, GeneratorSchedule::kOwn);
  AppInstance root = AppInstance::create(test_blur_spec(), target);
  apply_root_schedule(root.pipeline());
  const auto extents = estimated_output_extents(def.pipeline());
  ASSERT_EQ(extents, (std::vector<std::vector<int>>{{512, 256}}));
  Halide::Buffer<> a = run(def, extents), b = run(own, extents), c = run(root, extents);
  EXPECT_EQ(first_bitwise_difference(a, b), std::nullopt);
  EXPECT_EQ(first_bitwise_difference(a, c), std::nullopt);
}

}  // namespace
}  // namespace protuner
