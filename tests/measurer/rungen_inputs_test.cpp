// rungen_copies_input: when RunGen copies an input into a buffer of the bounds query's
// shape (and frees the first), which protuner-measure-runner reproduces.
#include "measurer/rungen_inputs.h"

#include <gtest/gtest.h>

namespace protuner {
namespace {

// Dense dimensions over extents starting at `mins`.
std::vector<halide_dimension_t> dense(const std::vector<int> &mins,
                                      const std::vector<int> &extents) {
  std::vector<halide_dimension_t> dims;
  int stride = 1;
  for (size_t i = 0; i < extents.size(); ++i) {
    dims.push_back(halide_dimension_t(mins[i], extents[i], stride));
    stride *= extents[i];
  }
  return dims;
}

TEST(RunGenInputs, AnInputThatMatchesTheQueryIsKept) {
  EXPECT_FALSE(rungen_copies_input(dense({0, 0}, {1920, 1080}), dense({0, 0}, {1920, 1080})));
}

TEST(RunGenInputs, ARegionInsideTheBufferWithOtherRowsIsCopied) {
  // camera_pipe: the estimate is 2592 x 1968, the pipeline reads 2572 x 1932 from (10, 18),
  // and the query's row stride (2572) is not the buffer's (2592).
  EXPECT_TRUE(rungen_copies_input(dense({0, 0}, {2592, 1968}), dense({10, 18}, {2572, 1932})));
}

TEST(RunGenInputs, ARegionInsideTheBufferWithTheSameRowsIsKept) {
  // Only the outermost dimension is smaller: every stride agrees.
  EXPECT_FALSE(rungen_copies_input(dense({0, 0}, {640, 480}), dense({0, 2}, {640, 470})));
}

TEST(RunGenInputs, ARegionOutsideTheBufferIsCopied) {
  EXPECT_TRUE(rungen_copies_input(dense({0, 0}, {64, 64}), dense({-2, 0}, {64, 64})));
  EXPECT_TRUE(rungen_copies_input(dense({0, 0}, {64, 64}), dense({0, 0}, {64, 65})));
}

TEST(RunGenInputs, AZeroStrideInTheAnswerLeavesTheStrideFree) {
  std::vector<halide_dimension_t> queried = dense({0, 0}, {32, 32});
  queried[1].stride = 0;
  std::vector<halide_dimension_t> current = dense({0, 0}, {32, 32});
  current[1].stride = 40;  // padded rows
  EXPECT_FALSE(rungen_copies_input(current, queried));
}

TEST(RunGenInputs, DifferentDimensionCountsAreNotCopied) {
  EXPECT_FALSE(rungen_copies_input(dense({0, 0}, {8, 8}), dense({0}, {8})));
}

}  // namespace
}  // namespace protuner
