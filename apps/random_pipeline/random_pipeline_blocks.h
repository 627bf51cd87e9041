// The building blocks random pipelines are made of (random_pipeline_generator.cpp). Every
// Func a block creates is named "<kind>_<block number>", helpers "<kind>_<block number>_<part>"
// (e.g. "reduce_4_max"), so tests and dataset readers tell the kinds apart by the prefix of
// a Func's name. Header-only and free of Halide, so anyone may include it.
#pragma once

#include <array>
#include <string>

namespace protuner_random_pipeline {

// Image processing and deep learning, as Adams et al. 2019 sample them for training data.
constexpr std::array<const char *, 12> kBlockKinds = {
    "pointwise",   // unary or binary arithmetic (relu, products, min/max, select, exp, sqrt)
    "stencil",     // a kx x ky weighted sum of neighbours, kx, ky in {1, 3, 5, 7}
    "downsample",  // 2x in both dimensions: 2x2 box average, or subsampling
    "upsample",    // 2x in both dimensions: nearest neighbour, or bilinear
    "conv",        // k x k x Cin -> Cout convolution with weights from the `weights` input
    "pool",        // k x k max or average pooling with stride 1 or 2 (update definitions)
    "matmul",      // per channel, [K x H] times [W x K] over an RDom of K
    "reduce",      // RDom reductions: softmax and mean over channels, a max along columns
    "transpose",   // x and y swapped
    "lut",         // a 256-entry table indexed by a clamped (or uint8) value
    "cast",        // float <-> uint8/uint16/int16, uint8 <-> uint16
    "scan",        // a first-order recursive filter along x or y, one way or both (only
                   // with the generator's `scans` param: older seeds keep their pipelines)
};

// The block kind of a Func of a random pipeline ("conv_3" -> "conv"), or "" for the Funcs
// that belong to no block (the clamped input, the output).
inline std::string block_kind_of(const std::string &func_name) {
  const std::string prefix = func_name.substr(0, func_name.find('_'));
  for (const char *kind : kBlockKinds) {
    if (prefix == kind) return prefix;
  }
  return "";
}

}  // namespace protuner_random_pipeline
