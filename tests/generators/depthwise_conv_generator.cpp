// A depthwise 3x3 convolution layer (MobileNet style) over a batch of float activations
// stored (x, y, c, n), i.e. N x C x H x W with the batch outermost: per-channel weights, a bias
// and ReLU6, with zero padding from BoundaryConditions::constant_exterior. In the corpus for
// the 4-D batch layout, weight/bias buffers indexed by channel, and a padded input that a
// good schedule materializes per plane.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class DepthwiseConv : public Generator<DepthwiseConv> {
 public:
  Input<Buffer<float>> input{"input", 4};
  Input<Buffer<float>> weights{"weights", 3};  // (kx, ky, c)
  Input<Buffer<float>> bias{"bias", 1};
  Output<Buffer<float>> output{"output", 4};

  void generate() {
    padded = BoundaryConditions::constant_exterior(input, 0.0f);
    Expr acc = bias(c);
    for (int j = 0; j < 3; j++) {
      for (int i = 0; i < 3; i++) {
        acc += weights(i, j, c) * padded(x + i - 1, y + j - 1, c, n);
      }
    }
    conv(x, y, c, n) = acc;
    output(x, y, c, n) = clamp(conv(x, y, c, n), 0.0f, 6.0f);

    const int W = 112, H = 112, C = 64, N = 4;
    input.set_estimates({{0, W}, {0, H}, {0, C}, {0, N}});
    weights.set_estimates({{0, 3}, {0, 3}, {0, C}});
    bias.set_estimates({{0, C}});
    output.set_estimates({{0, W}, {0, H}, {0, C}, {0, N}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      // One (channel, image) plane per task; the padded plane is copied once into a
      // scratch buffer (dense loads, no per-tap bounds selects), then the 9 taps run on
      // vectors of x.
      Var plane{"plane"};
      output.fuse(c, n, plane).parallel(plane).vectorize(x, vec);
      padded.compute_at(output, plane).vectorize(_0, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
  Func padded, conv{"conv"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::DepthwiseConv, depthwise_conv)
