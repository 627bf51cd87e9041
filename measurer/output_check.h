// Is a candidate's output the right answer? A candidate schedule is compared with the
// reference output (the app's compute-root schedule, reference_output.h) and a difference
// makes it `wrong_output`, never fast. The comparison tolerates only what legitimately
// differs between schedules of one algorithm compiled without strict_float: LLVM may
// contract a*b+c into a fused multiply-add and vectorized code may reassociate, so float
// results move by a few ulps per operation; integers computed through floats then round
// differently by one; and algorithms that compare floats (thresholds, non-max
// suppression) may flip a few decisions.
//
// The policy, per output (all numbers in OutputTolerance):
//   - float outputs: a point is good when |got - expected| <= 1e-4 * |expected| +
//     1e-5 * max|expected over the whole output|. The absolute floor scales with the
//     output's magnitude, so values near zero (cancellation in long sums, e.g. a convolution
//     layer) are judged by the size of the terms that produced them, not by their own.
//     NaN matches only NaN; an infinity matches only the same infinity.
//   - integer outputs (and bool): a point is good when it differs by at most 1.
//   - outliers: at most 1e-4 of the points (rounded down) may break the rules above, for
//     the decisions that flip. On a 512x256 output that is 13 points, so a wrong boundary
//     (a whole row or column, hundreds of points) is caught; a bug that changes fewer points
//     than the allowance is not, which is the price of tolerating flipped decisions.
//   - the type and the shape (dimensions, mins, extents) must match exactly.
//
// A pipeline that quantizes (rounds floats to integer levels, then goes on computing)
// can turn one contracted multiply-add into a whole level's difference, and amplify it
// further on: a random pipeline's output of 12,288 points can have tens of them off by
// 1e-3 relative, where 1 point is allowed. So the measurer's child (measure_child.cpp)
// gets a second opinion on a candidate that differs: compiled with strict_float,
// candidate and reference must agree by the same rules. If they do, the candidate is
// right and is timed as it was compiled.
#pragma once

#include <optional>
#include <string>

#include <Halide.h>

namespace protuner {

// Names the checking policy in result-cache keys (result_cache.h), so results judged by
// an earlier policy are not served. Change it when the policy changes.
constexpr const char *kOutputCheckPolicy =
    "tolerance of output_check.h; strict_float second opinion";

struct OutputTolerance {
  double float_relative = 1e-4;           // of |expected| at the point
  double float_absolute_of_max = 1e-5;    // of max |expected| over the output
  double integer_units = 1;               // integers: allowed |got - expected|
  double outlier_fraction = 1e-4;         // points allowed to break the rules above
};

// Compares one output with its reference. nullopt when it passes; otherwise a message
// naming the output, how many points differ and how many were allowed, and the first bad
// coordinate with the expected and the actual value, e.g.
//   output 'blur_y': 256 of 131072 points differ beyond tolerance (13 allowed); first at
//   (511, 0): expected 0.5123, got 0.3301
std::optional<std::string> compare_output(const std::string &name,
                                          const Halide::Buffer<> &expected,
                                          const Halide::Buffer<> &got,
                                          const OutputTolerance &tolerance = {});

}  // namespace protuner
