// Reference outputs on disk: what is written is read back bit for bit, and anything else
// (another key, a damaged file) is a miss, never a wrong reference.
#include <gtest/gtest.h>

#include <Halide.h>

#include <filesystem>
#include <fstream>

#include "measurer/reference_output.h"

namespace protuner {
namespace {

class ReferenceOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("protuner_reference_test_" + std::to_string(getpid()));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

ReferenceOutput two_outputs() {
  Halide::Buffer<float> f(5, 3);
  f.for_each_element([&](int x, int y) { f(x, y) = x * 0.25f - y; });
  Halide::Buffer<uint8_t> u(4, 2, 3);
  u.for_each_element([&](int x, int y, int c) { u(x, y, c) = uint8_t(x + 4 * y + 8 * c); });
  u.translate({2, 0, 0});  // a non-zero min, as an output estimated inside its input has
  return {{"out_f", "out_u"}, {f, u}};
}

TEST_F(ReferenceOutputTest, WhatIsSavedIsLoadedBitForBit) {
  const std::string path = reference_path(dir_.string(), "key-1");
  const ReferenceOutput ref = two_outputs();
  save_reference(path, "key-1", ref);
  const auto back = load_reference(path, "key-1");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->names, ref.names);
  ASSERT_EQ(back->buffers.size(), 2u);
  Halide::Buffer<float> f = back->buffers[0];
  Halide::Buffer<uint8_t> u = back->buffers[1];
  EXPECT_EQ(f(4, 2), 4 * 0.25f - 2);
  EXPECT_EQ(u.dim(0).min(), 2) << "the mins are kept";
  EXPECT_EQ(u(3, 1, 2), 1 + 4 + 16);
  EXPECT_EQ(ref.buffers[1].dim(0).min(), 2) << "saving moved the saved buffer";
  EXPECT_EQ(u.type(), Halide::UInt(8));
}

TEST_F(ReferenceOutputTest, AnotherKeyOrADamagedFileIsAMiss) {
  const std::string path = reference_path(dir_.string(), "key-1");
  save_reference(path, "key-1", two_outputs());
  EXPECT_FALSE(load_reference(path, "key-2").has_value());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  EXPECT_FALSE(load_reference(path, "key-1").has_value());
  std::ofstream(path) << "not a reference";
  EXPECT_FALSE(load_reference(path, "key-1").has_value());
  EXPECT_FALSE(load_reference(dir_.string() + "/missing.ref", "key-1").has_value());
}

}  // namespace
}  // namespace protuner
