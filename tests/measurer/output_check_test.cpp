// The output comparison policy: what legitimately differs between schedules passes, a
// real scheduling bug (a wrong boundary) fails with a message that finds it.
#include <gtest/gtest.h>

#include <Halide.h>

#include <cmath>
#include <random>

#include "measurer/output_check.h"

namespace protuner {
namespace {

// A smooth float image like a blur's output: values in [0.15, 0.87], rising by 0.001
// from one column to the next.
Halide::Buffer<float> smooth_image(int w, int h) {
  Halide::Buffer<float> b(w, h);
  b.for_each_element([&](int x, int y) { b(x, y) = 0.25f + 0.001f * x + 0.1f * std::sin(0.03f * y); });
  return b;
}

bool contains(const std::optional<std::string> &text, const std::string &part) {
  return text && text->find(part) != std::string::npos;
}

TEST(OutputCheck, IdenticalBuffersPass) {
  const Halide::Buffer<float> a = smooth_image(512, 256);
  EXPECT_EQ(compare_output("out", a, a.copy()), std::nullopt);
  Halide::Buffer<uint8_t> i(64, 64);
  i.fill(7);
  EXPECT_EQ(compare_output("out", i, i.copy()), std::nullopt);
}

TEST(OutputCheck, ContractionSizedFloatNoisePasses) {
  // Fused multiply-adds and reassociation move results by a few ulps per operation;
  // 64 ulps everywhere is far beyond what one schedule change does.
  const Halide::Buffer<float> expected = smooth_image(512, 256);
  Halide::Buffer<float> got = expected.copy();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> ulps(-64, 64);
  got.for_each_value([&](float &v) { v *= 1.0f + ulps(rng) * 5.96e-8f; });
  // A value that cancels to almost zero is judged by the output's magnitude.
  Halide::Buffer<float> near_zero = expected.copy();
  near_zero(10, 10) = 1e-7f;
  Halide::Buffer<float> near_zero_noisy = near_zero.copy();
  near_zero_noisy(10, 10) = -2e-6f;
  EXPECT_EQ(compare_output("out", expected, got), std::nullopt);
  EXPECT_EQ(compare_output("out", near_zero, near_zero_noisy), std::nullopt);
}

TEST(OutputCheck, AWrongBoundaryIsCaughtWithTheFirstBadCoordinate) {
  // The bug a wrong boundary makes: the last column computed as if the image ended one
  // column earlier (a clamp to width - 2 instead of width - 1).
  const Halide::Buffer<float> expected = smooth_image(512, 256);
  Halide::Buffer<float> got = expected.copy();
  for (int y = 0; y < 256; ++y) got(511, y) = expected(510, y);
  const auto diff = compare_output("blur_y", expected, got);
  ASSERT_TRUE(diff.has_value());
  EXPECT_TRUE(contains(diff, "output 'blur_y': 256 of 131072 points differ")) << *diff;
  EXPECT_TRUE(contains(diff, "(13 allowed)")) << *diff;
  EXPECT_TRUE(contains(diff, "first at (511, 0): expected ")) << *diff;
  EXPECT_TRUE(contains(diff, ", got ")) << *diff;
}

TEST(OutputCheck, IntegersMayDifferByOneUnit) {
  Halide::Buffer<uint8_t> expected(64, 64), got(64, 64);
  expected.fill(100);
  got.fill(101);
  EXPECT_EQ(compare_output("out", expected, got), std::nullopt);
  got.fill(102);
  EXPECT_TRUE(contains(compare_output("out", expected, got), "expected 100, got 102"));
}

TEST(OutputCheck, AFewFlippedDecisionsAreTolerated) {
  // A thresholded output (corners, non-max suppression): 13 of 131072 points may flip.
  Halide::Buffer<uint8_t> expected(512, 256);
  expected.fill(0);
  Halide::Buffer<uint8_t> got = expected.copy();
  for (int i = 0; i < 13; ++i) got(i * 37, i * 19) = 255;
  EXPECT_EQ(compare_output("corners", expected, got), std::nullopt);
  got(500, 200) = 255;
  EXPECT_TRUE(contains(compare_output("corners", expected, got), "14 of 131072 points differ"));
}

TEST(OutputCheck, NanMatchesOnlyNan) {
  Halide::Buffer<float> expected = smooth_image(8, 8);
  expected(1, 1) = NAN;
  Halide::Buffer<float> got = expected.copy();
  EXPECT_EQ(compare_output("out", expected, got), std::nullopt);
  got(1, 1) = 0.5f;
  EXPECT_TRUE(contains(compare_output("out", expected, got), "first at (1, 1): expected nan"));
}

TEST(OutputCheck, TypeAndShapeMustMatch) {
  Halide::Buffer<float> a(16, 8);
  Halide::Buffer<int32_t> b(16, 8);
  Halide::Buffer<float> c(16, 9);
  a.fill(0);
  b.fill(0);
  c.fill(0);
  EXPECT_EQ(compare_output("o", a, b), "output 'o': type int32, expected float32");
  EXPECT_EQ(compare_output("o", a, c), "output 'o': dimension 1 is [0, +9), expected [0, +8)");
}

}  // namespace
}  // namespace protuner
