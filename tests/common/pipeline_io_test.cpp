// Inputs at estimated sizes, outputs, and the bitwise comparison every correctness check
// relies on.
#include "common/pipeline_io.h"

#include <gtest/gtest.h>

#include "common/app.h"
#include "common/errors.h"
#include "common/host_target.h"

namespace protuner {
namespace {

AppInstance make(const std::string &generator) {
  return AppInstance::create({generator, PROTUNER_TEST_GENERATOR_LIBRARY, generator, {}},
                             host_target());
}

TEST(BindRandomInputs, AllocatesEstimatedShapesAndScalarEstimates) {
  AppInstance app = make("test_blur");
  auto inputs = bind_random_inputs(app.pipeline(), 1);
  ASSERT_EQ(inputs.size(), 2u);
  const BoundInput *image = nullptr;
  for (const auto &i : inputs) {
    if (i.name == "input") image = &i;
  }
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->buffer.dim(0).extent(), 512);
  EXPECT_EQ(image->buffer.dim(1).extent(), 256);
  Halide::Buffer<float> typed(*image->buffer.raw_buffer());
  float lo = 1, hi = 0;
  typed.for_each_value([&](float v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  });
  EXPECT_GE(lo, 0.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_GT(hi - lo, 0.9f) << "not spread over [0, 1)";
}

TEST(BindRandomInputs, SameSeedSameBytesOtherSeedOtherBytes) {
  AppInstance a = make("test_blur"), b = make("test_blur"), c = make("test_blur");
  auto image = [](std::vector<BoundInput> v) {
    for (auto &i : v) {
      if (i.buffer.defined()) return i.buffer;
    }
    return Halide::Buffer<>();
  };
  auto x = image(bind_random_inputs(a.pipeline(), 5));
  auto y = image(bind_random_inputs(b.pipeline(), 5));
  auto z = image(bind_random_inputs(c.pipeline(), 6));
  EXPECT_EQ(first_bitwise_difference(x, y), std::nullopt);
  EXPECT_NE(first_bitwise_difference(x, z), std::nullopt);
}

TEST(BindRandomInputs, MissingEstimateIsRefusedNamingTheInput) {
  AppInstance app = make("test_no_estimates");
  try {
    bind_random_inputs(app.pipeline(), 1);
    FAIL() << "accepted an input without estimates";
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("input 'input'"), std::string::npos) << e.what();
  }
}

TEST(EstimatedOutputExtents, MissingEstimateIsRefusedNamingTheOutput) {
  AppInstance app = make("test_no_estimates");
  EXPECT_THROW(estimated_output_extents(app.pipeline()), ConfigError);
}

TEST(AllocateEstimatedOutputs, PutsOutputsWhereTheirEstimatesStart) {
  AppInstance app = make("test_estimate_min");
  Halide::Realization out = allocate_estimated_outputs(app.pipeline());
  ASSERT_EQ(out.size(), 1u);
  Halide::Buffer<> b = out[0];
  EXPECT_EQ(b.dim(0).min(), 1);
  EXPECT_EQ(b.dim(0).extent(), 256);
  EXPECT_EQ(b.dim(1).min(), 1);
  EXPECT_EQ(b.dim(1).extent(), 128);
}

TEST(AllocateEstimatedOutputs, ConstraintsWinOverEstimates) {
  AppInstance app = make("test_constrained_output");
  const EstimatedShape shape = output_estimate(app.pipeline().outputs()[0].function());
  EXPECT_EQ(shape.extents, (std::vector<int>{64, 32, 16}));  // estimated 40 x 32 x 10
  EXPECT_EQ(shape.mins, (std::vector<int>{0, 0, 0}));
}

TEST(BindRandomInputs, LaysOutAnInterleavedInputAsItsStrideConstraintsSay) {
  AppInstance app = make("test_interleaved_input");
  const auto inputs = bind_random_inputs(app.pipeline(), 1);
  ASSERT_EQ(inputs.size(), 1u);
  const Halide::Buffer<> &b = inputs[0].buffer;
  EXPECT_EQ(b.dim(2).stride(), 1);
  EXPECT_EQ(b.dim(0).stride(), 3);
  EXPECT_EQ(b.dim(1).stride(), 3 * 128);
  // And the pipeline runs on it: Halide checks the strides.
  Halide::Realization out = allocate_estimated_outputs(app.pipeline());
  apply_root_schedule(app.pipeline());
  EXPECT_NO_THROW(app.pipeline().realize(out, app.target()));
}

TEST(FirstBitwiseDifference, FindsTheFirstDifferingElementAndShapeMismatches) {
  Halide::Buffer<float> a(4, 3), b(4, 3), c(4, 2);
  a.fill(1.0f);
  b.fill(1.0f);
  EXPECT_EQ(first_bitwise_difference(a, b), std::nullopt);
  b(2, 1) = -0.0f;
  a(2, 1) = 0.0f;  // equal as floats, different bits
  EXPECT_EQ(first_bitwise_difference(a, b), std::optional<std::string>("values differ at (2, 1)"));
  EXPECT_NE(first_bitwise_difference(a, c), std::nullopt);
}

}  // namespace
}  // namespace protuner
